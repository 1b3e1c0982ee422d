#!/usr/bin/env bash
# Installs the Debian packages the test suite needs when they are missing: Chromium's headless
# shell (browser tests, driven by Playwright through /usr/lib/chromium/chromium-headless-shell,
# never a downloaded browser; the tests fall back to a full /usr/bin/chromium where the shell is
# absent), Node.js (the client engine's self-test), redis-server and redis-cli (Redis tests start
# their own servers, and a Redis Cluster, on free ports) and nginx (a browser race through the
# repo's nginx configuration). Does nothing when all are present.
set -euo pipefail
# With arguments: install exactly those packages (e.g. python3-venv, from the Makefile).
missing=("$@")
if [ $# -eq 0 ]; then
  [ -x /usr/lib/chromium/chromium-headless-shell ] || missing+=(chromium-headless-shell)
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "missing Debian packages: ${missing[*]} (run as root or install them)" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
