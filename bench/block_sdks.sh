#!/usr/bin/env bash
# A 1,024-row block a batch, one at a time, through the C++ SDK
# (bench/sdk_stream_bench.cc --block_rows), the Go SDK (client_sdk/go
# BenchmarkBlock1024) and, where dotnet is on PATH, the C# SDK
# (bench/dotnet_block_bench) against one utilityd, alternating ROUNDS
# times: each one's median decisions/s, allocations per batch (every thread
# of the process: C++ counts operator new, Go -benchmem) and bytes
# allocated per batch (C++ the bytes operator new was asked for, C#
# GC.GetTotalAllocatedBytes; C# also its game thread's share).
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
sdks="cpp go"
if command -v dotnet >/dev/null; then
  scripts/csharp-sdk.sh "$build" build >/dev/null
  sdks="$sdks csharp"
fi
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
  if [[ $sdks == *csharp* ]]; then
    dotnet "$build/dotnet/bin/dotnet_block_bench/release/dotnet_block_bench.dll" \
      --target="$target" --rows=1024 --seconds="$seconds" >> "$work/csharp.jsonl"
  fi
done
/usr/bin/env python3 - "$work" $sdks <<'PY'
import json, statistics, sys
work, sdks = sys.argv[1], sys.argv[2:]
rows = {k: [json.loads(l) for l in open(f"{work}/{k}.jsonl")] for k in sdks}
def med(k, f):
    values = [r[f] for r in rows[k] if f in r]
    return statistics.median(values) if values else float("nan")
names = {"cpp": "C++", "go": "Go", "csharp": "C#"}
print("1,024-row block a batch, one at a time, one replica")
print(f"{'SDK':<6}{'decisions/s':>14}{'allocations/batch':>20}{'bytes/batch':>14}{'game thread bytes':>20}")
for k in sdks:
    print(f"{names[k]:<6}{med(k, 'decisions_per_second'):>14,.0f}{med(k, 'allocations_per_batch'):>20.1f}"
          f"{med(k, 'bytes_per_batch'):>14,.0f}{med(k, 'game_thread_bytes_per_batch'):>20.1f}")
for k in sdks[1:]:
    print(f"{names[k]} / C++ decisions/s: {med(k, 'decisions_per_second') / med('cpp', 'decisions_per_second'):.3f}")
PY
