#!/usr/bin/env bash
# Prepares this machine to run the compose stack in containers without a Docker engine: Podman
# (with runc) from Debian's packages, the settings that make it work on these machines, its
# Docker-compatible API socket, and Docker Compose v2 as a `docker` CLI plugin, so the installer,
# dockerode and `docker compose` drive Podman exactly as they would drive Docker. Idempotent: a
# second run only checks. Prints `DOCKER_HOST=...` last; the caller exports it.
#
#   test/containers/prepare-podman.sh          install, configure, start the API socket
#   test/containers/prepare-podman.sh --stop   stop the API socket and the healthcheck ticker
#                                              this script started
#
# Why each setting (details: shared notes on containers):
#   runc               crun, Podman's default runtime, fails on these machines
#   default_ulimits    the container defaults exceed the machine's hard limits; runc then fails
#   netavark           Debian also leaves a CNI config behind whose plugins are not installed
#   healthcheck ticker Podman runs healthchecks from systemd timers and there is no systemd
#                      here (see healthcheck-ticker.sh)
#   Compose v2         the installer uses `docker compose ... up --wait` (healthchecks,
#                      depends_on conditions); Debian has only v1 and podman-compose, so the v2
#                      plugin is built from its Go module (cached in .cache/containers/bin)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="$repo_root/.cache/containers"
socket_dir=/run/podman
socket="$socket_dir/podman.sock"
pid_file="$socket_dir/cybercom-test-service.pid"
ticker_pid_file="$socket_dir/cybercom-test-healthchecks.pid"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
compose_version=v2.40.3
plugin_dir=/usr/local/lib/docker/cli-plugins

log() { printf 'prepare-podman: %s\n' "$*"; }
fail() { printf 'prepare-podman: ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "run as root (Podman runs rootful here so published ports and networks behave like Docker's)"

running() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_services() {
  local f
  for f in "$ticker_pid_file" "$pid_file"; do
    if running "$f"; then
      kill "$(cat "$f")"
      log "stopped pid $(cat "$f") ($(basename "$f" .pid))"
    fi
    rm -f "$f"
  done
}

deb_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

step_packages() {
  # iptables: netavark's NAT and port publishing; catatonit: `init: true` in compose files;
  # debootstrap: the local base image (no registry to pull one from); curl, iproute2: the API
  # socket's ping and the test's remote host (usually present already).
  local wanted=(podman runc netavark aardvark-dns iptables catatonit uidmap debootstrap curl iproute2) missing=() p
  for p in "${wanted[@]}"; do deb_installed "$p" || missing+=("$p"); done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "packages: present (podman $(dpkg-query -W -f='${Version}' podman))"
    return 0
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || fail "apt-get install ${missing[*]} failed"
  log "packages: installed ${missing[*]}"
}

step_config() {
  local conf=/etc/containers/containers.conf want
  want='# Written by test/containers/prepare-podman.sh (cybercom-ts container test).
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1000:1000"]
[engine]
runtime = "runc"
[network]
network_backend = "netavark"'
  if [[ -f $conf ]] && [[ "$(cat "$conf")" == "$want" ]]; then
    log "containers.conf: as wanted"
    return 0
  fi
  if [[ -f $conf ]] && ! grep -q 'cybercom-ts container test' "$conf"; then
    cp "$conf" "$conf.before-cybercom-test"
    log "containers.conf: previous file kept as $conf.before-cybercom-test"
  fi
  mkdir -p /etc/containers
  printf '%s\n' "$want" >"$conf"
  log "containers.conf: written"
}

api_answers() { curl -sf --max-time 5 --unix-socket "$socket" http://d/_ping >/dev/null 2>&1; }

step_service() {
  if api_answers; then
    log "API socket: answering at $socket"
    return 0
  fi
  mkdir -p "$socket_dir"
  rm -f "$socket"
  # --time=0: never exit for inactivity (the test has quiet phases longer than the default 5 s).
  nohup podman system service --time=0 "unix://$socket" >"$socket_dir/cybercom-test-service.log" 2>&1 &
  echo $! >"$pid_file"
  for _ in {1..50}; do
    api_answers && { log "API socket: started at $socket (pid $(cat "$pid_file"))"; return 0; }
    sleep 0.2
  done
  fail "the Podman API socket did not answer; see $socket_dir/cybercom-test-service.log"
}

step_ticker() {
  if running "$ticker_pid_file"; then
    log "healthcheck ticker: running (pid $(cat "$ticker_pid_file"))"
    return 0
  fi
  if [[ -d /run/systemd/system ]]; then
    log "healthcheck ticker: not needed (systemd runs Podman's healthcheck timers)"
    return 0
  fi
  nohup bash "$here/healthcheck-ticker.sh" >/dev/null 2>&1 &
  echo $! >"$ticker_pid_file"
  log "healthcheck ticker: started (pid $(cat "$ticker_pid_file"))"
}

# Compose v2's module carries go.mod directives that `go install pkg@version` refuses, so it is
# built from a writable copy of the downloaded module, like FerretDB in ops/build-engine.sh.
step_compose() {
  local bin="$cache/bin/docker-compose-$compose_version"
  # A fresh checkout has no .cache: the plugin installed by an earlier run is as good.
  if [[ ! -x $bin ]] && [[ "$(docker compose version --short 2>/dev/null)" == "${compose_version#v}" ]]; then
    log "compose: ${compose_version#v} (installed)"
    return 0
  fi
  if [[ ! -x $bin ]]; then
    command -v go >/dev/null 2>&1 || fail "Go is needed to build Docker Compose $compose_version"
    command -v docker >/dev/null 2>&1 || fail "the docker CLI is needed (compose runs as its plugin)"
    local work dir build_log="$cache/compose-build.log"
    work="$(mktemp -d)"
    mkdir -p "$cache/bin"
    dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/docker/compose/v2@$compose_version" 2>"$build_log" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -n $dir && -d $dir ]] || { tail -20 "$build_log" >&2; fail "could not download the Compose module"; }
    cp -R "$dir" "$work/src"
    chmod -R u+w "$work/src"
    (cd "$work/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" \
      -o "$bin.tmp" ./cmd) >>"$build_log" 2>&1 || { tail -20 "$build_log" >&2; fail "building Docker Compose failed (log: $build_log)"; }
    mv -f "$bin.tmp" "$bin"
    rm -rf "$work"
    log "compose: built $compose_version"
  fi
  mkdir -p "$plugin_dir"
  if ! cmp -s "$bin" "$plugin_dir/docker-compose"; then
    install -m 0755 "$bin" "$plugin_dir/docker-compose"
  fi
  log "compose: $(docker compose version --short 2>/dev/null || echo 'not working')"
}

main() {
  if [[ ${1:-} == --stop ]]; then stop_services; return 0; fi
  step_packages
  step_config
  step_service
  step_ticker
  step_compose
  echo "DOCKER_HOST=unix://$socket"
}

main "$@"
