#!/bin/sh
# Starts the worker of this bundle on a remote machine (made by ops/worker-bundle).
#   ./run-worker.sh [auto|docker|local]
# docker: loads worker-image.tar.gz (docker save format) and runs it with a restart policy.
# local:  runs app/worker.mjs with Node.js >= 20.19 in the foreground (no container engine needed;
#         put it under systemd or another supervisor for restarts, see README.md).
# auto (default): docker when the bundle has the image and a container engine answers, else local.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-auto}
cd "$here"

if ! sha256sum -c SHA256SUMS --quiet; then
  echo "run-worker: checksums do not match (SHA256SUMS): the bundle is damaged or was changed" >&2
  exit 1
fi

if [ "$mode" = auto ]; then
  if [ -f worker-image.tar.gz ] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    mode=docker
  else
    mode=local
  fi
fi

case "$mode" in
docker)
  [ -f worker-image.tar.gz ] || { echo "run-worker: this bundle has no image (made with --no-image); use: $0 local" >&2; exit 1; }
  image=$(cat image-name)
  # Decompressed here: Podman's Docker API (unlike Docker's) refuses a gzip-compressed archive.
  gunzip -c worker-image.tar.gz | docker load
  # The image runs as uid 1000 and must read the key: it gets its own copy, owned by that user.
  tls="$here/tls-container"
  rm -rf "$tls"
  mkdir -m 0700 "$tls"
  cp certs/ca.pem certs/client.pem certs/client.key certs/client-combined.pem "$tls/"
  chmod 0600 "$tls"/*
  if [ "$(id -u)" = 0 ]; then chown -R 1000:1000 "$tls"; fi
  docker rm -f cybercom-worker >/dev/null 2>&1 || true
  docker run --detach --name cybercom-worker --restart unless-stopped \
    --env-file worker.env --volume "$tls:/run/cybercom/tls:ro" \
    --read-only --tmpfs /tmp --security-opt no-new-privileges:true --cap-drop ALL \
    "$image"
  echo "run-worker: container cybercom-worker started (docker logs -f cybercom-worker)"
  ;;
local)
  command -v node >/dev/null 2>&1 || { echo "run-worker: Node.js >= 20.19 is needed for the local mode" >&2; exit 1; }
  set -a
  # worker.env is written when the bundle is installed, so it is not there to check.
  # shellcheck source=/dev/null
  . ./worker.env
  set +a
  # worker.env names the in-container paths; point at this bundle's files instead.
  export BROKER_TLS_CA_FILE="$here/certs/ca.pem" BROKER_TLS_CERT_FILE="$here/certs/client.pem" BROKER_TLS_KEY_FILE="$here/certs/client.key"
  export MONGO_TLS_CA_FILE="$here/certs/ca.pem" MONGO_TLS_CERT_KEY_FILE="$here/certs/client-combined.pem"
  export WORKER_TASK_MODULES="${LOCAL_TASK_MODULES:-$here/app/tasks.mjs}"
  exec node "$here/app/worker.mjs"
  ;;
*)
  echo "usage: $0 [auto|docker|local]" >&2
  exit 2
  ;;
esac
