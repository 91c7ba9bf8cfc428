#!/usr/bin/env bash
# Debian packages the tests need that a fresh machine may lack: sshd (the SSH git server), git's
# http-backend, openssl (cluster PKI), gpg and gpg-agent (signed-commit tests, spec.source.verify), chromium (the web
# UI's browser tests, driven by playwright-core, which never downloads a browser). Installs only what is missing; never
# touches what is there.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
[[ -x /usr/lib/git-core/git-http-backend ]] || need+=(git)
command -v openssl >/dev/null || need+=(openssl)
[[ -x /usr/sbin/sshd ]] || need+=(openssh-server)
command -v ssh >/dev/null || need+=(openssh-client)
command -v ssh-keygen >/dev/null || need+=(openssh-client)
command -v gpg >/dev/null || need+=(gpg)
command -v gpg-agent >/dev/null || need+=(gpg-agent)
[[ -x /usr/bin/chromium ]] || need+=(chromium)
[[ ${#need[@]} -eq 0 ]] && exit 0
echo "[install-system-deps] installing: ${need[*]}" >&2
sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
