#!/bin/bash
# Entrypoint of the MongoDB-wire stand-in (see the Dockerfile). The mongo image's contract, as far
# as compose.yaml uses it:
#   1. as root, take ownership of the data directories and step down to uid 999;
#   2. on an empty data directory: start a temporary server on loopback without TLS, create the
#      root user from MONGO_INITDB_ROOT_*, run /docker-entrypoint-initdb.d/* (*.sh sourced, *.js
#      through mongosh), stop the temporary server;
#   3. run the real command (FerretDB's, from the compose override) with authentication on.
# FerretDB differs from mongod in two ways this script bridges: its first user can only be made
# as its "setup user" (it refuses createUser without a login), and authentication is a flag
# (--test-enable-new-auth) rather than something the stored users switch on.
set -euo pipefail
self="$(readlink -f "$BASH_SOURCE")"

if [[ "${1:-}" == mongod* || "${1:-}" == -* ]]; then
  echo "error: this is the FerretDB stand-in for the mongo image; it cannot run mongod." >&2
  echo "       Start it with the command line of test/containers/compose.ferretdb.yaml." >&2
  exit 64
fi

if [[ "$(id -u)" == 0 ]]; then
  find /data/db /data/configdb \! -user mongodb -exec chown mongodb:mongodb '{}' +
  exec setpriv --reuid=999 --regid=999 --init-groups "$self" "$@"
fi

# VAR_FILE instead of VAR, as in the official image (docker secrets).
file_env() {
  local var="$1" file_var="${1}_FILE"
  if [[ -n "${!var:-}" && -n "${!file_var:-}" ]]; then
    echo "error: both $var and $file_var are set (but are exclusive)" >&2
    exit 1
  fi
  if [[ -n "${!file_var:-}" ]]; then
    export "$var"="$(<"${!file_var}")"
  fi
  unset "$file_var"
}
file_env MONGO_INITDB_ROOT_USERNAME
file_env MONGO_INITDB_ROOT_PASSWORD
root_user="${MONGO_INITDB_ROOT_USERNAME:-}"
root_password="${MONGO_INITDB_ROOT_PASSWORD:-}"
if [[ -n $root_user || -n $root_password ]] && [[ -z $root_user || -z $root_password ]]; then
  echo "error: MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD must be set together" >&2
  exit 1
fi

# FerretDB keeps one SQLite file per database: none means a new installation.
if ! compgen -G '/data/db/*.sqlite' >/dev/null && { [[ -n $root_user ]] || compgen -G '/docker-entrypoint-initdb.d/*' >/dev/null; }; then
  echo "$0: initializing a new database"
  init_env=(FERRETDB_LISTEN_ADDR=127.0.0.1:27017 FERRETDB_LISTEN_TLS= FERRETDB_LOG_LEVEL=warn)
  if [[ -n $root_user ]]; then
    # The root user is FerretDB's setup user (SCRAM mode, created with the `admin` database).
    init_env+=(FERRETDB_TEST_ENABLE_NEW_AUTH=true FERRETDB_SETUP_DATABASE=admin
      FERRETDB_SETUP_USERNAME="$root_user" FERRETDB_SETUP_PASSWORD="$root_password")
  fi
  env "${init_env[@]}" ferretdb &
  init_pid=$!
  for _ in $(seq 1 100); do
    mongosh --quiet --host 127.0.0.1 --port 27017 --eval 'db.runCommand({ ping: 1 }).ok' >/dev/null 2>&1 && break
    kill -0 "$init_pid" 2>/dev/null || { echo "error: the temporary server exited" >&2; exit 1; }
    sleep 0.2
  done
  # The init scripts call `mongosh` without credentials, as the mongo image's init phase allows
  # (it runs without access control); FerretDB needs a login, which this wrapper adds.
  wrapper_dir="$(mktemp -d)"
  ln -s /usr/local/lib/ferretdb-standin/init-mongosh.sh "$wrapper_dir/mongosh"
  export INIT_MONGOSH_USER="$root_user" INIT_MONGOSH_PASSWORD="$root_password"
  PATH="$wrapper_dir:$PATH"
  export MONGO_INITDB_DATABASE="${MONGO_INITDB_DATABASE:-test}"
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "$0: running $f"; . "$f" ;;
      *.js) echo "$0: running $f"; mongosh --quiet --host 127.0.0.1 --port 27017 "$MONGO_INITDB_DATABASE" "$f" ;;
      *) [[ -e $f ]] && echo "$0: ignoring $f" ;;
    esac
  done
  PATH="${PATH#"$wrapper_dir:"}"
  rm -rf "$wrapper_dir"
  unset INIT_MONGOSH_USER INIT_MONGOSH_PASSWORD
  kill "$init_pid"
  wait "$init_pid" || true
  echo "$0: initialization done"
fi

# Users exist (or were asked for): require logins, as mongod does with authorization enabled.
if [[ -n $root_user ]] || compgen -G '/data/db/admin.sqlite' >/dev/null; then
  export FERRETDB_TEST_ENABLE_NEW_AUTH=true
fi
unset MONGO_INITDB_ROOT_USERNAME MONGO_INITDB_ROOT_PASSWORD root_password

exec "$@"
