#!/usr/bin/env bash
# A real Kubernetes control plane on loopback, no Docker: etcd, kube-apiserver (TLS + RBAC),
# kube-controller-manager, kube-scheduler and kwok (a fake kubelet that makes Nodes Ready and Pods Running).
#
#   hack/cluster.sh up      build what is missing, start everything, wait for /readyz and a Ready Node
#   hack/cluster.sh down    stop exactly the processes `up` recorded, remove the cluster's data
#   hack/cluster.sh status  exit 0 when up and ready
#   hack/cluster.sh restart-kwok   restart kwok alone (after a change in hack/kwok-stages/)
#
# Everything lives in $CLUSTER_DIR (default .cluster/): pki/, data/, logs/, pids/, kubeconfig.
#
# A *member* cluster (ETCD_SERVERS set; e2e/support/fleet-clusters.ts starts several as PackageSyncSet targets):
# no etcd of its own, its kube-apiserver stores under ETCD_PREFIX in that etcd, the controller-manager runs only
# KCM_CONTROLLERS, and there is no scheduler (its workloads name their Node). `down` deletes its prefix.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
source "$here/versions.env"
eval "$("$here/build-cluster.sh" paths)"

CLUSTER_DIR="${CLUSTER_DIR:-$root/.cluster}"
ETCD_CLIENT_PORT="${ETCD_CLIENT_PORT:-2379}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-2380}"
APISERVER_PORT="${APISERVER_PORT:-6443}"
KCM_PORT="${KCM_PORT:-10257}"
SCHEDULER_PORT="${SCHEDULER_PORT:-10259}"
KWOK_PORT="${KWOK_PORT:-10247}"
NODE_NAME="${NODE_NAME:-kwok-node-0}"
ETCD_SERVERS="${ETCD_SERVERS:-}"
ETCD_PREFIX="${ETCD_PREFIX:-/registry}"
KCM_CONTROLLERS="${KCM_CONTROLLERS:-*}"

pki="$CLUSTER_DIR/pki"; logs="$CLUSTER_DIR/logs"; pids="$CLUSTER_DIR/pids"; data="$CLUSTER_DIR/data"
kubeconfig="$CLUSTER_DIR/kubeconfig"
kubectl="$KUBE_BIN_DIR/kubectl"
# start order; `down` stops in reverse
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
[[ -n "$ETCD_SERVERS" ]] && components=(kube-apiserver kube-controller-manager kwok)
member() { [[ -n "$ETCD_SERVERS" ]]; }

log() { echo "[cluster] $*" >&2; }
# On a failed start, stop what this run started (the logs stay for reading) so nothing is left running.
die() { echo "[cluster] ERROR: $*" >&2; stop_processes; exit 1; }

