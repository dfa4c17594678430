#!/usr/bin/env bash
# Seed 004's experiment: how the commitment bonus changes switches per minute.
# For each bonus, serves a copy of eat_hide_wander.yaml with that bonus and
# runs the forager world (20 agents, 10 Hz, 5 simulated minutes, seeded
# sensor noise) against it. Prints a Markdown table.
#
#   examples/sim/commitment_experiment.sh [BUILD_DIR] [NOISE]
set -euo pipefail
build=${1:-build}
noise=${2:-0.02}
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "| commitment bonus | switches per agent per minute |"
echo "|---|---|"
for bonus in 0 0.1 0.2 0.4; do
  mkdir -p "$work/$bonus"
  sed "s/commitment_bonus: 0.2/commitment_bonus: $bonus/" \
    examples/behaviour_sets/eat_hide_wander.yaml > "$work/$bonus/eat_hide_wander.yaml"
  grep -q "commitment_bonus: $bonus\$" "$work/$bonus/eat_hide_wander.yaml"
  rm -f "$work/port"
  "$build/server/utilityd" --config_dir="$work/$bonus" \
    --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
    --port_file="$work/port" 2>"$work/server.log" &
  server=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  line=$("$build/examples/sim/utilityd-sim" --target="127.0.0.1:$(head -1 "$work/port")" \
    --world=forager --agents=20 --hz=10 --duration=300s --realtime=false \
    --noise="$noise" --seed=7 | tail -1)
  kill "$server"; wait "$server" || true
  rate=$(sed -n 's/.*switches\/agent\/min=\([0-9.]*\).*/\1/p' <<<"$line")
  printf "| %s%% | %s |\n" "$(awk "BEGIN{print $bonus*100}")" "$rate"
done
