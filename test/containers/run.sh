#!/usr/bin/env bash
# The container test (npm run test:containers, also run by .ci/run): prepares this machine
# (Podman, its Docker API, Compose v2), builds the base and stand-in images (cached while their
# inputs are unchanged), then runs the end-to-end test of the compose stack through the installer
# (test/containers/stack.e2e.ts; containers are driven with testcontainers, see
# support/testcontainers.ts). Prints how long each phase took; the e2e test ends with
# `N passed, N failed`. Needs root (Podman rootful, network namespaces, iptables).
#
#   CYBERCOM_E2E_SMOKE=1   also run smoke.ts (the stand-ins alone) before the stack test
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
cd "$repo_root"

timings=()
phase() {
  local name="$1" started=$SECONDS; shift
  echo "== $name"
  "$@"
  timings+=("$(printf '%7d s  %s' $((SECONDS - started)) "$name")")
}
print_timings() {
  echo
  echo "Preparation timings:"
  printf '%s\n' "${timings[@]}"
}
trap print_timings EXIT

# shellcheck disable=SC2317 # called through phase, which shellcheck does not follow
prepare() {
  local out
  out="$(bash "$here/prepare-podman.sh")"
  printf '%s\n' "$out"
  DOCKER_HOST="$(printf '%s\n' "$out" | sed -n 's/^DOCKER_HOST=//p' | tail -1)"
  export DOCKER_HOST
}

# The Podman API service and healthcheck ticker stay up between runs on a developer's machine;
# a run that had to start them stops them again at the end.
started_services=0
[[ -S /run/podman/podman.sock ]] || started_services=1

# shellcheck source=../../ops/lib/node-modules.sh
source ops/lib/node-modules.sh
node_modules_current . || install_node_modules .
phase "machine: Podman, API socket, Compose" prepare
phase "base image (debootstrap, cached)" bash "$here/build-base-image.sh"
phase "stand-in images (cached by content)" bash "$here/build-standins.sh"
if [[ ${CYBERCOM_E2E_SMOKE:-0} == 1 ]]; then
  phase "stand-ins smoke test" npx tsx "$here/smoke.ts"
fi
print_timings
trap - EXIT
echo
echo "== end-to-end: the compose stack through the installer"
status=0
npx tsx "$here/stack.e2e.ts" || status=$?
if [[ $started_services == 1 ]]; then bash "$here/prepare-podman.sh" --stop; fi
exit "$status"
