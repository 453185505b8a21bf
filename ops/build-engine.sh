#!/usr/bin/env bash
# Builds the local runtime's database engine: FerretDB v2 (MongoDB wire protocol) on Debian's
# PostgreSQL 15 with the DocumentDB extensions. Idempotent and cached: a second run with the same
# pinned sources is a no-op that prints one line per part.
#
#   ops/build-engine.sh                  verify the sources, build what is missing or stale
#   ops/build-engine.sh --check-sources  only find and verify the sources (changes nothing)
#   ops/build-engine.sh --sources PATH   take the extension sources from PATH (also ENGINE_SOURCES)
#   ops/build-engine.sh --legacy-ferretdb-v1
#                                        only provide FerretDB v1 (SQLite) at .cache/bin/ferretdb-v1,
#                                        which the installer needs to migrate an installation whose
#                                        data is still in FerretDB v1's SQLite files
#
# Where the extension sources come from, first match wins:
#   1. --sources PATH / ENGINE_SOURCES: a directory holding `<name>-*.tar.gz` archives or extracted
#      `<name>*/` trees, or one .tar.gz archive of such a directory;
#   2. a `shared/vendor` directory beside the repository (this project's own machines);
#   3. the pinned upstream archives, downloaded (needs internet).
# Every source is verified by the content hash of its extracted tree (ops/deps/engine/sources.tsv)
# before anything is built or installed; a missing or mismatching source stops here.
#
# What is installed: Debian packages (PostgreSQL 15 and the build tools), the extensions into
# PostgreSQL's own directories (PGXS `make install`), and FerretDB into .cache/bin/ferretdb.
# Built FerretDB binaries are kept in the user cache (CYBERCOM_CACHE_DIR, default
# ~/.cache/cybercom-ts) so a fresh clone on the same machine does not rebuild.
#
# FerretDB v1 (earlier versions' engine, pinned in ops/deps/ferretdb-v1/go.mod) is needed only to
# migrate their data: a v1 binary found at .cache/bin/ferretdb is kept as .cache/bin/ferretdb-v1
# before v2 replaces it, and --legacy-ferretdb-v1 reuses that or builds v1 into the user cache.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins_file="$repo_root/ops/deps/engine/sources.tsv"
ferretdb_mod_dir="$repo_root/ops/deps/ferretdb"
ferretdb_v1_mod_dir="$repo_root/ops/deps/ferretdb-v1"
cache_dir="${CYBERCOM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cybercom-ts}"
pg_major=15
# Bumped whenever the build steps below change what they produce (forces a rebuild).
recipe=1

log() { printf 'build-engine: %s\n' "$*"; }
STEP_PREFIX=build-engine
# shellcheck source=lib/timed-steps.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/timed-steps.sh"
fail() { printf 'build-engine: ERROR: %s\n' "$*" >&2; exit 1; }

# shellcheck source=lib/debian-packages.sh
source "$repo_root/ops/lib/debian-packages.sh"

# Debian packages: PostgreSQL itself, the extensions DocumentDB requires that Debian has (PostGIS,
# RUM), and what building the others needs. Not postgresql-15-cron: its 1.4 cannot run DocumentDB's
# schedules ("invalid schedule: 2 seconds"), so pg_cron is built from the pinned source.
ENGINE_PACKAGES=(build-essential pkg-config "postgresql-$pg_major" "postgresql-server-dev-$pg_major"
  "postgresql-$pg_major-postgis-3" "postgresql-$pg_major-rum" libbson-dev libpcre2-dev
  libintelrdfpmath-dev libkrb5-dev ca-certificates curl)

