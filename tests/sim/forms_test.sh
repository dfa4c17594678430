#!/usr/bin/env bash
# The simulator's two forms run the same game: each world (villager; arena
# with its targets; the guard's tree with its state carried back and its
# leaf outcomes; forager; goblins sharing attack tokens, their grants
# carried back as holdings), simulated from one seed as snapshots and as
# blocks of columns (--form=columnar, through the SDK's WriteBlock,
# ReadBlock, CarryTreeState and CarryHeld) against the real utilityd, must
# end with the same decisions, switches per agent per minute, survival,
# kills and attackers per mage.
#
#   tests/sim/forms_test.sh UTILITYD UTILITYD_SIM REPO_ROOT
set -euo pipefail
utilityd=$1 sim=$2 repo=$3
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
"$utilityd" --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
  --port_file="$work/ports" --config_dir="$repo/examples/behaviour_sets" \
  2>"$work/log" &
pid=$!
for _ in $(seq 200); do [ -s "$work/ports" ] && break; sleep 0.05; done
port=$(head -n 1 "$work/ports")
failed=0
for world in villager arena guard forager goblins; do
  for form in snapshots columnar; do
    "$sim" --target="127.0.0.1:$port" --world="$world" --form="$form" \
      --agents=40 --seed=5 --realtime=false --duration=40s \
      --report_every=10000s >"$work/$world.$form" 2>"$work/$world.$form.err"
  done
  grep -q "(as blocks: " "$work/$world.columnar" ||
    { echo "FAIL $world: the columnar run sent no block"; failed=1; }
  # The final line without the wall-clock rate.
  final() { grep '^final:' "$1" | sed -E 's/, [0-9.]+ decisions\/s overall//'; }
  a=$(final "$work/$world.snapshots") b=$(final "$work/$world.columnar")
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "FAIL $world: snapshots and blocks ended differently"
    echo "  snapshots: $a"; echo "  columnar:  $b"
    cat "$work/$world.snapshots.err" "$work/$world.columnar.err"
    failed=1
  elif [ -s "$work/$world.columnar.err" ]; then
    echo "FAIL $world: the columnar run reported errors"
    cat "$work/$world.columnar.err"
    failed=1
  else
    echo "ok $world: $b"
  fi
done
exit $failed
