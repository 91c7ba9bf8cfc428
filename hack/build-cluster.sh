#!/usr/bin/env bash
# Build the real control plane from source through the Go module proxy:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok; and the render tools the
# controller runs (kustomize, helm, sops).
# Binaries land in $PACKAGESYNC_CACHE/bin/<piece>-<version>/ and are rebuilt only when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${PACKAGESYNC_CACHE:-$HOME/.cache/packagesync}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
export GOSUMDB="${GOSUMDB:-sum.golang.org}"

k8s_dir="$cache/bin/kubernetes-$KUBERNETES_VERSION"
etcd_dir="$cache/bin/etcd-$ETCD_VERSION"
kwok_dir="$cache/bin/kwok-$KWOK_VERSION"
kustomize_dir="$cache/bin/kustomize-$KUSTOMIZE_VERSION"
helm_dir="$cache/bin/helm-$HELM_VERSION"
sops_dir="$cache/bin/sops-$SOPS_VERSION"
k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
# kstatus-check: cli-utils' kstatus as a command, so tests can prove kstatus readers agree with us
kstatus_src="$here/kstatus-check"
kstatus_dir="$cache/bin/kstatus-check-$CLI_UTILS_VERSION-$(cat "$kstatus_src/main.go" "$kstatus_src/go.mod" | sha256sum | cut -c1-12)"
# render-sandbox: our small launcher that confines every render tool with Landlock and RLIMIT_AS
# (docs/adr/0033). Keyed by the hash of its source, like kstatus-check.
sandbox_src="$here/render-sandbox"
sandbox_dir="$cache/bin/render-sandbox-$(cat "$sandbox_src/main.go" "$sandbox_src/go.mod" "$sandbox_src/go.sum" | sha256sum | cut -c1-12)"
# render-worker: kustomize and Helm as libraries in one long-lived process (docs/adr/0038). Keyed by the hash of
# its Go files, go.mod and go.sum (src/config/tool-paths.ts computes the same key to find it).
worker_src="$here/render-worker"
worker_dir="$cache/bin/render-worker-$(cd "$worker_src" && cat $(LC_ALL=C ls -1 ./*.go) go.mod go.sum | sha256sum | cut -c1-12)"
# oci-registry: the CNCF distribution registry with only filesystem/inmemory storage, htpasswd and token auth
# (issue 17; the OCI source e2e tests push to and pull from it). Keyed by version and by our small main.
registry_src="$here/oci-registry"
registry_dir="$cache/bin/oci-registry-$DISTRIBUTION_VERSION-$(cat "$registry_src/main.go" "$registry_src/go.mod" | sha256sum | cut -c1-12)"
# jaeger: Jaeger v2 (cmd/jaeger, built on the OpenTelemetry Collector) with its default all-in-one config: OTLP in,
# memory storage, the query API. Only the tracing e2e needs it (docs/adr/0043). Keyed by version.
jaeger_dir="$cache/bin/jaeger-$JAEGER_VERSION"
# prometheus: the Prometheus server (cmd/prometheus, Go module versions v0.3xx = release v3.x) for the rollout
# metric gate's e2e: it scrapes the controller's /metrics and answers PromQL. Only e2e/rollout-gates needs it.
prometheus_dir="$cache/bin/prometheus-$PROMETHEUS_VERSION"

log() { echo "[build-cluster] $*" >&2; }
command -v go >/dev/null || { log "go is required to build the control plane (none on PATH)"; exit 1; }

