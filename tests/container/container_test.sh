#!/usr/bin/env bash
# make test-container: builds the image from the repository's Dockerfile as
# shipped and runs it the way operators do, with podman (runc, cgroupfs,
# netavark) and base images made locally (tests/container/base_images.sh),
# since no Docker engine or registry is reachable here.
#
# Checks, each named in the output:
#   image    builds; runtime image <= 150 MB, runs as uid 10001, holds no
#            compiler and no test tools, keeps its HEALTHCHECK
#   run      read-only root filesystem; utilityctl health and decide from the
#            host through published ports; /metrics; the inspector (locked
#            without the token, open with it); a behaviour set edited in the
#            mounted directory is reloaded; the HEALTHCHECK command passes
#            inside; SIGTERM stops it cleanly within the drain grace
#   kube     deploy/k8s as shipped, played with podman kube play: three
#            replicas of the Deployment from this image, the ConfigMap as
#            the sets directory, the token Secret; the C++ SDK's round robin
#            over the pods (tests/container/fleet_load); a ConfigMap edit
#            reloaded by every replica; a pod removed under load (readiness
#            503 while it drains, 0 batches lost or duplicated) and brought
#            back (it takes calls again)
#   compose  deploy/compose's utilityd and simulator come up with
#            podman-compose and the simulator's decisions show in utilityd's
#            metrics
#
# Figures (build time, image size) go to $BUILD_DIR/container-report.txt.
# Skips, saying why, only where podman cannot run containers at all.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$root/${BUILD_DIR:-build}
utilityctl=$build_dir/ctl/utilityctl
image=localhost/utilityd:0.1.0
max_image_mb=150
drain_grace_s=5
tag=utilityd-ct-$$

work=$(mktemp -d /tmp/utilityd-container-test.XXXXXX)
report=$build_dir/container-report.txt
export CONTAINERS_CONF=$work/containers.conf
cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
[network]
network_backend = "netavark"
EOF

failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL $*" >&2; exit 1; }
check() {  # check NAME COMMAND...: runs COMMAND, PASS or FAIL named NAME
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

cleanup() {
  podman rm -f -t 0 "$tag" >/dev/null 2>&1 || true
  for r in 0 1 2; do
    if [ -f "$work/kube-$r.yaml" ]; then
      podman kube down "$work/kube-$r.yaml" >/dev/null 2>&1 || true
    fi
  done
  podman volume rm -f utilityd-behaviour-sets utilityd-admin-token >/dev/null 2>&1 || true
  podman secret rm utilityd-admin-token >/dev/null 2>&1 || true
  if [ -n "${compose_up:-}" ]; then
    (cd "$root/deploy/compose" && podman-compose -p "$tag" down -t 2 \
       >/dev/null 2>&1) || true
    podman network rm -f "${tag}_default" >/dev/null 2>&1 || true
  fi
  [ -n "${made_token:-}" ] && rm -f "$root/deploy/compose/admin_token"
  rm -rf "$work"
}
trap cleanup EXIT

# --- can podman run here at all? ------------------------------------------
for tool in podman runc podman-compose debootstrap curl catatonit; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "$tool is missing: run scripts/install-deps.sh container"
done
[ -x "$utilityctl" ] || die "$utilityctl is missing: run make build first"
fleet_load=$build_dir/tests/fleet_load
[ -x "$fleet_load" ] || die "$fleet_load is missing: run make build first"
if ! info=$(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.NetworkBackend}}' 2>&1); then
  echo "SKIP make test-container: podman cannot run here: $info"
  exit 0
fi
echo "podman $(podman version --format '{{.Client.Version}}'): runtime and network $info"

"$root/tests/container/base_images.sh"
if ! out=$(podman run --rm --pull=never --network=none \
             docker.io/library/debian:12-slim true 2>&1); then
  echo "SKIP make test-container: podman cannot start a container here: $out"
  exit 0
fi

# --- image ----------------------------------------------------------------
echo "image: podman build --format docker -f Dockerfile (log: $work/build.log)"
start=$(date +%s)
if ! podman build --pull=never --format docker -t "$image" -f "$root/Dockerfile" \
       "$root" >"$work/build.log" 2>&1; then
  tail -40 "$work/build.log" >&2
  die "image: the Dockerfile does not build"
fi
build_s=$(( $(date +%s) - start ))
cached=$(grep -c -- '--> Using cache' "$work/build.log" || true)
pass "image: built in ${build_s} s ($cached cached steps)"

