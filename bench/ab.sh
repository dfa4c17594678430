#!/usr/bin/env bash
# Compares two utilityd binaries under the same load, alternating: blocks
# of 1,024 (the columnar form) and snapshots of 256 (the full form), each
# ROUNDS times (A then B, then B then A), and prints each one's median
# decisions/s, the ratio of the medians B ÷ A and the median of the
# rounds' own ratios. Both servers run on the example sets on loopback; only one is
# loaded at a time.
#
#   bench/ab.sh BEFORE_BINARY AFTER_BINARY [BUILD_DIR]
#       (DURATION=10s WARMUP=2s ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1 b=$2 build=${3:-build}
duration=${DURATION:-10s}
warmup=${WARMUP:-2s}
rounds=${ROUNDS:-5}
ctl="$build/ctl/utilityctl"
source bench/servers.sh

load=(--streams 2 --in_flight 4 --connections 2)
start a "$a"
start b "$b"
for round in $(seq "$rounds"); do
  echo "== round $round of $rounds" >&2
  # A first in odd rounds, B first in even ones: a drift in the machine's
  # load favours neither.
  order="a b"
  [ $((round % 2)) -eq 0 ] && order="b a"
  for name in $order; do
    bench "$name" "$name.blocks1024" "${load[@]}" --batch 1024 --form columnar
  done
  for name in $order; do
    bench "$name" "$name.snapshots256" "${load[@]}" --batch 256
  done
done

python3 - "$work" "$a" "$b" <<'PY'
import json, statistics, sys
work, a, b = sys.argv[1:4]
def rates(name, shape):
    return [json.loads(l)["decisions_per_second"] for l in open(f"{work}/{name}.{shape}.jsonl")]
print(f"A = {a}\nB = {b}")
print(f"{'load':<28}{'A decisions/s':>16}{'B decisions/s':>16}{'B / A':>8}")
for shape, label in [("blocks1024", "blocks of 1,024 (columnar)"),
                     ("snapshots256", "snapshots, 256 a batch")]:
    ra, rb = rates("a", shape), rates("b", shape)
    ma, mb = statistics.median(ra), statistics.median(rb)
    paired = statistics.median(y / x for x, y in zip(ra, rb))
    print(f"{label:<28}{ma/1e6:>14.2f} M{mb/1e6:>14.2f} M{mb/ma:>8.3f}"
          f"   (rounds' ratios: median {paired:.3f})")
    print(f"{'  runs A':<28}" + " ".join(f"{r/1e6:.2f}" for r in ra))
    print(f"{'  runs B':<28}" + " ".join(f"{r/1e6:.2f}" for r in rb))
PY
