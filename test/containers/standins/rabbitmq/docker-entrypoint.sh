#!/bin/bash
# Entrypoint of the rabbitmq stand-in: the parts of the official image's entrypoint that
# compose.yaml relies on. As root it gives the data directory to `rabbitmq` and steps down to
# that user (setpriv from util-linux plays the part of gosu); it refuses the deprecated
# image-specific environment variables exactly like the official image, so a compose file that
# still uses them fails here too instead of passing only in the test.
set -euo pipefail

if [[ "${1:-}" == rabbitmq* ]] && [[ "$(id -u)" == 0 ]]; then
  if [[ "$1" == rabbitmq-server ]]; then
    find /var/lib/rabbitmq \! -user rabbitmq -exec chown rabbitmq:rabbitmq '{}' +
  fi
  exec setpriv --reuid=999 --regid=999 --init-groups "${BASH_SOURCE[0]}" "$@"
fi

deprecated=()
for name in RABBITMQ_DEFAULT_PASS_FILE RABBITMQ_DEFAULT_USER_FILE RABBITMQ_MANAGEMENT_SSL_CACERTFILE \
  RABBITMQ_MANAGEMENT_SSL_CERTFILE RABBITMQ_MANAGEMENT_SSL_DEPTH RABBITMQ_MANAGEMENT_SSL_FAIL_IF_NO_PEER_CERT \
  RABBITMQ_MANAGEMENT_SSL_KEYFILE RABBITMQ_MANAGEMENT_SSL_VERIFY RABBITMQ_SSL_CACERTFILE RABBITMQ_SSL_CERTFILE \
  RABBITMQ_SSL_DEPTH RABBITMQ_SSL_FAIL_IF_NO_PEER_CERT RABBITMQ_SSL_KEYFILE RABBITMQ_SSL_VERIFY \
  RABBITMQ_VM_MEMORY_HIGH_WATERMARK; do
  [[ -n "${!name:-}" ]] && deprecated+=("$name")
done
if [[ ${#deprecated[@]} -gt 0 ]]; then
  echo "error: deprecated environment variables detected: ${deprecated[*]} (use a mounted rabbitmq.conf)" >&2
  exit 1
fi

# Like the official image: long node names when the host name is a fully qualified one.
if [[ -z "${RABBITMQ_USE_LONGNAME:-}" ]] && [[ "$(hostname)" != "$(hostname -s)" ]]; then
  export RABBITMQ_USE_LONGNAME=true
fi

exec "$@"
