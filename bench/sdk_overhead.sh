#!/usr/bin/env bash
# What the client contract (docs/CLIENTS.md) costs with no fault: the C++
# SDK of BASE (before the contract) against this checkout's, both running
# bench/sdk_stream_bench.cc against one utilityd (this checkout's, on the
# example sets), alternating, ROUNDS times each: flat out (8 batches
# unanswered) for throughput, and one batch at a time for the unloaded
# round trip. Prints each SDK's median figures and the ratios new ÷ old.
#
#   bench/sdk_overhead.sh [BASE] [BUILD_DIR]
#       (BASE 06bc4b7, the commit before the contract; AGENTS=256 SECONDS_EACH=5
#        ROUNDS=5)
# The first run builds BASE's SDK in BUILD_DIR/sdk-base (minutes; ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=${1:-06bc4b7}
build=${2:-build}
agents=${AGENTS:-256}
seconds=${SECONDS_EACH:-5}
rounds=${ROUNDS:-5}
new_bench="$build/bench/sdk_stream_bench"
[ -x "$new_bench" ] || { echo "build first: make build" >&2; exit 1; }

# The old SDK, with this checkout's benchmark source added to its tree.
old=$(realpath -m "$build/sdk-base")
if [ ! -d "$old/src" ]; then
  git worktree prune
  git worktree add --detach "$old/src" "$base_rev" >&2
fi
git -C "$old/src" checkout --quiet --detach "$base_rev"
cp bench/sdk_stream_bench.cc "$old/src/bench/"
if ! grep -q sdk_stream_bench "$old/src/bench/CMakeLists.txt"; then
  cat >> "$old/src/bench/CMakeLists.txt" <<'CMAKE'
add_executable(sdk_stream_bench sdk_stream_bench.cc)
target_link_libraries(sdk_stream_bench PRIVATE utilityd::client
  absl::flags absl::flags_parse)
CMAKE
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/utilityd/ccache}
  export CCACHE_BASEDIR="$old/src" CCACHE_NOHASHDIR=1
fi
cmake -S "$old/src" -B "$old/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >/dev/null
cmake --build "$old/build" -j "${JOBS:-2}" --target sdk_stream_bench >&2
old_bench="$old/build/bench/sdk_stream_bench"

source bench/servers.sh
start server "$build/server/utilityd"
target="127.0.0.1:$server_grpc"
for round in $(seq "$rounds"); do
  echo "== round $round of $rounds" >&2
  order="old new"
  [ $((round % 2)) -eq 0 ] && order="new old"
  for in_flight in 8 1; do
    for name in $order; do
      bin=$old_bench
      [ "$name" = new ] && bin=$new_bench
      "$bin" --target "$target" --agents "$agents" --seconds "$seconds" \
        --in_flight "$in_flight" --label "$name" >> "$work/$name.$in_flight.jsonl"
    done
  done
done

/usr/bin/env python3 - "$work" "$base_rev" "$(git rev-parse --short HEAD)" "$agents" <<'PY'
import json, statistics, sys
work, base, head, agents = sys.argv[1:5]
def runs(name, k):
    return [json.loads(l) for l in open(f"{work}/{name}.{k}.jsonl")]
def med(rs, key):
    return statistics.median(r[key] for r in rs)
print(f"old = SDK at {base}; new = SDK at {head}; {agents} agents a batch, one stream, one replica")
print(f"{'load':<26}{'figure':<16}{'old':>12}{'new':>12}{'new / old':>11}")
for k, label in [("8", "flat out, 8 in flight"), ("1", "one batch at a time")]:
    o, n = runs("old", k), runs("new", k)
    for key, name in [("batches_per_second", "batches/s"),
                      ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms")]:
        mo, mn = med(o, key), med(n, key)
        print(f"{label:<26}{name:<16}{mo:>12.2f}{mn:>12.2f}{mn / mo:>11.3f}")
        label = ""
PY
