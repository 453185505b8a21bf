#!/usr/bin/env bash
# Installs what the service needs to run on this machine as local processes (and what the test
# suite builds on); a fast no-op when everything is present. Used by `npm run up` and by
# test/support/prepare-env.sh. One line of output per step; each step is a small function.
#
#   rabbitmq-server   Debian package; the tests start private nodes, never the system service
#   database engine   FerretDB v2 + PostgreSQL 15 + DocumentDB (no mongod on Debian): ops/build-engine.sh
#   node_modules      npm ci when missing or installed from another lock file (ops/lib/node-modules.sh)
#   service build     src/ compiled to dist/src/ (what the local runtime runs), when sources changed
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

log() { printf 'prepare-local: %s\n' "$*"; }
fail() { printf 'prepare-local: ERROR: %s\n' "$*" >&2; exit 1; }

# shellcheck source=lib/debian-packages.sh
source "$repo_root/ops/lib/debian-packages.sh"
STEP_PREFIX=prepare-local
# shellcheck source=lib/timed-steps.sh
source "$repo_root/ops/lib/timed-steps.sh"
# shellcheck source=lib/node-modules.sh
source "$repo_root/ops/lib/node-modules.sh"

step_rabbitmq() {
  if deb_installed rabbitmq-server; then
    log "rabbitmq-server: present ($(dpkg-query -W -f='${Version}' rabbitmq-server))"
  else
    apt_install rabbitmq-server
    log "rabbitmq-server: installed ($(dpkg-query -W -f='${Version}' rabbitmq-server))"
  fi
}

# The Debian service runs a node named `rabbit`; if the package (or anyone) started it, stop it
# and keep it from starting at boot, so ports and epmd state belong to the nodes the tests start.
step_rabbitmq_service_stopped() {
  local epmd_bin
  epmd_bin="$(command -v epmd || true)"
  if [[ -z $epmd_bin ]] || ! "$epmd_bin" -names 2>/dev/null | grep -q '^name rabbit at port'; then
    log "rabbitmq system service: not running"
    return 0
  fi
  if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
    as_root systemctl stop rabbitmq-server || true
    as_root systemctl disable rabbitmq-server >/dev/null 2>&1 || true
  else
    as_root service rabbitmq-server stop >/dev/null 2>&1 || true
    as_root update-rc.d rabbitmq-server disable >/dev/null 2>&1 || true
  fi
  if "$epmd_bin" -names 2>/dev/null | grep -q '^name rabbit at port'; then
    fail "the rabbitmq system service (node 'rabbit') is still running; stop it with: rabbitmqctl -n rabbit@$(hostname -s) stop"
  fi
  log "rabbitmq system service: stopped and disabled"
}

# The database engine (FerretDB v2 on PostgreSQL + DocumentDB) has its own script: it verifies the
# pinned sources and builds only what is missing or stale. ENGINE_SOURCES passes through.
step_engine() {
  bash "$repo_root/ops/build-engine.sh"
}

step_node_modules() {
  if node_modules_current "$repo_root"; then
    log "node_modules: present (installed from this package-lock.json)"
  else
    install_node_modules "$repo_root"
    log "node_modules: installed with npm ci"
  fi
}

# The local runtime runs compiled JavaScript (dist/src/cli.js); the build is redone only when a
# source file is newer than it (src/installation/runner/service-build.ts).
step_service_build() {
  local outcome
  outcome="$(node --import tsx --input-type=module -e "
    const { ensureServiceBuild } = await import('./src/installation/runner/service-build.ts');
    const b = await ensureServiceBuild();
    console.log(b.built ? 'compiled ' + b.files + ' modules into dist/' : 'current (' + b.files + ' modules)');
  ")"
  log "service build: $outcome"
}

main() {
  timed_step 'RabbitMQ package' step_rabbitmq
  timed_step 'RabbitMQ system service stopped' step_rabbitmq_service_stopped
  timed_step 'database engine' step_engine
  timed_step 'npm packages' step_node_modules
  timed_step 'service build' step_service_build
}

main "$@"
