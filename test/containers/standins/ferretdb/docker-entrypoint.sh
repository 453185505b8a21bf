#!/bin/bash
# Entrypoint of the MongoDB-wire stand-in (see the Dockerfile). The mongo image's contract, as far
# as compose.yaml uses it:
#   1. as root, take ownership of the data directories and step down to uid 999;
#   2. on an empty data directory: create the database, the root user from MONGO_INITDB_ROOT_*,
#      then start a temporary server on loopback without TLS or access control and run
#      /docker-entrypoint-initdb.d/* (*.sh sourced, *.js through mongosh), stop it;
#   3. run the real command (FerretDB's, from the compose override) with authentication on when a
#      root user is configured.
# Underneath is a PostgreSQL 15 cluster with DocumentDB in /data/db/postgres, reachable only from
# inside the container (127.0.0.1 and a Unix socket in a 0700 directory). This script stays the
# container's first process so that a stop (SIGTERM) can end FerretDB first and then PostgreSQL
# with a fast shutdown (a clean checkpoint); if either server dies, the other is stopped and the
# container exits, for the restart policy to bring both back.
set -euo pipefail
self="$(readlink -f "${BASH_SOURCE[0]}")"

if [[ "${1:-}" == mongod* || "${1:-}" == -* ]]; then
  echo "error: this is the FerretDB stand-in for the mongo image; it cannot run mongod." >&2
  echo "       Start it with the command line of test/containers/compose.ferretdb.yaml." >&2
  exit 64
fi
# Anything but the server (a shell, `ferretdb --version`) runs as given.
if [[ "${1:-}" != ferretdb || " $* " == *" --version "* || " $* " == *" --help "* ]]; then
  exec "$@"
fi

if [[ "$(id -u)" == 0 ]]; then
  mkdir -p /run/ferretdb-standin
  find /data/db /data/configdb /run/ferretdb-standin \! -user mongodb -exec chown mongodb:mongodb '{}' +
  # HOME as the mongo image's step-down sets it (mongosh keeps its settings there).
  HOME=/data/db exec setpriv --reuid=999 --regid=999 --init-groups "$self" "$@"
fi

pgdata=/data/db/postgres
pg_port=5432
# Per container (not on a volume; made in the image, owned by uid 999): the cluster's socket and
# FerretDB's PostgreSQL URL.
run_dir=/run/ferretdb-standin
url_file="$run_dir/postgresql-url"
# Written last on the first start: a cluster without it is a failed first start, made again.
init_marker="$pgdata/standin-initialized"
# Only reachable through the 0700 socket directory; DocumentDB's background jobs log in as it.
bootstrap_role=postgres
umask 077
export LC_ALL=C.UTF-8 LANG=C.UTF-8

log() { echo "$0: $*"; }

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
unset MONGO_INITDB_ROOT_USERNAME MONGO_INITDB_ROOT_PASSWORD
if [[ -n $root_user || -n $root_password ]] && [[ -z $root_user || -z $root_password ]]; then
  echo "error: MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD must be set together" >&2
  exit 1
fi

psql_local() { psql -X -q -v ON_ERROR_STOP=1 -h "$run_dir" -p "$pg_port" -U "$bootstrap_role" -d postgres; }

# --- PostgreSQL --------------------------------------------------------------------------------
mkdir -p "$run_dir"
chmod 0700 "$run_dir"

if [[ -f $pgdata/PG_VERSION && ! -f $init_marker ]]; then
  log "the first start did not finish; creating the database again"
  rm -rf "$pgdata"
fi
new_cluster=0
if [[ ! -f $pgdata/PG_VERSION ]]; then
  new_cluster=1
  log "initializing a new database"
  # Socket logins are trusted (the socket directory is 0700), TCP logins need a password.
  initdb --pgdata "$pgdata" --username "$bootstrap_role" --encoding UTF8 --locale C.UTF-8 \
    --auth-local trust --auth-host scram-sha-256 >/dev/null
  echo "include 'standin.conf'" >>"$pgdata/postgresql.conf"
