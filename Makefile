# The two commands a new user needs:
#   make run    install what is missing, build, serve the bundled examples and
#               drive the service with the game-server simulator (Ctrl-C stops)
#   make test   install what is missing, build, and run every test (ctest)
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= 2
UTILITYCTL := $(BUILD_DIR)/client_sdk/utilityctl

.PHONY: all deps configure build test run experiment bench format clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

run: build
	$(UTILITYCTL) validate examples/behaviour_sets
	$(UTILITYCTL) decide --set arena_mage --scenario "Staff empty, in cover" --explain --format table
	./scripts/run-demo.sh $(BUILD_DIR)

experiment: build
	./examples/sim/commitment_experiment.sh $(BUILD_DIR)

bench: build
	$(BUILD_DIR)/bench/engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
