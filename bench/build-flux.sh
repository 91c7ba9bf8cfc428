#!/usr/bin/env bash
# Builds Flux's source-controller, kustomize-controller and helm-controller from their Go modules (pinned versions), the way
# hack/build-cluster.sh builds the control plane: once, into $PACKAGESYNC_CACHE/bin/flux-<name>-<version>/.
# Each module is built from a writable copy of its own source tree, so its go.mod (with the ./api replace)
# and go.sum are used exactly as upstream releases them. Prints the binary paths (NAME_BIN=path).
set -euo pipefail
cache="${PACKAGESYNC_CACHE:-$HOME/.cache/packagesync}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
export GOSUMDB="${GOSUMDB:-sum.golang.org}"
SOURCE_CONTROLLER_VERSION="${SOURCE_CONTROLLER_VERSION:-v1.9.1}"
KUSTOMIZE_CONTROLLER_VERSION="${KUSTOMIZE_CONTROLLER_VERSION:-v1.9.4}"
# helm-controller v1 (issue 27's Helm fleet): the proxy lists no versions of it; v1.4.3 is the newest it serves
# (Flux 2.7's line, whose HelmChart and OCIRepository source.toolkit.fluxcd.io/v1 source-controller v1.9 serves)
HELM_CONTROLLER_VERSION="${HELM_CONTROLLER_VERSION:-v1.4.3}"

log() { echo "[build-flux] $*" >&2; }

build() { # name version
  local name="$1" version="$2"
  local dir="$cache/bin/flux-$name-$version"
  if [[ -x "$dir/$name" && -d "$dir/crds" ]]; then log "$name $version: cached"; return; fi
  log "$name $version: building (cold: several minutes on 2 cores)"
  local src
  src="$(go mod download -json "github.com/fluxcd/$name@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$src" ]] || { log "could not download github.com/fluxcd/$name@$version"; exit 1; }
  local work="$cache/src/flux-$name-$version"
  rm -rf "$work"; mkdir -p "$work" "$dir"
  cp -r "$src/." "$work/"; chmod -R u+w "$work"
  # The module zip leaves out ./api (a module of its own, published at the same version): drop the local
  # replace so go.mod's require of <name>/api at the release version is used; go.sum already lists it.
  sed -i "\#^replace github.com/fluxcd/$name/api => ./api#d" "$work/go.mod"
  (cd "$work" && go build -trimpath -ldflags "-s -w" -o "$dir/$name" .)
  rm -rf "$dir/crds"; mkdir -p "$dir/crds"; cp "$src"/config/crd/bases/*.yaml "$dir/crds/"
}

# all: what the plain and kustomize fleets compare against; helm: what the Helm fleet does (source-controller
# builds its HelmCharts); every: both
case "${1:-all}" in
  all)
    build source-controller "$SOURCE_CONTROLLER_VERSION"
    build kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION"
    ;;
  helm)
    build source-controller "$SOURCE_CONTROLLER_VERSION"
    build helm-controller "$HELM_CONTROLLER_VERSION"
    ;;
  every)
    build source-controller "$SOURCE_CONTROLLER_VERSION"
    build kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION"
    build helm-controller "$HELM_CONTROLLER_VERSION"
    ;;
  paths) ;;
  *) log "usage: $0 [all|helm|every|paths]"; exit 2 ;;
esac
echo "SOURCE_CONTROLLER_DIR=$cache/bin/flux-source-controller-$SOURCE_CONTROLLER_VERSION"
echo "KUSTOMIZE_CONTROLLER_DIR=$cache/bin/flux-kustomize-controller-$KUSTOMIZE_CONTROLLER_VERSION"
echo "HELM_CONTROLLER_DIR=$cache/bin/flux-helm-controller-$HELM_CONTROLLER_VERSION"