build_kubernetes() {
  local missing=()
  for b in "${k8s_bins[@]}"; do [[ -x "$k8s_dir/$b" ]] || missing+=("$b"); done
  [[ ${#missing[@]} -eq 0 ]] && { log "kubernetes $KUBERNETES_VERSION: cached"; return; }
  log "kubernetes $KUBERNETES_VERSION: building ${missing[*]} (cold: 15-30 min on 2 cores)"
  local mod="$cache/src/kubernetes-$KUBERNETES_VERSION"
  mkdir -p "$mod" "$k8s_dir"
  local kdir
  kdir="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  {
    echo "module packagesync.local/kubernetes-build"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo
    echo "replace ("
    # every staging module k8s.io/kubernetes maps to ./staging becomes the published v0 module
    sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\t\1 => \1 '"$KUBE_STAGING_VERSION"'#p' "$kdir/go.mod"
    echo ")"
  } >"$mod/go.mod"
  # The module must import what it builds, or `go mod tidy` drops the pinned require as unused and the
  # build then resolves k8s.io/kubernetes@latest (a newer minor whose staging packages v0.X.Y lacks).
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${k8s_bins[@]}"
    echo ")"
  } >"$mod/tools.go"
  local minor="${KUBERNETES_VERSION#v}"; minor="${minor#*.}"; minor="${minor%%.*}"
  local ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$mod" && go mod tidy >/dev/null 2>&1 || true
   local pinned; pinned="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
   [[ "$pinned" == "$KUBERNETES_VERSION" ]] || { log "k8s.io/kubernetes resolved to $pinned, not $KUBERNETES_VERSION: refusing to build"; exit 1; }
   cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$k8s_dir/" \
     $(printf 'k8s.io/kubernetes/cmd/%s ' "${missing[@]}"))
}

build_etcd() {
  [[ -x "$etcd_dir/etcd" ]] && { log "etcd $ETCD_VERSION: cached"; return; }
  log "etcd $ETCD_VERSION: building"
  local mod="$cache/src/etcd-$ETCD_VERSION"
  mkdir -p "$mod" "$etcd_dir"
  cat >"$mod/go.mod" <<GOMOD
module packagesync.local/etcd-build

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
  cat >"$mod/tools.go" <<GOSRC
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GOSRC
  (cd "$mod" && go mod tidy >/dev/null 2>&1 || true
   cd "$mod" && go build -trimpath -ldflags "-s -w" -o "$etcd_dir/etcd" go.etcd.io/etcd/server/v3)
}

build_kwok() {
  [[ -x "$kwok_dir/kwok" && -d "$kwok_dir/stages" ]] && { log "kwok $KWOK_VERSION: cached"; return; }
  log "kwok $KWOK_VERSION: building"
  mkdir -p "$kwok_dir"
  GOBIN="$kwok_dir" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  local src
  src="$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "$kwok_dir/stages"
  cp -r "$src/kustomize/stage/." "$kwok_dir/stages/"
  chmod -R u+w "$kwok_dir/stages"
}

build_kstatus_check() {
  [[ -x "$kstatus_dir/kstatus-check" ]] && { log "kstatus-check (cli-utils $CLI_UTILS_VERSION): cached"; return; }
  log "kstatus-check (cli-utils $CLI_UTILS_VERSION): building"
  local mod="$cache/src/kstatus-check"
  rm -rf "$mod"; mkdir -p "$mod" "$kstatus_dir"
  cp "$kstatus_src/main.go" "$kstatus_src/go.mod" "$mod/"
  [[ -f "$kstatus_src/go.sum" ]] && cp "$kstatus_src/go.sum" "$mod/"
  (cd "$mod" && go mod tidy >/dev/null 2>&1 || true
   cd "$mod" && go build -trimpath -ldflags "-s -w" -o "$kstatus_dir/kstatus-check" .)
}

build_render_sandbox() {
  [[ -x "$sandbox_dir/render-sandbox" ]] && { log "render-sandbox: cached"; return; }
  log "render-sandbox: building (go-landlock; under a minute)"
  local mod="$cache/src/render-sandbox"
  rm -rf "$mod"; mkdir -p "$mod" "$sandbox_dir"
  cp "$sandbox_src/main.go" "$sandbox_src/go.mod" "$sandbox_src/go.sum" "$mod/"
  (cd "$mod" && go build -trimpath -ldflags "-s -w" -o "$sandbox_dir/render-sandbox.tmp" . \
    && mv "$sandbox_dir/render-sandbox.tmp" "$sandbox_dir/render-sandbox")
}

# The worker embeds the Helm SDK: the pinned HELM_VERSION in go.mod, and its version string set as the helm
# binary's is (.Capabilities.HelmVersion is in templates' reach). Cold: several minutes on 2 cores; the Go
# build cache shares most packages with the helm and kustomize builds.
build_render_worker() {
  [[ -x "$worker_dir/render-worker" && -x "$worker_dir/render-worker-kustomize" ]] && { log "render-worker: cached"; return; }
  local pinned
  pinned="$(sed -n 's#^[[:space:]]*helm\.sh/helm/v4 \(v[^ ]*\).*#\1#p' "$worker_src/go.mod")"
  [[ "$pinned" == "$HELM_VERSION" ]] || { log "render-worker: go.mod has helm $pinned, hack/versions.env $HELM_VERSION: refusing to build"; exit 1; }
  log "render-worker: building (kustomize api + helm $HELM_VERSION SDK)"
  local mod="$cache/src/render-worker"
  rm -rf "$mod"; mkdir -p "$mod" "$worker_dir"
  cp "$worker_src"/*.go "$worker_src/go.mod" "$worker_src/go.sum" "$mod/"
  (cd "$mod" && go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
      -o "$worker_dir/render-worker.tmp" . \
    && mv "$worker_dir/render-worker.tmp" "$worker_dir/render-worker")
  # the same sources without Helm's SDK, for kustomize renders (helm_off.go; docs/adr/0038)
  (cd "$mod" && go build -tags kustomizeonly -trimpath -ldflags "-s -w" -o "$worker_dir/render-worker-kustomize.tmp" . \
    && mv "$worker_dir/render-worker-kustomize.tmp" "$worker_dir/render-worker-kustomize")
}

# Render tools (issue 13). Both are `go install`-able (no replace directives upstream). The version
# ldflags make `kustomize version` / `helm version` honest; the render cache keys on them.
build_kustomize() {
  [[ -x "$kustomize_dir/kustomize" ]] && { log "kustomize $KUSTOMIZE_VERSION: cached"; return; }
  log "kustomize $KUSTOMIZE_VERSION: building"
  mkdir -p "$kustomize_dir"
  GOBIN="$kustomize_dir" go install -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=kustomize/$KUSTOMIZE_VERSION" \
    "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

build_helm() {
  [[ -x "$helm_dir/helm" ]] && { log "helm $HELM_VERSION: cached"; return; }
  log "helm $HELM_VERSION: building"
  mkdir -p "$helm_dir"
  GOBIN="$helm_dir" go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
}

# SOPS decrypts encrypted Secrets at render time (issue 17). `go install`-able (no replace directives).
# Cold cost: see docs/adr/0025 (the cloud KMS SDKs it imports are most of it; no smaller upstream build).
build_sops() {
  [[ -x "$sops_dir/sops" ]] && { log "sops $SOPS_VERSION: cached"; return; }
  log "sops $SOPS_VERSION: building"
  mkdir -p "$sops_dir"
  GOBIN="$sops_dir" go install -trimpath -ldflags "-s -w" "github.com/getsops/sops/v3/cmd/sops@$SOPS_VERSION"
}

build_oci_registry() {
  [[ -x "$registry_dir/oci-registry" ]] && { log "oci-registry (distribution $DISTRIBUTION_VERSION): cached"; return; }
  log "oci-registry (distribution $DISTRIBUTION_VERSION): building (cold: a few minutes on 2 cores)"
  local mod="$cache/src/oci-registry"
  rm -rf "$mod"; mkdir -p "$mod" "$registry_dir"
  cp "$registry_src/main.go" "$registry_src/go.mod" "$registry_src/go.sum" "$mod/"
  (cd "$mod" && go mod tidy >/dev/null 2>&1 || true
   local pinned; pinned="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/distribution/distribution/v3)"
   [[ "$pinned" == "$DISTRIBUTION_VERSION" ]] || { log "distribution resolved to $pinned, not $DISTRIBUTION_VERSION: refusing to build"; exit 1; }
   cd "$mod" && go build -trimpath -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$DISTRIBUTION_VERSION" \
     -o "$registry_dir/oci-registry" .)
}

# upstream's go.mod carries replace directives, so not `go install pkg@version`: a throwaway module requires it
# as a tool (`go get -tool`, as the Go proxy's listing suggests) and builds that package.
build_jaeger() {
  [[ -x "$jaeger_dir/jaeger" ]] && { log "jaeger $JAEGER_VERSION: cached"; return; }
  log "jaeger $JAEGER_VERSION: building (cold: heavy, see docs/adr/0043)"
  local mod="$cache/src/jaeger"
  rm -rf "$mod"; mkdir -p "$mod" "$jaeger_dir"
  (cd "$mod" && go mod init packagesync.local/jaeger-build >/dev/null 2>&1 \
   && go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" \
   && go build -trimpath -ldflags "-s -w" -o "$jaeger_dir/jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger \
   && mv "$jaeger_dir/jaeger.tmp" "$jaeger_dir/jaeger")
}

# Same form as jaeger: a throwaway module requires cmd/prometheus as a tool and builds it (e2e/rollout-gates' metric
# gate). In build_all, beside the others: built inside a test it would be the longest stretch of a cold CI run, alone.
# The web UI assets are not embedded (no builtinassets tag): the tests use only the HTTP API.
build_prometheus() {
  [[ -x "$prometheus_dir/prometheus" ]] && { log "prometheus $PROMETHEUS_VERSION: cached"; return; }
  log "prometheus $PROMETHEUS_VERSION: building (cold: heavy, many service-discovery SDKs)"
  local mod="$cache/src/prometheus"
  rm -rf "$mod"; mkdir -p "$mod" "$prometheus_dir"
  (cd "$mod" && go mod init packagesync.local/prometheus-build >/dev/null 2>&1 \
   && go get -tool "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION" \
   && go build -trimpath -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
        -o "$prometheus_dir/prometheus.tmp" github.com/prometheus/prometheus/cmd/prometheus \
   && mv "$prometheus_dir/prometheus.tmp" "$prometheus_dir/prometheus")
}

# Every piece `make test` uses, built side by side: on a cold machine the kubernetes build alone is most of the
# time, and the others fill its single-threaded stretches (module downloads, links). The Go build and module caches
# are safe to share between concurrent builds (Go locks them). Each piece's output is prefixed with its name; a
# failed piece fails the whole run, after the others have finished, and is named.
# One build of a piece at a time on this machine: each starts by emptying its own source folder, so two runs of
# the script (a test's first-use build beside `make test`'s) would delete each other's sources mid-build. The
# second waits, then finds the first one's binary cached.
locked() {
  local fd
  mkdir -p "$cache/locks"
  exec {fd}>"$cache/locks/$1.lock"
  flock "$fd"
  "build_${1//-/_}"
}

build_all() {
  local tmp pieces=(kubernetes jaeger prometheus sops helm render-worker etcd kustomize kwok oci-registry kstatus-check render-sandbox)
  tmp="$(mktemp -d)"
  local started=$SECONDS p
  for p in "${pieces[@]}"; do
    { (set +e; (set -e; locked "$p"); echo $? >"$tmp/$p.rc") 2>&1 | sed -u "s/^/[$p] /" >&2; } &
  done
  wait
  local failed=()
  for p in "${pieces[@]}"; do [[ "$(cat "$tmp/$p.rc" 2>/dev/null)" == 0 ]] || failed+=("$p"); done
  rm -rf "$tmp"
  [[ ${#failed[@]} -eq 0 ]] || { log "FAILED: ${failed[*]} (their output above, prefixed with their names)"; exit 1; }
  log "all pieces built or cached in $((SECONDS - started)) s"
}

what="${1:-all}"
case "$what" in
  all) build_all ;;
  kstatus-check|render-sandbox|render-worker|oci-registry|jaeger|prometheus|kustomize|helm|sops|etcd|kwok|kubernetes)
    locked "$what" ;;
  paths) echo "ETCD_BIN=$etcd_dir/etcd"; echo "KUBE_BIN_DIR=$k8s_dir"; echo "KWOK_DIR=$kwok_dir"; echo "KSTATUS_CHECK=$kstatus_dir/kstatus-check"
    echo "KUSTOMIZE_BIN=$kustomize_dir/kustomize"; echo "HELM_BIN=$helm_dir/helm"
    echo "SOPS_BIN=$sops_dir/sops"; echo "OCI_REGISTRY_BIN=$registry_dir/oci-registry"
    echo "JAEGER_BIN=$jaeger_dir/jaeger"; echo "PROMETHEUS_BIN=$prometheus_dir/prometheus"
    echo "RENDER_SANDBOX_BIN=$sandbox_dir/render-sandbox"; echo "RENDER_WORKER_BIN=$worker_dir/render-worker"
    echo "RENDER_WORKER_KUSTOMIZE_BIN=$worker_dir/render-worker-kustomize"; exit 0 ;;
  *) log "usage: $0 [all|etcd|kwok|kubernetes|kstatus-check|render-sandbox|render-worker|kustomize|helm|sops|oci-registry|jaeger|prometheus|paths]"; exit 2 ;;
esac
log "done: $k8s_dir $etcd_dir $kwok_dir"
