#!/usr/bin/env bash
# Instructions per decision on the engine's batch path, counted by
# callgrind: repeatable whatever else the machine is doing, so changes to
# the engine can be compared exactly. Counts only inside
# BatchDecider::Decide* (the arena set of seed 002, batches of 256; BENCH
# names another engine_bench case ending in its batch size, e.g.
# BM_EngineFactorMajor/1024). UTILITYD_SIMD_TARGET=AVX2 (SSE4, ...) counts
# one SIMD target; valgrind runs no AVX-512, so the best it counts is AVX2.
#
#   [BENCH=...] [UTILITYD_SIMD_TARGET=...] bench/instructions.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
bench=${BENCH:-BM_EngineBatch/explain_none/256}
rows=${bench##*/}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" \
  --toggle-collect='utilityd::engine::BatchDecider::Decide*' \
  "$build/bench/engine_bench" --benchmark_filter="^$bench\$" \
  --benchmark_min_time=0.05 >/dev/null 2>&1
total=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
# Every call of BatchDecider::Decide* decided $rows agents, in one call of
# the pass's Score (counted there: a Decide* may tail-call the pass).
calls=$(callgrind_annotate --tree=caller "$out" | grep 'BatchPass::Score(' |
  grep -o '([0-9,]*x)' | tr -d '(x,)' | sort -n | head -1)
echo "$bench: $((total / (calls * rows))) instructions per arena decision" \
  "($total over $calls batches of $rows)"
