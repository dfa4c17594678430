# The two commands a new user needs:
#   make run    install what is missing, build, serve the bundled examples and
#               drive the service with the game-server simulator (Ctrl-C stops)
#   make test   install what is missing, build, and run every test (ctest)
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= 2
UTILITYCTL := $(BUILD_DIR)/ctl/utilityctl

# Every build tree compiles through ccache (installed by the install
# script) with its cache outside the clone, so a fresh clone in another
# folder (CI) reuses what earlier builds on this machine compiled. The base
# directory makes paths inside the clone relative, hence equal across
# clones; debug information then names the clone that first compiled it.
CCACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/utilityd/ccache
export CCACHE_DIR
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 8G
COMMA := ,
LAUNCHER = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# Debug information stays out of the executables' bulk. About a hundred
# test executables link the same libraries, and whole copies of their debug
# information made a tree 6 GB (and once filled a CI run's disk). The GCC
# tree splits each object's into a .dwo file beside it (gdb and perf read
# them) and compresses what the linker still copies in: under 2 GB, and
# each link is faster. The sanitizer trees (clang) keep line tables with
# inlined frames, which is what their reports print (clang 14's
# llvm-symbolizer drops inlined frames when it reads split DWARF). Plain
# cmake builds keep the compiler's usual debug information.
DEBUG_INFO = -DCMAKE_CXX_FLAGS="$(1) -gsplit-dwarf" \
  -DCMAKE_EXE_LINKER_FLAGS="$(2) -Wl,--compress-debug-sections=zlib"
SANITIZER_DEBUG_INFO = -DCMAKE_CXX_FLAGS="$(1)" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_EXE_LINKER_FLAGS="$(2) -Wl,--compress-debug-sections=zlib"

.PHONY: ccache-stats all deps configure build test test-container sanitize-configure fuzz-build test-sanitize test-tsan perf fuzz fuzz-smoke run experiment bench format clean screenshots

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(LAUNCHER) \
	  $(call DEBUG_INFO) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
	@command -v dotnet >/dev/null || echo "make test: the C# SDK's suite was skipped:" \
	  "dotnet is not on PATH (Debian 12 packages no .NET SDK; client_sdk/csharp/README.md)"

# The image from the Dockerfile as shipped, built and run with podman: size,
# user, read-only root, health, decide, metrics, inspector, reload, SIGTERM,
# the compose file's services (docs/CONTAINER.md). Minutes on a first run,
# which also makes the cached Debian 12 base images.
test-container: build
	@./scripts/install-deps.sh container
	BUILD_DIR=$(BUILD_DIR) tests/container/container_test.sh

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its
# own build tree, compiled by clang (a tree configured with another compiler
# is configured afresh): with the sanitizers on it compiles this
# project's files 1.2 to 3.3 times faster than GCC, and the same tree builds
# the libFuzzer targets (the libraries carry the fuzzers' coverage
# instrumentation, which the tests' runtime ignores). Left out: what runs
# none of the project's C++ under them (repository checks, the engine-only
# build, the Go, C# and TypeScript SDKs' builds and suites, the inspector's
# Node unit tests, the Node block test, which needs the TypeScript SDK
# built); the install tests (they link outside, uninstrumented projects
# against the instrumented libraries); and the TypeScript conformance suite,
# whose scenarios the C++ SDK's suite drives through the same sanitized
# server.
SANITIZE_DIR ?= build-sanitize
SANITIZE_FLAGS := -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer
SANITIZE_SKIP := install_find_package_consumer|install_client_sdk|go_.*|conformance_go|csharp_.*|conformance_cs|conformance_ts|engine_builds_with_abseil_only|layers_depend_only_downward|product_functions_within_100_lines|tests_readme_names_every_suite|inspector_modules|node_grpc_blocks|ts_sdk_.*|colyseus_.*
sanitize-configure: deps
	@cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER) \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DUTILITYD_BUILD_BENCH=OFF -DUTILITYD_BUILD_FUZZERS=ON \
	  $(call SANITIZER_DEBUG_INFO,$(SANITIZE_FLAGS),-fsanitize=address$(COMMA)undefined) >/dev/null

test-sanitize: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) \
	    -E '^($(SANITIZE_SKIP))$$'

# ThreadSanitizer over the server's own concurrency: histogram tallies
# flushed into prometheus-cpp from several threads, the decision log's queue
# and writer, the live feed's ring, the logger. Only these: Debian's
# protobuf changes MapFieldBase's layout under TSan (its headers add fields
# the uninstrumented library lacks), so code using
# protobuf maps across the library boundary crashes, and gRPC and Abseil are
# uninstrumented; see docs/RELIABILITY.md.
TSAN_DIR ?= build-tsan
TSAN_TESTS := metrics_test decision_log_test recent_decisions_test log_test
# Cases that load behaviour sets (protobuf maps) cannot run under TSan here.
TSAN_SKIP := -*FromTheKeptSnapshot*:*KeepsNothingOfItsLastSample*
test-tsan: deps
	@cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER) \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DUTILITYD_BUILD_BENCH=OFF \
	  $(call SANITIZER_DEBUG_INFO,-fsanitize=thread -fno-omit-frame-pointer,-fsanitize=thread) >/dev/null
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target $(TSAN_TESTS)
	@for t in $(TSAN_TESTS); do \
	  echo "== $$t (ThreadSanitizer)"; \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_DIR)/tests/$$t \
	    --gtest_brief=1 --gtest_filter=$(TSAN_SKIP) || exit 1; \
	done

# libFuzzer targets (clang, with ASan and UBSan), built in the sanitizer
# tree. `make fuzz` runs each for FUZZ_SECONDS; `make fuzz-smoke` for a few
# seconds each (CI). Corpora are copied, the seeds in tests/fuzz/corpus stay.
FUZZ_DIR := $(SANITIZE_DIR)
FUZZ_SECONDS ?= 60
FUZZERS := behaviour_set_fuzzer decide_request_fuzzer metrics_fuzzer tree_state_fuzzer admin_router_fuzzer
fuzz-build: sanitize-configure
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target $(FUZZERS)

fuzz: fuzz-build
	@for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f && cp -n tests/fuzz/corpus/$$f/* $(FUZZ_DIR)/corpus/$$f/ 2>/dev/null; \
	  echo "== $$f ($(FUZZ_SECONDS) s)"; \
	  $(FUZZ_DIR)/tests/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    $(FUZZ_DIR)/corpus/$$f || exit 1; \
	done

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-10}

run: build
	$(UTILITYCTL) validate examples/behaviour_sets
	$(UTILITYCTL) decide --set arena_mage --scenario "Staff empty, in cover" --explain --format table
	./scripts/run-demo.sh $(BUILD_DIR)

experiment: build
	./examples/sim/commitment_experiment.sh $(BUILD_DIR) --write-docs

bench: build
	$(BUILD_DIR)/bench/engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# The performance targets, measured: engine, service against the echo
# baseline, latency, memory (docs/PERFORMANCE.md). About three minutes.
perf: build
	./bench/compare.sh $(BUILD_DIR)

# Refreshes the inspector screenshots in docs/images from the browser test.
screenshots: build
	ctest --test-dir $(BUILD_DIR) -R inspector_browser --output-on-failure
	cp $(BUILD_DIR)/tests/screenshots/*.png docs/images/

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

# What the compiler cache holds and how often it hit (.ci/run prints it).
ccache-stats:
	@echo "ccache ($(CCACHE_DIR)):"; ccache --show-stats | grep -E 'Hits|Misses|Cache size' || true
