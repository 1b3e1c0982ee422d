#!/usr/bin/env bash
# Installs the Debian packages the test suite needs when they are missing: Chromium (browser tests,
# driven by Playwright through /usr/bin/chromium, never a downloaded browser) and redis-server
# (Redis tests start their own on a free port). Does nothing when both are present.
set -euo pipefail
# With arguments: install exactly those packages (e.g. python3-venv, from the Makefile).
missing=("$@")
if [ $# -eq 0 ]; then
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
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