pid_of() { [[ -f "$pids/$1.pid" ]] && cat "$pids/$1.pid" || true; }
alive() { local p; p="$(pid_of "$1")"; [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

fail_component() { # name, why
  local name="$1" why="$2"
  echo "[cluster] ERROR: $name $why. Last lines of $logs/$name.log:" >&2
  tail -n 25 "$logs/$name.log" >&2 2>/dev/null || true
  stop_processes
  echo "[cluster] stopped the processes this start-up began; logs are in $logs" >&2
  exit 1
}

start() { # name, port, cmd...
  local name="$1" port="$2"; shift 2
  if port_busy "$port"; then
    local who; who="$(ss -ltnpH "sport = :$port" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\).*/\1/p' | head -1)"
    die "$name cannot start: port 127.0.0.1:$port is already in use${who:+ by $who}. Stop that process or set the port variable (see hack/cluster.sh)."
  fi
  : >"$logs/$name.log"
  # setsid: the process outlives this script and `make`; its PID is what `down` stops.
  setsid "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$pids/$name.pid"
  log "started $name (pid $!, log $logs/$name.log)"
}

wait_for() { # name, description, timeout seconds, check command...
  local name="$1" what="$2" timeout="$3"; shift 3
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail_component "$name" "exited while waiting for $what"
    ((SECONDS < deadline)) || fail_component "$name" "did not become $what within ${timeout}s"
    sleep 0.3
  done
}

make_pki() {
  [[ -f "$pki/admin.crt" ]] && return
  mkdir -p "$pki"
  log "generating PKI in $pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=packagesync-local-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  cat >"$pki/admin.cnf" <<CNF
[req]
distinguished_name = dn
[dn]
[ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:127.0.0.1, IP:10.96.0.1
CNF
  openssl req -new -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kubernetes-admin" \
    -keyout "$pki/admin.key" -out "$pki/admin.csr" 2>/dev/null
  openssl x509 -req -in "$pki/admin.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 3650 \
    -extfile "$pki/admin.cnf" -extensions ext -out "$pki/admin.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  local ca crt key
  ca="$(base64 -w0 <"$pki/ca.crt")"; crt="$(base64 -w0 <"$pki/admin.crt")"; key="$(base64 -w0 <"$pki/admin.key")"
  umask 077
  cat >"$kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: packagesync-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    client-certificate-data: $crt
    client-key-data: $key
contexts:
- name: packagesync-local
  context: {cluster: packagesync-local, user: admin}
current-context: packagesync-local
KC
}

# kwok's stock stages, plus ours in hack/kwok-stages/. pod-ready and pod-complete come from there: copies
# of the stock ones that leave Pods labelled e2e.packagesync.io/pod-failure to the failure stages.
start_kwok() {
  local stages=() f
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-delete.yaml; do
    stages+=("--config=$KWOK_DIR/stages/$f")
  done
  for f in "$here"/kwok-stages/*.yaml; do [[ -f "$f" ]] && stages+=("--config=$f"); done
  # --node-lease-duration-seconds: kwok renews the Node's Lease in kube-node-lease (every 10 s), as a kubelet
  # does; the heartbeat-with-lease stage rewrites the Node status only every 10-20 minutes. Without the
  # Lease the node lifecycle controller saw no heartbeat within its 50 s grace period, marked the Node
  # NotReady for a few seconds every minute and every Pod on it Ready=False, and no stage made them Ready
  # again: Deployments went unavailable mid-test.
  start kwok "$KWOK_PORT" "$KWOK_DIR/kwok" --kubeconfig="$kubeconfig" --manage-all-nodes=true \
    --node-lease-duration-seconds=40 \
    --cidr=10.244.0.0/16 --node-ip=127.0.0.1 --server-address="127.0.0.1:$KWOK_PORT" "${stages[@]}"
}

# After a change in hack/kwok-stages: restart kwok alone, so the rest of the control plane (and the tests
# others run on it) carries on. Pods keep their status meanwhile; kwok resumes from a fresh list.
restart_kwok() {
  is_up || die "the cluster is not up"
  local p; p="$(pid_of kwok)"
  kill -TERM "$p" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
  for _ in $(seq 1 50); do port_busy "$KWOK_PORT" || break; sleep 0.1; done
  start_kwok
  wait_for kwok "Node $NODE_NAME Ready" 60 "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  sleep 1
  alive kwok || fail_component kwok "exited after restart (a stage file it cannot load?)"
  log "kwok restarted (pid $(pid_of kwok))"
}

is_up() {
  for c in "${components[@]}"; do alive "$c" || return 1; done
  [[ -f "$kubeconfig" ]] && "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1
}

up() {
  if is_up; then log "already up (kubeconfig: $kubeconfig)"; return 0; fi
  # a partial cluster from a crash: stop what we recorded before starting clean
  if compgen -G "$pids/*.pid" >/dev/null; then log "found a partial cluster; stopping it first"; down; fi
  "$here/build-cluster.sh" all
  mkdir -p "$logs" "$pids" "$data"
  make_pki
  write_kubeconfig

  # etcd reads ETCD_* variables as flags: keep our port variables away from it
  member || start etcd "$ETCD_CLIENT_PORT" env -u ETCD_CLIENT_PORT -u ETCD_PEER_PORT "$ETCD_BIN" --name=packagesync-local --data-dir="$data/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="packagesync-local=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --quota-backend-bytes=8589934592 --log-level=warn
  member || wait_for etcd "healthy" 60 curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

  start kube-apiserver "$APISERVER_PORT" "$KUBE_BIN_DIR/kube-apiserver" \
    --etcd-servers="${ETCD_SERVERS:-http://127.0.0.1:$ETCD_CLIENT_PORT}" --etcd-prefix="$ETCD_PREFIX" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$pki/admin.crt" --tls-private-key-file="$pki/admin.key" --client-ca-file="$pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --allow-privileged=true \
    --max-requests-inflight=1000 --max-mutating-requests-inflight=500 \
    --enable-priority-and-fairness=false --v=1
  wait_for kube-apiserver "ready" 120 "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz

  start kube-controller-manager "$KCM_PORT" "$KUBE_BIN_DIR/kube-controller-manager" \
    --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
    --root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" \
    --use-service-account-credentials=false --leader-elect=false --controllers="$KCM_CONTROLLERS" \
    --kube-api-qps=200 --kube-api-burst=400 --concurrent-gc-syncs=20 --v=1
  member || start kube-scheduler "$SCHEDULER_PORT" "$KUBE_BIN_DIR/kube-scheduler" \
    --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false --v=1
  start_kwok

  wait_for kube-controller-manager "healthy" 60 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz"
  member || wait_for kube-scheduler "healthy" 60 curl -fsSk "https://127.0.0.1:$SCHEDULER_PORT/healthz"
  "$kubectl" --kubeconfig "$kubeconfig" apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $NODE_NAME
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $NODE_NAME, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec: {}
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "10000"}
  capacity: {cpu: "64", memory: 256Gi, pods: "10000"}
NODE
  wait_for kwok "Node $NODE_NAME Ready" 60 "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  # the default ServiceAccount appears once the controller-manager's token controllers run
  wait_for kube-controller-manager "serving ServiceAccounts" 60 "$kubectl" --kubeconfig "$kubeconfig" get serviceaccount default -n default
  for c in "${components[@]}"; do alive "$c" || fail_component "$c" "exited during start-up"; done
  log "up: $("$kubectl" --kubeconfig "$kubeconfig" version -o json 2>/dev/null | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1), node $NODE_NAME Ready"
  log "export KUBECONFIG=$kubeconfig"
}

stop_processes() {
  local i c p
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    c="${components[$i]}"; p="$(pid_of "$c")"
    [[ -z "$p" ]] && continue
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
      log "stopped $c (pid $p)"
    fi
    rm -f "$pids/$c.pid"
  done
}

# base64 of a key for etcd's JSON gateway
b64() { printf '%s' "$1" | base64 -w0; }

down() {
  stop_processes
  # a member's objects live in the shared etcd under its prefix: removed with it (never the default /registry)
  if member && [[ "$ETCD_PREFIX" != /registry && "$ETCD_PREFIX" != /registry/ && "$ETCD_PREFIX" == /?* ]]; then
    local from="${ETCD_PREFIX%/}/" to
    to="${from%?}0" # the key after every key with prefix "<prefix>/" ('/' + 1 = '0')
    curl -fsS -X POST "${ETCD_SERVERS%%,*}/v3/kv/deleterange" \
      -d "{\"key\":\"$(b64 "$from")\",\"range_end\":\"$(b64 "$to")\"}" >/dev/null ||
      log "could not delete $ETCD_PREFIX from $ETCD_SERVERS"
  fi
  rm -rf "$data" "$pids" "$pki" "$kubeconfig" "$logs"
  rmdir "$CLUSTER_DIR" 2>/dev/null || true
  log "down; cluster data and logs removed"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) is_up && log "up" || { log "down"; exit 1; } ;;
  restart-kwok) restart_kwok ;;
  kubeconfig) echo "$kubeconfig" ;;
  *) echo "usage: $0 up|down|status|restart-kwok|kubeconfig" >&2; exit 2 ;;
esac