step_packages() {
  apt_install "${ENGINE_PACKAGES[@]}"
  if [[ ${#APT_INSTALLED[@]} -gt 0 ]]; then log "packages: installed ${APT_INSTALLED[*]}"; fi
  log "packages: present (postgresql $(dpkg-query -W -f='${Version}' "postgresql-$pg_major"))"
}

# The content hash of an extracted source tree (see ops/deps/engine/sources.tsv).
tree_hash() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sed 's/^/F /' | sha256sum | cut -d' ' -f1)
}

# name version hash url, one line per pinned source.
read_pins() { grep -v '^#' "$pins_file" | grep -v '^[[:space:]]*$'; }

work_dir=""
cleanup() { [[ -n $work_dir ]] && rm -rf "$work_dir"; return 0; }
trap cleanup EXIT

# Extracts a .tar.gz into a new directory, dropping the archive's top directory.
extract_tree() {
  local archive="$1" dest="$2"
  mkdir -p "$dest"
  tar -xzf "$archive" -C "$dest" --strip-components=1 || fail "cannot extract $archive"
}

# Sets SOURCE_ROOTS: the directories the sources are looked up in (an archive given as the
# source is unpacked first).
SOURCE_ROOTS=()
find_source_roots() {
  local given="${SOURCES_ARG:-${ENGINE_SOURCES:-}}"
  if [[ -n $given ]]; then
    [[ -e $given ]] || fail "engine sources: $given does not exist"
    if [[ -f $given ]]; then
      local unpacked="$work_dir/given"
      mkdir -p "$unpacked"
      tar -xzf "$given" -C "$unpacked" || fail "engine sources: cannot extract $given"
      # An archive of one directory: look inside it.
      local entries=("$unpacked"/*)
      if [[ ${#entries[@]} -eq 1 && -d ${entries[0]} ]]; then SOURCE_ROOTS=("${entries[0]}"); else SOURCE_ROOTS=("$unpacked"); fi
    else
      SOURCE_ROOTS=("$(cd "$given" && pwd)")
    fi
    return 0
  fi
  local vendor
  vendor="$(cd "$repo_root/.." && pwd)/shared/vendor"
  if [[ -d $vendor ]]; then SOURCE_ROOTS=("$vendor"); fi
  return 0
}

# Puts the verified tree of source $1 into $work_dir/src/$1; prints where it came from.
fetch_source() {
  local name="$1" want="$2" url="$3" root dest="$work_dir/src/$1" origin="" candidate
  for root in "${SOURCE_ROOTS[@]}"; do
    for candidate in "$root/$name"-*.tar.gz "$root/$name".tar.gz; do
      if [[ -f $candidate ]]; then extract_tree "$candidate" "$dest"; origin="$candidate"; break 2; fi
    done
    for candidate in "$root/$name" "$root/$name"-*/; do
      if [[ -d $candidate ]]; then mkdir -p "$dest" && cp -R "$candidate/." "$dest/"; origin="$candidate"; break 2; fi
    done
  done
  if [[ -z $origin ]]; then
    if [[ -n ${SOURCES_ARG:-${ENGINE_SOURCES:-}} ]]; then
      fail "engine sources: no $name archive or directory in ${SOURCES_ARG:-$ENGINE_SOURCES}"
    fi
    command -v curl >/dev/null 2>&1 || fail "engine sources: $name not found locally and curl is missing to download $url"
    local archive="$work_dir/$name.tar.gz"
    curl -fsSL --retry 2 -o "$archive" "$url" ||
      fail "engine sources: $name not found locally and the download of $url failed (give a directory of the archives with --sources or ENGINE_SOURCES)"
    extract_tree "$archive" "$dest"
    origin="$url"
  fi
  local got
  got="$(tree_hash "$dest")"
  [[ $got == "$want" ]] || fail "engine sources: $name from $origin does not match the pinned content (tree sha256 $got, expected $want); nothing was built or installed"
  printf '%s' "$origin"
}

# Fetches and verifies every pinned source; sets SOURCE_ID (one id for the whole set).
verify_sources() {
  work_dir="$(mktemp -d)"
  find_source_roots
  local name version hash url origin ids=""
  while IFS=$'\t' read -r name version hash url; do
    origin="$(fetch_source "$name" "$hash" "$url")"
    log "source $name $version: verified ($origin)"
    ids+="$name=$hash;"
  done < <(read_pins)
  SOURCE_ID="$(printf '%s' "$ids" | sha256sum | cut -c1-16)"
}

pg_config_bin() { echo "/usr/lib/postgresql/$pg_major/bin/pg_config"; }

extensions_stamp() { echo "$("$(pg_config_bin)" --pkglibdir)/cybercom-engine.build"; }

extensions_build_id() { printf 'recipe=%s sources=%s pg=%s' "$recipe" "$1" "$("$(pg_config_bin)" --version)"; }

extensions_present() {
  local sharedir libdir
  sharedir="$("$(pg_config_bin)" --sharedir)"
  libdir="$("$(pg_config_bin)" --pkglibdir)"
  [[ -f $sharedir/extension/documentdb.control && -f $libdir/pg_documentdb.so && -f $libdir/pg_documentdb_core.so &&
    -f $libdir/pg_cron.so && -f $libdir/vector.so && "$(cat "$(extensions_stamp)" 2>/dev/null)" == "$1" ]]
}

step_extensions() {
  local build_id
  build_id="$(extensions_build_id "$SOURCE_ID")"
  if extensions_present "$build_id"; then
    log "extensions: present (pg_cron, vector, documentdb; sources $SOURCE_ID)"
    return 0
  fi
  local src="$work_dir/src" make_args=(with_llvm=no PG_CONFIG="$(pg_config_bin)")
  # Debian ships the Intel decimal library without the pkg-config file DocumentDB asks for.
  local pc_dir="$work_dir/pkgconfig"
  mkdir -p "$pc_dir"
  printf 'Name: intelmathlib\nDescription: Intel decimal floating point library\nVersion: 2.0\nLibs: -l:libbidgcc000.a\nCflags:\n' >"$pc_dir/intelmathlib.pc"
  export PKG_CONFIG_PATH="$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  {
    make -C "$src/pg_cron" -j"$jobs" "${make_args[@]}" && as_root make -C "$src/pg_cron" "${make_args[@]}" install
    make -C "$src/pgvector" -j"$jobs" "${make_args[@]}" OPTFLAGS="" && as_root make -C "$src/pgvector" "${make_args[@]}" OPTFLAGS="" install
    make -C "$src/documentdb/pg_documentdb_core" -j"$jobs" "${make_args[@]}" &&
      as_root make -C "$src/documentdb/pg_documentdb_core" "${make_args[@]}" install
    # Debian's libbson 1.23 lacks BSON_SUBTYPE_SENSITIVE (added upstream later, same value).
    local copt="-DBSON_SUBTYPE_SENSITIVE=0x08 -Wno-error=switch"
    make -C "$src/documentdb/pg_documentdb" -j"$jobs" "${make_args[@]}" COPT="$copt" &&
      as_root make -C "$src/documentdb/pg_documentdb" "${make_args[@]}" COPT="$copt" install
  } >"$work_dir/build.log" 2>&1 || { tail -n 30 "$work_dir/build.log" >&2; fail "building the PostgreSQL extensions failed"; }
  printf '%s\n' "$build_id" | as_root tee "$(extensions_stamp)" >/dev/null
  log "extensions: built and installed (pg_cron, vector, documentdb; sources $SOURCE_ID)"
}

# Builds FerretDB from its Go module into $4: build_ferretdb_module MOD_DIR MODULE VERSION OUT.
# The module zip lacks build/version/version.txt (generated in FerretDB's own repository); a
# binary built without it does not start, so it is built from a writable copy with the file added.
build_ferretdb_module() {
  local pin_dir="$1" module="$2" version="$3" out="$4" mod_dir
  command -v go >/dev/null 2>&1 || fail "ferretdb: Go >= 1.24 is needed to build FerretDB $version (https://go.dev/dl/)"
  [[ -n $work_dir ]] || work_dir="$(mktemp -d)"
  mod_dir="$(cd "$pin_dir" && GOFLAGS=-mod=mod go mod download "$module" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' "$module")"
  [[ -n $mod_dir && -d $mod_dir ]] || fail "ferretdb: could not locate the module $module"
  local copy="$work_dir/ferretdb-$version"
  cp -R "$mod_dir" "$copy"
  chmod -R u+w "$copy"
  printf '%s\n' "$version" >"$copy/build/version/version.txt"
  mkdir -p "$(dirname "$out")"
  local tmp
  tmp="$(private_tmp "$out")"
  (cd "$copy" && GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -o "$tmp" ./cmd/ferretdb) || fail "ferretdb: go build of $version failed"
  "$tmp" --version >/dev/null || fail "ferretdb: the built $version binary does not run"
  mv -f "$tmp" "$out"
  log "ferretdb: built $version"
}

ferretdb_version() { sed -n 's/^require github.com\/FerretDB\/FerretDB\/v2 //p' "$ferretdb_mod_dir/go.mod"; }

step_ferretdb() {
  local version bin="$repo_root/.cache/bin/ferretdb"
  version="$(ferretdb_version)"
  [[ -n $version ]] || fail "ferretdb: no pinned version in $ferretdb_mod_dir/go.mod"
  if [[ -x $bin ]] && [[ "$(cat "$bin.build" 2>/dev/null)" == "$version" ]] && "$bin" --version >/dev/null 2>&1; then
    log "ferretdb: present ($version)"
    return 0
  fi
  local cached="$cache_dir/ferretdb-$version/ferretdb"
  if ! { [[ -x $cached ]] && "$cached" --version >/dev/null 2>&1; }; then
    build_ferretdb_module "$ferretdb_mod_dir" github.com/FerretDB/FerretDB/v2 "$version" "$cached"
  fi
  mkdir -p "$(dirname "$bin")"
  keep_legacy_ferretdb "$bin"
  install_copy "$cached" "$bin"
  printf '%s\n' "$version" >"$bin.build"
  log "ferretdb: installed $version into .cache/bin/ferretdb"
}

# FerretDB v1: only what migrating an installation's v1 SQLite data into the v2 engine needs.
legacy_ferretdb_bin="$repo_root/.cache/bin/ferretdb-v1"

ferretdb_v1_version() { sed -n 's/^require github.com\/FerretDB\/FerretDB //p' "$ferretdb_v1_mod_dir/go.mod"; }

# True when $1 is a FerretDB v1 binary that runs (its .build marker, written by whoever built it
# into .cache/bin, starts with "v1.").
is_ferretdb_v1() { [[ -x $1 ]] && [[ "$(cat "$1.build" 2>/dev/null)" == v1.* ]] && "$1" --version >/dev/null 2>&1; }

# Earlier versions built FerretDB v1 into .cache/bin/ferretdb: keep it (with its marker) as
# .cache/bin/ferretdb-v1 before v2 replaces it, so an installation's v1 data can still be read.
keep_legacy_ferretdb() {
  local bin="$1"
  is_ferretdb_v1 "$bin" || return 0
  mv -f "$bin" "$legacy_ferretdb_bin"
  mv -f "$bin.build" "$legacy_ferretdb_bin.build"
  log "ferretdb: kept the FerretDB $(cat "$legacy_ferretdb_bin.build") binary as .cache/bin/ferretdb-v1 (to migrate v1 data)"
}

# --legacy-ferretdb-v1: .cache/bin/ferretdb-v1, from (first match) itself, a v1 binary still at
# .cache/bin/ferretdb, the user cache, or a build of the pinned module (Go needed). Nothing else
# of the engine is touched. The earlier versions' one-line _id index fix is not applied: it only
# speeds up lookups by _id, and a migration reads each collection once, in order.
step_legacy_ferretdb_v1() {
  local version bin="$legacy_ferretdb_bin" current="$repo_root/.cache/bin/ferretdb"
  version="$(ferretdb_v1_version)"
  [[ -n $version ]] || fail "ferretdb v1: no pinned version in $ferretdb_v1_mod_dir/go.mod"
  if is_ferretdb_v1 "$bin"; then
    log "ferretdb v1: present ($(cat "$bin.build")) at .cache/bin/ferretdb-v1"
    return 0
  fi
  mkdir -p "$(dirname "$bin")"
  if is_ferretdb_v1 "$current"; then
    install_copy "$current" "$bin"
    cp -f "$current.build" "$bin.build"
    log "ferretdb v1: copied $(cat "$bin.build") from .cache/bin/ferretdb to .cache/bin/ferretdb-v1"
    return 0
  fi
  local cached="$cache_dir/ferretdb-$version/ferretdb"
  if ! { [[ -x $cached ]] && "$cached" --version >/dev/null 2>&1; }; then
    build_ferretdb_module "$ferretdb_v1_mod_dir" github.com/FerretDB/FerretDB "$version" "$cached"
  fi
  install_copy "$cached" "$bin"
  printf '%s\n' "$version" >"$bin.build"
  log "ferretdb v1: installed $version into .cache/bin/ferretdb-v1"
}

# A temporary name beside $1 that no other run uses (two runs side by side once shared "$out.tmp":
# one moved the other's half-written binary into place): this process's id and a random number.
private_tmp() { printf '%s.tmp.%s.%s\n' "$1" "$$" "$RANDOM"; }

# Copies $1 to $2 through a private temporary file, so $2 is always whole.
install_copy() {
  local tmp
  tmp="$(private_tmp "$2")"
  cp -f "$1" "$tmp" && chmod 0755 "$tmp" && mv -f "$tmp" "$2"
}

# One build at a time on this machine: runs side by side (an install and a test run) share the
# user cache, the checkout's .cache/bin and PostgreSQL's own directories. A second run waits for
# the first, then finds everything built.
hold_build_lock() {
  mkdir -p "$cache_dir"
  exec {build_lock_fd}>"$cache_dir/build-engine.lock"
  if ! flock -n "$build_lock_fd"; then
    log "waiting for another engine build on this machine to finish"
    flock "$build_lock_fd"
  fi
}

main() {
  local check_only=0 legacy_v1=0
  SOURCES_ARG=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --check-sources) check_only=1 ;;
      --legacy-ferretdb-v1) legacy_v1=1 ;;
      --sources) [[ $# -ge 2 ]] || fail "--sources needs a path"; SOURCES_ARG="$2"; shift ;;
      --sources=*) SOURCES_ARG="${1#--sources=}" ;;
      -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) fail "unknown argument: $1 (see --help)" ;;
    esac
    shift
  done
  if [[ $check_only -eq 1 ]]; then
    verify_sources
    return 0
  fi
  hold_build_lock
  if [[ $legacy_v1 -eq 1 ]]; then
    step_legacy_ferretdb_v1
    return 0
  fi
  timed_step 'Debian packages for the engine' step_packages
  timed_step 'extension sources' verify_sources
  timed_step 'PostgreSQL extensions (pg_cron, pgvector, DocumentDB)' step_extensions
  timed_step 'FerretDB' step_ferretdb
}

main "$@"
