#!/usr/bin/env bash
# Seed 004's experiment: how the commitment bonus changes switches per minute.
# For each bonus, serves a copy of eat_hide_wander.yaml with that bonus and
# runs the forager world (20 agents, 10 Hz, 5 simulated minutes, seed 7)
# against it, at sensor noise 0.02 and 0.01. Prints a Markdown table.
#
#   examples/sim/commitment_experiment.sh [BUILD_DIR]               print
#   examples/sim/commitment_experiment.sh BUILD_DIR --write-docs    and put it
#                                                  in docs/SIMULATOR.md
#   examples/sim/commitment_experiment.sh BUILD_DIR --check         and fail
#       unless switching falls strictly as the bonus grows, at both noise
#       levels, and docs/SIMULATOR.md shows these figures (within 5%)
set -euo pipefail
build=${1:-build}
mode=${2:-}
bonuses=(0 0.1 0.2 0.4)
noises=(0.02 0.01)
docs=docs/SIMULATOR.md
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# Switches per agent per minute for one bonus and noise.
rate() {
  local bonus=$1 noise=$2 dir="$work/$1"
  mkdir -p "$dir"
  sed "s/commitment_bonus: 0.2/commitment_bonus: $bonus/" \
    examples/behaviour_sets/eat_hide_wander.yaml >"$dir/eat_hide_wander.yaml"
  grep -q "commitment_bonus: $bonus\$" "$dir/eat_hide_wander.yaml"
  rm -f "$work/port"
  "$build/server/utilityd" --config_dir="$dir" \
    --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
    --port_file="$work/port" 2>"$work/server.log" &
  server=$!
  for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || { echo "utilityd did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  local line
  line=$("$build/examples/sim/utilityd-sim" \
    --target="127.0.0.1:$(head -1 "$work/port")" --world=forager --agents=20 \
    --hz=10 --duration=300s --realtime=false --noise="$noise" --seed=7 | tail -1)
  kill "$server"
  wait "$server" || true
  sed -n 's/.*switches\/agent\/min=\([0-9.]*\).*/\1/p' <<<"$line"
}

declare -A rates
table="| commitment bonus | switches/agent/min, noise ${noises[0]} | noise ${noises[1]} |
|---|---|---|"
for bonus in "${bonuses[@]}"; do
  row="| $(awk "BEGIN{print $bonus*100}")% |"
  for noise in "${noises[@]}"; do
    rates[$bonus,$noise]=$(rate "$bonus" "$noise")
    row+=" ${rates[$bonus,$noise]} |"
  done
  table+=$'\n'"$row"
done
echo "$table"

case "$mode" in
  --write-docs)
    # Replaces the table that follows the experiment's heading.
    awk -v table="$table" '
      /^\| commitment bonus \|/ { print table; skipping = 1; next }
      skipping && /^\|/ { next }
      { skipping = 0; print }' "$docs" >"$work/docs" && cp "$work/docs" "$docs"
    echo "wrote the table into $docs"
    ;;
  --check)
    status=0
    for noise in "${noises[@]}"; do
      for i in 1 2 3; do
        prev=${rates[${bonuses[i-1]},$noise]} cur=${rates[${bonuses[i]},$noise]}
        if ! awk "BEGIN{exit !($cur < $prev)}"; then
          echo "FAIL noise $noise: bonus ${bonuses[i]} gives $cur switches/agent/min, not fewer than ${bonuses[i-1]}'s $prev" >&2
          status=1
        fi
      done
    done
    # The documented table, row by row, within 5% of what was measured.
    documented=$(grep -A$((${#bonuses[@]} + 1)) '^| commitment bonus |' "$docs" | tail -n ${#bonuses[@]})
    measured=$(tail -n ${#bonuses[@]} <<<"$table")
    if ! paste -d'\n' <(echo "$documented") <(echo "$measured") | awk -F'|' '
        NR % 2 == 1 { for (i = 3; i < NF; i++) doc[i] = $i + 0; next }
        { for (i = 3; i < NF; i++) {
            m = $i + 0; d = doc[i]
            if (m == 0 && d == 0) continue
            if (d == 0 || (m - d) / d > 0.05 || (d - m) / d > 0.05) bad = 1 } }
        END { exit bad }'; then
      echo "FAIL $docs does not show these figures; run: $0 $build --write-docs" >&2
      status=1
    fi
    [ $status -eq 0 ] && echo "ok: switching falls as the bonus grows; $docs agrees"
    exit $status
    ;;
esac