fi

# Rewritten at every start, so an image with other settings applies them to an existing volume.
cat >"$pgdata/standin.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$run_dir'
unix_socket_permissions = 0700
shared_preload_libraries = 'pg_cron,pg_documentdb_core,pg_documentdb'
cron.database_name = 'postgres'
# pg_cron runs DocumentDB's jobs (index builds, TTL) through a client session as their owner, the
# bootstrap role: over the trusted socket (TCP would ask that role for a password it has not got).
cron.host = '$run_dir'
# Those jobs run every few seconds; logging each run would bury the servers' own messages.
cron.log_statement = off
cron.log_run = off
# DocumentDB's background jobs (TTL indexes, index builds, dropDatabase) connect back here.
documentdb.localhost_connection_string = 'host=$run_dir port=$pg_port user=$bootstrap_role dbname=postgres'
documentdb.enableCompact = true
documentdb.enableLetAndCollationForQueryMatch = true
documentdb.enableNowSystemVariable = true
documentdb.enableSchemaValidation = true
documentdb.enableBypassDocumentValidation = true
documentdb.enableUserCrud = true
documentdb.maxUserLimit = 100
# The default (1 GB) lets the write-ahead log grow to hundreds of MB under an import.
max_wal_size = '256MB'
min_wal_size = '64MB'
logging_collector = off
log_destination = 'stderr'
log_line_prefix = '%m [%p] postgresql: '
EOF

# A lock file or socket lock left by a container that was killed names a process id of another
# PID namespace; PostgreSQL would take a live process here with the same id for a running server.
# Nothing else in this container can be using the cluster.
rm -f "$pgdata/postmaster.pid" "$run_dir"/.s.PGSQL.*

postgres -D "$pgdata" &
pg_pid=$!
for _ in $(seq 1 300); do
  pg_isready -q -h "$run_dir" -p "$pg_port" -U "$bootstrap_role" && break
  kill -0 "$pg_pid" 2>/dev/null || { echo "error: PostgreSQL exited during start-up" >&2; exit 1; }
  sleep 0.2
done
pg_isready -q -h "$run_dir" -p "$pg_port" -U "$bootstrap_role" || { echo "error: PostgreSQL did not start within 60 s" >&2; exit 1; }

stop_postgres() {
  # SIGINT is PostgreSQL's fast shutdown (sessions ended, a clean checkpoint); SIGTERM would wait
  # for every client to disconnect by itself.
  kill -INT "$pg_pid" 2>/dev/null || true
  wait "$pg_pid" 2>/dev/null || true
}
# As the container's first process this script gets no signal it does not trap. A stop during the
# first start leaves no marker, so the next start begins again.
trap 'stop_postgres; exit 143' TERM INT

if [[ $new_cluster == 1 ]]; then
  # The root user is a PostgreSQL superuser that logs in with a password (SCRAM), which is what
  # FerretDB authenticates MongoDB clients against; \getenv keeps the password out of argv.
  STANDIN_ROOT_USER="$root_user" STANDIN_ROOT_PASSWORD="$root_password" psql_local <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS documentdb CASCADE;
\getenv root_user STANDIN_ROOT_USER
\getenv root_password STANDIN_ROOT_PASSWORD
SELECT length(:'root_user') > 0 AS has_root \gset
\if :has_root
CREATE ROLE :"root_user" WITH LOGIN SUPERUSER PASSWORD :'root_password';
\endif
SQL
fi

# FerretDB's connection: as the root user over TCP when there is one (as the local runtime does),
# else as the bootstrap role over the socket. A 0600 file, not argv (which `ps` shows).
if [[ -n $root_user ]]; then
  STANDIN_U="$root_user" STANDIN_P="$root_password" STANDIN_PORT="$pg_port" node - >"$url_file" <<'JS'
