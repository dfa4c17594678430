#!/usr/bin/env bash
# A 1,024-row block a batch, one at a time, through the C++ SDK
# (bench/sdk_stream_bench.cc --block_rows) and the Go SDK
# (client_sdk/go BenchmarkBlock1024) against one utilityd, alternating
# ROUNDS times: each one's median decisions/s and allocations per batch
# (every thread of the process: C++ counts operator new, Go -benchmem).
#
#   bench/block_sdks.sh [BUILD_DIR]      (ROUNDS=5 SECONDS_EACH=5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
seconds=${SECONDS_EACH:-5}
source bench/servers.sh
start server "$build/server/utilityd"
target="127.0.0.1:$server_grpc"
# Compiled once, before the rounds.
scripts/go-sdk.sh "$build" client_sdk/go test -c -o "$work/go.test" . >/dev/null
for round in $(seq "$rounds"); do
  echo "== round $round of $rounds" >&2
  "$build/bench/sdk_stream_bench" --target "$target" --block_rows 1024 \
    --seconds "$seconds" --label cpp >> "$work/cpp.jsonl"
  (cd client_sdk/go && UTILITYD_TARGET=$target "$work/go.test" -test.run '^$' \
     -test.bench Block1024 -test.benchmem -test.benchtime "${seconds}s") \
    | awk '/^BenchmarkBlock1024/ {
        for (i = 1; i <= NF; i++) {
          if ($(i+1) == "decisions/s") d = $i
          if ($(i+1) == "allocs/op") a = $i
        }
        printf "{\"decisions_per_second\": %s, \"allocations_per_batch\": %s}\n", d, a }' \
    >> "$work/go.jsonl"
done
/usr/bin/env python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
rows = {k: [json.loads(l) for l in open(f"{work}/{k}.jsonl")] for k in ("cpp", "go")}
med = lambda k, f: statistics.median(r[f] for r in rows[k])
print("1,024-row block a batch, one at a time, one replica")
print(f"{'SDK':<6}{'decisions/s':>14}{'allocations/batch':>20}")
for k, name in (("cpp", "C++"), ("go", "Go")):
    print(f"{name:<6}{med(k, 'decisions_per_second'):>14,.0f}{med(k, 'allocations_per_batch'):>20.1f}")
print(f"Go / C++ decisions/s: {med('go', 'decisions_per_second') / med('cpp', 'decisions_per_second'):.3f}")
PY
