#!/usr/bin/env bash
# make run: serves the bundled behaviour sets with utilityd and drives it
# with the game-server simulator, printing live figures. Ctrl-C stops both
# (the server drains and exits 0).
#
#   scripts/run-demo.sh [BUILD_DIR]      (PORT=50051 AGENTS=100 HZ=10)
set -euo pipefail
build=${1:-build}
port=${PORT:-50051}
http_port=${HTTP_PORT:-8080}
agents=${AGENTS:-100}
hz=${HZ:-10}
work=$(mktemp -d)

"$build/server/utilityd" --config_dir=examples/behaviour_sets \
  --grpc_address="127.0.0.1:$port" --http_address="127.0.0.1:$http_port" \
  --port_file="$work/port" \
  2>"$work/utilityd.log" &
server=$!
stop() {
  trap - INT TERM EXIT
  [ -n "${sim:-}" ] && kill -INT "$sim" 2>/dev/null && wait "$sim" 2>/dev/null
  kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
  echo "utilityd stopped (log: $work/utilityd.log)"
}
trap stop INT TERM EXIT

for _ in $(seq 200); do
  [ -s "$work/port" ] && break
  if ! kill -0 "$server" 2>/dev/null; then
    cat "$work/utilityd.log" >&2
    echo "utilityd did not start (are ports $port and $http_port free? try" \
      "PORT=50052 HTTP_PORT=8081 make run)" >&2
    exit 1
  fi
  sleep 0.05
done
echo "utilityd serving examples/behaviour_sets on 127.0.0.1:$port"
echo "  inspector: http://127.0.0.1:$http_port/ui/  (tune the sets live; the feed shows the simulator's decisions)"
echo "  metrics: http://127.0.0.1:$http_port/metrics  status: http://127.0.0.1:$http_port/api/v1/status"
echo "  try: $build/ctl/utilityctl decide --target=127.0.0.1:$port --set arena_mage --format table"
echo "  Ctrl-C stops the simulator and the server"
"$build/examples/sim/utilityd-sim" --target="127.0.0.1:$port" --world=all \
  --agents="$agents" --hz="$hz" &
sim=$!
wait "$sim" || true