const { STANDIN_U: user, STANDIN_P: password, STANDIN_PORT: port } = process.env;
const e = encodeURIComponent;
process.stdout.write(`postgres://${e(user)}:${e(password)}@127.0.0.1:${port}/postgres\n`);
JS
else
  printf 'postgres://%s@/postgres?host=%s&port=%s\n' "$bootstrap_role" "$run_dir" "$pg_port" >"$url_file"
fi

# --- first start: the mongo image's init phase -------------------------------------------------
if [[ $new_cluster == 1 ]] && compgen -G '/docker-entrypoint-initdb.d/*' >/dev/null; then
  # As mongod's init phase: loopback only, no TLS, no access control, so scripts written for the
  # mongo image call mongosh without credentials.
  ferretdb --postgresql-url-file="$url_file" --listen-addr=127.0.0.1:27017 --listen-tls= \
    --no-auth --log-level=warn &
  init_pid=$!
  for _ in $(seq 1 150); do
    mongosh --quiet --host 127.0.0.1 --port 27017 --eval 'db.runCommand({ ping: 1 }).ok' >/dev/null 2>&1 && break
    kill -0 "$init_pid" 2>/dev/null || { echo "error: the temporary server exited" >&2; stop_postgres; exit 1; }
    sleep 0.2
  done
  # A subshell: the scripts see MONGO_INITDB_* as in the mongo image, the servers never do.
  # (Not `( ... ) || status=$?`: that would turn off errexit inside the scripts.)
  set +e
  (
    set -e
    export MONGO_INITDB_DATABASE="${MONGO_INITDB_DATABASE:-test}"
    if [[ -n $root_user ]]; then export MONGO_INITDB_ROOT_USERNAME="$root_user" MONGO_INITDB_ROOT_PASSWORD="$root_password"; fi
    for f in /docker-entrypoint-initdb.d/*; do
      case "$f" in
        *.sh)
          log "running $f"
          # shellcheck source=/dev/null # the image's init scripts, known only when the container runs
          . "$f"
          ;;
        *.js) log "running $f"; mongosh --quiet --host 127.0.0.1 --port 27017 "$MONGO_INITDB_DATABASE" "$f" ;;
        *) [[ -e $f ]] && log "ignoring $f" ;;
      esac
    done
  )
  init_status=$?
  set -e
  kill -TERM "$init_pid"
  wait "$init_pid" || true
  if [[ $init_status != 0 ]]; then
    echo "error: an init script failed (status $init_status)" >&2
    stop_postgres
    exit 1
  fi
fi
unset root_password
if [[ $new_cluster == 1 ]]; then
  date -u +%FT%TZ >"$init_marker"
  log "initialization done"
fi

# --- the server --------------------------------------------------------------------------------
args=("$1" --postgresql-url-file="$url_file")
# Without a root user nobody could log in: no access control, as the mongo image then runs.
[[ -n $root_user ]] || args+=(--no-auth)
args+=("${@:2}")

ferret_pid=""
stop_all() {
  trap '' TERM INT
  log "stopping"
  if [[ -n $ferret_pid ]]; then
    kill -TERM "$ferret_pid" 2>/dev/null || true
    wait "$ferret_pid" 2>/dev/null || true
  fi
  stop_postgres
  exit "${1:-0}"
}
trap 'stop_all 0' TERM INT

"${args[@]}" &
ferret_pid=$!
status=0
# Returns when either server exits (or a trapped signal arrives, which ends in stop_all).
wait -n "$pg_pid" "$ferret_pid" || status=$?
if kill -0 "$ferret_pid" 2>/dev/null; then
  echo "error: PostgreSQL exited (status $status); stopping FerretDB" >&2
else
  echo "error: FerretDB exited (status $status); stopping PostgreSQL" >&2
fi
stop_all "$(( status == 0 ? 1 : status ))"
