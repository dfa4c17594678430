#!/usr/bin/env bash
# Instructions per decision on the engine's batch path, counted by
# callgrind: repeatable whatever else the machine is doing, so changes to
# the engine can be compared exactly. Counts only inside
# BatchDecider::Decide (the arena set of seed 002, batches of 256).
#
#   bench/instructions.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" \
  --toggle-collect='utilityd::engine::BatchDecider::Decide*' \
  "$build/bench/engine_bench" --benchmark_filter='BM_EngineBatch/explain_none/256' \
  --benchmark_min_time=0.05 >/dev/null 2>&1
total=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
# Every call of BatchDecider::Decide decided 256 agents.
calls=$(callgrind_annotate --tree=caller "$out" | grep 'BatchDecider::Decide(' |
  grep -o '([0-9,]*x)' | tr -d '(x,)' | sort -n | head -1)
echo "engine batch path: $((total / (calls * 256))) instructions per arena decision" \
  "($total over $calls batches of 256)"
