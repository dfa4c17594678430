# make test-container, "kube": the manifests of deploy/k8s run with podman
# kube play. Sourced by container_test.sh (uses its image, work dir, pass,
# fail, check, die and metric_total). What kube play cannot do as a cluster
# does, and what stands in for it, is in docs/CONTAINER.md ("Kubernetes
# manifests, played").
#
# podman publishes every containerPort on the host as a hostPort, so three
# pods of one Deployment on one host would collide on 50051 and 8080: the
# Deployment is played three times (utilityd-0..2, one replica each), each
# with host ports of its own -- the only change made to the manifest.

kube_grpc_base=$(( 21000 + $$ % 9000 ))
kube_http_base=$(( kube_grpc_base + 3 ))
kube_targets=""

# Leftovers of an interrupted run would hold stale ConfigMap data.
for r in 0 1 2; do podman pod rm -f -t 0 "utilityd-$r-pod-0" >/dev/null 2>&1 || true; done
podman volume rm -f utilityd-behaviour-sets utilityd-admin-token >/dev/null 2>&1 || true

# The token Secret, as `kubectl create secret generic` would make it.
openssl rand -hex 16 | tr -d '\n' >"$work/kube_token"
cat >"$work/kube-secret.yaml" <<EOF
apiVersion: v1
kind: Secret
metadata: {name: utilityd-admin-token}
type: Opaque
data:
  token: $(base64 -w0 <"$work/kube_token")
EOF
podman secret rm utilityd-admin-token >/dev/null 2>&1 || true
podman kube play "$work/kube-secret.yaml" >"$work/kube-play.log" 2>&1 ||
  { cat "$work/kube-play.log" >&2; die "kube: podman kube play of the Secret failed"; }

kube_manifest() {  # kube_manifest R: replica R's copy of the Deployment
  /usr/bin/python3 - "$root/deploy/k8s/deployment.yaml" "$1" \
    "$kube_grpc_base" "$kube_http_base" <<'EOF'
import sys, yaml
path, r, grpc, http = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = yaml.safe_load(open(path))
d["metadata"]["name"] = "utilityd-%d" % r
d["spec"]["replicas"] = 1
for port in d["spec"]["template"]["spec"]["containers"][0]["ports"]:
    port["hostIP"] = "127.0.0.1"
    port["hostPort"] = {"grpc": grpc, "http": http}[port["name"]] + r
print(yaml.safe_dump(d))
EOF
}

kube_play() {  # kube_play R: plays replica R, waits until it serves
  podman kube play --configmap "$root/deploy/k8s/configmap.yaml" \
    "$work/kube-$1.yaml" >>"$work/kube-play.log" 2>&1 ||
    { cat "$work/kube-play.log" >&2; return 1; }
  local grpc=127.0.0.1:$(( kube_grpc_base + $1 ))
  for _ in $(seq 1 100); do
    "$utilityctl" health --target="$grpc" --timeout=1s >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  podman logs "utilityd-$1-pod-0-utilityd" >&2 || true
  return 1
}

sets_revision() {  # sets_revision R: villager_needs' revision on replica R
  "$utilityctl" sets --target="127.0.0.1:$(( kube_grpc_base + $1 ))" \
    --format=json 2>/dev/null | /usr/bin/python3 -c 'import json,sys
for s in json.load(sys.stdin)["behaviour_sets"]:
    if s["name"] == "villager_needs": print(s["revision"])'
}

for r in 0 1 2; do
  kube_manifest "$r" >"$work/kube-$r.yaml"
  kube_play "$r" || die "kube: replica utilityd-$r did not serve"
  kube_targets="$kube_targets${kube_targets:+,}127.0.0.1:$(( kube_grpc_base + r ))"
done
pass "kube: podman kube play ran the Deployment three times from $image, ConfigMap and Secret mounted ($kube_targets)"

pod=utilityd-0-pod-0-utilityd
check "kube: the pod runs as uid 10001 (runAsUser)" \
  test "$(podman exec "$pod" id -u)" = 10001
check "kube: the pod's root filesystem is read-only (readOnlyRootFilesystem)" \
  test "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$pod")" = true
check "kube: the ConfigMap is the sets directory (5 sets loaded)" \
  test "$(metric_total "http://127.0.0.1:$kube_http_base/metrics" utilityd_behaviour_sets)" = 5