size=$(podman image inspect --format '{{.Size}}' "$image")
size_mb=$(( (size + 999999) / 1000000 ))
base_size=$(podman image inspect --format '{{.Size}}' docker.io/library/debian:12-slim)
base_mb=$(( (base_size + 999999) / 1000000 ))
if [ "$size_mb" -le "$max_image_mb" ]; then
  pass "image: runtime image ${size_mb} MB (base ${base_mb} MB) <= ${max_image_mb} MB"
else
  fail "image: runtime image ${size_mb} MB is over ${max_image_mb} MB"
fi
user=$(podman image inspect --format '{{.Config.User}}' "$image")
[ "$user" = 10001 ] && pass "image: USER 10001" || fail "image: USER is '$user', not 10001"
health_cmd=$(podman image inspect --format '{{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{end}}' "$image")
case "$health_cmd" in
  *utilityctl*health*) pass "image: HEALTHCHECK kept ($health_cmd)" ;;
  *) fail "image: no HEALTHCHECK in the image config (got '$health_cmd')" ;;
esac
# No compiler, build tool or test tool on the image's PATH or in dpkg.
leftovers=$(podman run --rm --pull=never --network=none --no-healthcheck --entrypoint sh "$image" -c '
  for t in cc gcc g++ c++ clang cmake ninja make ld as node npm chromium nginx prometheus; do
    command -v "$t" >/dev/null 2>&1 && echo "$t"
  done
  for p in gcc-12 g++-12 cmake libgrpc++-dev libgtest-dev nodejs chromium nginx prometheus; do
    dpkg-query -W -f="\${db:Status-Status}" "$p" 2>/dev/null | grep -q installed && echo "package $p"
  done; true')
[ -z "$leftovers" ] && pass "image: no compiler or test tools" ||
  fail "image: holds build or test tools: $(echo $leftovers)"

{
  echo "# make test-container, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
  echo "build_seconds $build_s"
  echo "build_cached_steps $cached"
  echo "runtime_image_mb $size_mb"
  echo "base_image_mb $base_mb"
} >"$report"

# --- run ------------------------------------------------------------------
mkdir -p "$work/sets"
cp "$root"/examples/behaviour_sets/*.yaml "$work/sets/"
openssl rand -hex 16 >"$work/admin_token"
chmod 0644 "$work/admin_token" "$work"/sets/*
chmod 0755 "$work/sets"
token=$(cat "$work/admin_token")

podman run -d --name "$tag" --pull=never --read-only \
  -p 127.0.0.1::50051 -p 127.0.0.1::8080 \
  -v "$work/sets:/etc/utilityd/behaviour_sets:ro" \
  -v "$work/admin_token:/run/secrets/admin_token:ro" \
  "$image" --config_dir=/etc/utilityd/behaviour_sets \
  --grpc_address=0.0.0.0:50051 --http_address=0.0.0.0:8080 \
  --admin_token_file=/run/secrets/admin_token --reload_interval=1s \
  --drain_grace=${drain_grace_s}s >/dev/null 2>"$work/run.log" ||
  { cat "$work/run.log" >&2; die "run: podman run failed"; }
grpc=$(podman port "$tag" 50051/tcp)
http=$(podman port "$tag" 8080/tcp)
echo "run: $tag, gRPC on $grpc, admin on $http"

ready=false
for _ in $(seq 1 100); do
  if "$utilityctl" health --target="$grpc" --timeout=1s >/dev/null 2>&1; then
    ready=true; break
  fi
  sleep 0.2
done
$ready || { podman logs "$tag" >&2; die "run: utilityctl health never answered on $grpc"; }
pass "run: utilityctl health from the host ($grpc)"

check "run: the process runs as uid 10001" \
  test "$(podman exec "$tag" id -u)" = 10001
check "run: the root filesystem is read-only" \
  test "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$tag")" = true
if podman exec "$tag" sh -c 'echo x > /usr/local/bin/x' 2>/dev/null; then
  fail "run: wrote into /usr/local/bin of a read-only container"
else
  pass "run: writing into the image fails"
fi

if "$utilityctl" decide --target="$grpc" --set=villager_needs --format=table \
     >"$work/decide.txt" 2>&1 && grep -q "villager_needs" "$work/decide.txt"; then
  pass "run: utilityctl decide --set=villager_needs from the host ($(grep -c . "$work/decide.txt") lines)"
else
  cat "$work/decide.txt" >&2; fail "run: utilityctl decide"
fi

metric_total() {  # metric_total URL NAME: sum of a metric's samples
  curl -fsS "$1" | awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $NF } END { print s + 0 }'
}
decisions=$(metric_total "http://$http/metrics" utilityd_decisions_total)
if [ "${decisions%.*}" -gt 0 ]; then
  pass "run: /metrics counts the decisions ($decisions)"
else
  fail "run: /metrics shows no decisions after utilityctl decide"
fi

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "run: the inspector page is served" test "$(code "http://$http/ui/")" = 200
check "run: the inspector API refuses a request without the token" \
  test "$(code "http://$http/api/v1/sets")" = 401
check "run: the inspector API answers with the token" \
  test "$(code -H "Authorization: Bearer $token" "http://$http/api/v1/sets")" = 200

revision() {
  "$utilityctl" sets --target="$grpc" --format=json 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys
for s in json.load(sys.stdin)["behaviour_sets"]:
    if s["name"] == "villager_needs": print(s["revision"])'
}
before=$(revision)
sed -i '0,/weight:/s/weight: *\([0-9.]*\)/weight: 0.77/' "$work/sets/villager_needs.yaml"
after=$before
for _ in $(seq 1 50); do
  after=$(revision)
  [ -n "$after" ] && [ "$after" != "$before" ] && break
  sleep 0.2
done
if [ -n "$before" ] && [ "$after" != "$before" ]; then
  pass "run: an edit in the mounted directory is reloaded (revision $before -> $after)"
else
  podman logs --tail 20 "$tag" >&2
  fail "run: villager_needs' revision stayed '$before' after editing the mounted file"
fi

if podman healthcheck run "$tag" >/dev/null 2>&1; then
  pass "run: the HEALTHCHECK command passes inside the container"
else
  fail "run: podman healthcheck run failed"
fi

start=$(date +%s%N)
podman kill --signal TERM "$tag" >/dev/null
podman wait "$tag" >/dev/null || true
stop_ms=$(( ($(date +%s%N) - start) / 1000000 ))
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$tag")
if [ "$exit_code" = 0 ] && [ "$stop_ms" -le $((drain_grace_s * 1000 + 2000)) ]; then
  pass "run: SIGTERM stopped it cleanly in ${stop_ms} ms (drain grace ${drain_grace_s} s)"
else
  podman logs --tail 20 "$tag" >&2
  fail "run: after SIGTERM: exit code $exit_code in ${stop_ms} ms (grace ${drain_grace_s} s)"
fi
echo "sigterm_stop_ms $stop_ms" >>"$report"
podman rm -f "$tag" >/dev/null 2>&1

# --- kube -------------------------------------------------------------------
# shellcheck source=tests/container/kube_play.sh
. "$root/tests/container/kube_play.sh"

# --- compose --------------------------------------------------------------
# The stack's own services; Prometheus and Grafana images cannot be pulled
# here (tests/deploy proves their configuration against the real binary).
compose_dir=$root/deploy/compose
if [ ! -e "$compose_dir/admin_token" ]; then
  openssl rand -hex 16 >"$compose_dir/admin_token"
  made_token=1
fi
chmod 0644 "$compose_dir/admin_token"
export UTILITYD_GRPC_PORT=$(( 20000 + $$ % 20000 )) UTILITYD_HTTP_PORT=$(( 40000 + $$ % 20000 ))
compose_up=1
if ! (cd "$compose_dir" && podman-compose -p "$tag" up -d utilityd simulator) \
       >"$work/compose.log" 2>&1; then
  cat "$work/compose.log" >&2
  die "compose: podman-compose up failed"
fi
pass "compose: utilityd and the simulator are up (gRPC :$UTILITYD_GRPC_PORT, admin :$UTILITYD_HTTP_PORT)"
seen=0
for _ in $(seq 1 60); do
  seen=$(metric_total "http://127.0.0.1:$UTILITYD_HTTP_PORT/metrics" \
           utilityd_decisions_total 2>/dev/null || echo 0)
  [ "${seen%.*}" -ge 1000 ] && break
  sleep 0.5
done
if [ "${seen%.*}" -ge 1000 ]; then
  pass "compose: the simulator's decisions show in utilityd's metrics ($seen)"
else
  podman logs --tail 20 "${tag}_simulator_1" >&2 || true
  podman logs --tail 20 "${tag}_utilityd_1" >&2 || true
  fail "compose: utilityd counted $seen decisions from the simulator"
fi
echo "compose_decisions_seen $seen" >>"$report"

echo
cat "$report"
if [ "$failures" -gt 0 ]; then
  echo "make test-container: $failures check(s) failed" >&2
  exit 1
fi
echo "make test-container: all checks passed"
