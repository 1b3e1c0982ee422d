#!/usr/bin/env bash
# Makes sure the Docker daemon holds the three base images that the Dockerfile and compose.yaml
# name: python:3.11-slim, redis:7 and nginx:1.25. An image already there is kept; a missing one is
# pulled when a registry answers. Where none is reachable, a *stand-in* is built under the same
# name, once per machine (the images stay in the daemon): a minimal Debian bookworm made by
# debootstrap from the Debian mirror apt uses here, imported into Docker, then Debian's
# python3.11, redis-server (7.0) or nginx (1.22) added with apt. Each stand-in behaves as the
# official image does where compose.yaml relies on it (`python`/`pip`, Redis without protected
# mode in /data, nginx with /var/cache/nginx) and is labelled `org.solrace.stand-in`.
#
# Takes about 3 minutes on a 2-core machine the first time (debootstrap ~75 s, the three apt
# builds ~1.5 min), nothing after. Needs root (debootstrap) unless the images are there.
# Exit status: 0 when all three are there; 3 when they are missing and cannot be made here
# (the message says why; tests/test_compose.py skips on it); anything else is a failure.
set -euo pipefail

IMAGES=(python:3.11-slim redis:7 nginx:1.25)
BASE=solrace-standin/debian:bookworm
LABEL=org.solrace.stand-in

cannot() { echo "docker-base-images: $*" >&2; exit 3; }
have() { docker image inspect "$1" >/dev/null 2>&1; }

docker info >/dev/null 2>&1 || cannot "no Docker daemon answers"

missing=()
for image in "${IMAGES[@]}"; do
  have "$image" || missing+=("$image")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# A registry may be reachable: the real images first. With none, a pull fails within seconds
# (the registry's name does not resolve); the timeout bounds a registry that does not answer.
if [ "${SOLRACE_NO_PULL:-}" != 1 ]; then
  left=()
  for image in "${missing[@]}"; do
    timeout 120 docker pull -q "$image" >/dev/null 2>&1 || left+=("$image")
  done
  missing=("${left[@]+"${left[@]}"}")
  [ ${#missing[@]} -eq 0 ] && exit 0
fi

# The Debian mirror apt uses on this machine (the first that serves `debian`), else Debian's.
apt_uri() {
  local suffix=$1 uri
  uri=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
          /etc/apt/sources.list 2>/dev/null \
        | grep -oE 'https?://[^ ]+' | sed 's:/*$::' | grep -E "/${suffix}\$" | head -n 1 || true)
  echo "${uri:-http://deb.debian.org/${suffix}}"
}

if ! have "$BASE"; then
  [ "$(id -u)" -eq 0 ] || cannot "making the stand-in base images needs root (debootstrap)"
  if ! command -v debootstrap >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || cannot "debootstrap is missing and there is no apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
      || cannot "could not install debootstrap"
  fi
  mirror=$(apt_uri debian)
  security=$(apt_uri debian-security)
  rootfs=$(mktemp -d /tmp/solrace-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  echo "docker-base-images: debootstrap bookworm from $mirror (about a minute)" >&2
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { tail -n 20 "$rootfs.log" >&2; rm -f "$rootfs.log"; cannot "debootstrap failed"; }
  rm -f "$rootfs.log"
  cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  # As Debian's own images: no services started by package scripts, no recommends, no caches.
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  echo 'APT::Install-Recommends "false";' >"$rootfs/etc/apt/apt.conf.d/90norecommends"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' -c 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
fi

# Each stand-in's Dockerfile (its context: the local certificate authorities, below).
standin() {
  case "$1" in
    python:3.11-slim) cat <<EOF
FROM $BASE
COPY local-ca/ /usr/local/share/ca-certificates/
RUN apt-get update && apt-get install -y python3 python3-venv python3-pip ca-certificates \\
 && rm -rf /var/lib/apt/lists/* \\
 && ln -s /usr/bin/python3 /usr/local/bin/python && ln -s /usr/bin/pip3 /usr/local/bin/pip \\
 && rm -f /usr/lib/python3.11/EXTERNALLY-MANAGED
LABEL $LABEL="python:3.11-slim: Debian bookworm's python3.11"
CMD ["python3"]
EOF
    ;;
    redis:7) echo "FROM $BASE"; cat <<'EOF'
RUN apt-get update && apt-get install -y redis-server && rm -rf /var/lib/apt/lists/* \
 && mkdir /data && chown redis:redis /data \
 && printf '%s\n' '#!/bin/sh' \
    '# As the official image: no protected mode (only the compose network reaches Redis).' \
    'if [ "$1" = redis-server ]; then' \
    '  shift' \
    '  case "${1:-}" in ""|-*) set -- --protected-mode no "$@" ;;' \
    '  *) conf=$1; shift; set -- "$conf" --protected-mode no "$@" ;; esac' \
    '  exec redis-server "$@"' \
    'fi' \
    'exec "$@"' >/usr/local/bin/docker-entrypoint.sh \
 && chmod 755 /usr/local/bin/docker-entrypoint.sh
LABEL org.solrace.stand-in="redis:7: Debian bookworm's redis-server 7.0"
VOLUME /data
WORKDIR /data
USER redis
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
    ;;
    nginx:1.25) cat <<EOF
FROM $BASE
RUN apt-get update && apt-get install -y nginx && rm -rf /var/lib/apt/lists/* \\
 && mkdir -p /var/cache/nginx \\
 && ln -sf /dev/stderr /var/log/nginx/error.log && ln -sf /dev/stdout /var/log/nginx/access.log
LABEL $LABEL="nginx:1.25: Debian bookworm's nginx 1.22"
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
    ;;
  esac
}

# The build context: the certificate authorities this machine added to its own (Debian's
# /usr/local/share/ca-certificates), trusted in the python stand-in too: where the network
# inspects TLS, pip reaches the package index through it, as the host's pip does.
context=$(mktemp -d /tmp/solrace-standin.XXXXXX)
trap 'rm -rf "$context"' EXIT
mkdir "$context/local-ca"
cp /usr/local/share/ca-certificates/*.crt "$context/local-ca/" 2>/dev/null || true
for image in "${missing[@]}"; do
  echo "docker-base-images: building a stand-in for $image" >&2
  standin "$image" >"$context/Dockerfile"
  if ! docker build -t "$image" "$context" >"$context/log" 2>&1; then
    tail -n 30 "$context/log" >&2
    echo "docker-base-images: the stand-in for $image failed to build" >&2
    exit 1
  fi
done