# The token file the pod reads: the Secret's value, except that podman 4.3
# mounts a Secret's `data` still base64-encoded (Kubernetes decodes it).
kube_token=$(cat "$work/kube_token")
mounted=$(podman exec "$pod" cat /etc/utilityd/admin/token)
if [ "$mounted" = "$(base64 -w0 <"$work/kube_token")" ]; then
  echo "kube: podman mounted the Secret's data base64-encoded; the pod's token is that text"
  kube_token=$mounted
fi
check "kube: the Secret is mounted as the admin token file" \
  test "$mounted" = "$kube_token"
check "kube: the inspector API answers with the Secret's token" \
  test "$(code -H "Authorization: Bearer $kube_token" "http://127.0.0.1:$kube_http_base/api/v1/sets")" = 200
check "kube: and refuses a request without it" \
  test "$(code "http://127.0.0.1:$kube_http_base/api/v1/sets")" = 401

# A ConfigMap edit, as kubelet delivers one: every replica reloads.
volume=$(podman volume inspect --format '{{.Mountpoint}}' utilityd-behaviour-sets)
before=$(sets_revision 0)
sed '0,/weight:/s/weight: *\([0-9.]*\)/weight: 0.66/' "$volume/villager_needs.yaml" \
  >"$volume/.villager_needs.yaml.tmp"
mv "$volume/.villager_needs.yaml.tmp" "$volume/villager_needs.yaml"
reloaded=0
for _ in $(seq 1 50); do
  reloaded=0
  for r in 0 1 2; do
    after=$(sets_revision "$r")
    [ -n "$after" ] && [ "$after" != "$before" ] && reloaded=$((reloaded + 1))
  done
  [ "$reloaded" = 3 ] && break
  sleep 0.2
done
if [ -n "$before" ] && [ "$reloaded" = 3 ]; then
  pass "kube: a ConfigMap edit is reloaded by every replica (revision $before -> $(sets_revision 0))"
else
  fail "kube: $reloaded of 3 replicas reloaded the edited ConfigMap"
fi

# A pod removed under load and brought back. The load: streams and unary
# calls through the SDK's round robin over the three pods.
"$fleet_load" --target="$kube_targets" --streams=6 --duration=16s \
  >"$work/kube-load.json" 2>"$work/kube-load.err" &
load_pid=$!
# The pod to remove carries streams, so that its removal is felt.
victim=""
for _ in $(seq 1 50); do
  for r in 0 1 2; do
    n=$(metric_total "http://127.0.0.1:$(( kube_http_base + r ))/metrics" utilityd_active_streams)
    if [ "${n%.*}" -gt 0 ]; then victim=$r; break 2; fi
  done
  sleep 0.1
done
[ -n "$victim" ] || victim=1
victim_http=127.0.0.1:$(( kube_http_base + victim ))
sleep 2
# As kubelet deletes a pod: SIGTERM to its container, up to
# terminationGracePeriodSeconds, the pod's network kept meanwhile (podman
# pod stop would take the network down with the pause container at once).
podman stop -t 40 "utilityd-$victim-pod-0-utilityd" >/dev/null 2>&1 &
stop_pid=$!
unready=false
for _ in $(seq 1 40); do
  [ "$(code "http://$victim_http/readyz")" = 503 ] && { unready=true; break; }
  sleep 0.05
done
wait "$stop_pid" || true
check "kube: the removed pod's /readyz answers 503 while it drains" $unready
drained=$(podman logs "utilityd-$victim-pod-0-utilityd" 2>&1 | grep -c 'event=draining' || true)
check "kube: the removed pod drained on SIGTERM (event=draining)" test "$drained" -ge 1
podman kube down "$work/kube-$victim.yaml" >/dev/null 2>&1
sleep 1
kube_play "$victim" || fail "kube: utilityd-$victim did not come back"
back=$(metric_total "http://$victim_http/metrics" utilityd_decisions_total)
if wait "$load_pid"; then
  pass "kube: utilityd-$victim removed under load and played again: nothing lost or duplicated $(cat "$work/kube-load.json")"
else
  head -20 "$work/kube-load.err" >&2
  fail "kube: the load lost, duplicated or failed batches: $(cat "$work/kube-load.json")"
fi
served=$(metric_total "http://$victim_http/metrics" utilityd_decisions_total)
if [ "${served%.*}" -gt "${back%.*}" ]; then
  pass "kube: utilityd-$victim takes calls again after coming back ($served decisions)"
else
  fail "kube: utilityd-$victim decided nothing after coming back"
fi
echo "kube_load $(cat "$work/kube-load.json")" >>"$report"

for r in 0 1 2; do podman kube down "$work/kube-$r.yaml" >/dev/null 2>&1 || true; done
