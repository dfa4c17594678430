# Sourced by the benchmark scripts: a scratch directory ($work) removed on
# exit, servers started on free ports on loopback, stopped on exit, and
# load runs against them (utilityctl bench: $ctl, $duration, $warmup).

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# start NAME BINARY FLAGS... : starts a server (utilityd or utilityd-echo)
# on the example sets and free ports; sets ${NAME}_grpc and ${NAME}_http.
start() {
  local name=$1 binary=$2
  shift 2
  rm -f "$work/$name.ports"
  "$binary" --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
    --port_file="$work/$name.ports" --config_dir=examples/behaviour_sets \
    "$@" 2>"$work/$name.log" &
  pids+=($!)
  for _ in $(seq 200); do
    [ -s "$work/$name.ports" ] && break
    sleep 0.05
  done
  [ -s "$work/$name.ports" ] || { cat "$work/$name.log" >&2; exit 1; }
  local ports
  mapfile -t ports < "$work/$name.ports"
  printf -v "${name}_grpc" '%s' "${ports[0]}"
  printf -v "${name}_http" '%s' "${ports[1]}"
  sleep 0.5  # sets loaded
}

# bench NAME OUT ARGS... : one utilityctl bench run against server NAME,
# its JSON line appended to $work/OUT.jsonl.
bench() {
  local name=$1 out=$2
  shift 2
  local grpc=${name}_grpc http=${name}_http
  "$ctl" bench --target "127.0.0.1:${!grpc}" --admin "127.0.0.1:${!http}" \
    --duration "$duration" --warmup "$warmup" --format json "$@" \
    >> "$work/$out.jsonl"
}
