#!/usr/bin/env bash
# Everything the test suite needs, installed by the test command itself (a no-op when present):
# the local service prerequisites (ops/prepare-local.sh) plus test-only tools.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian's Chromium for the browser tests (test/e2e), driven by playwright-core: the test tool
# never downloads a browser of its own. Installed once; a no-op when the package is present.
step_chromium() {
  if dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed'; then
    echo "prepare-env: chromium: present ($(dpkg-query -W -f='${Version}' chromium))"
    return 0
  fi
  local run_as_root=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "prepare-env: ERROR: need root (or sudo) to install chromium" >&2; exit 1; }
    run_as_root=(sudo)
  fi
  "${run_as_root[@]}" apt-get update -qq
  "${run_as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  echo "prepare-env: chromium: installed ($(dpkg-query -W -f='${Version}' chromium))"
}

bash "$repo_root/ops/prepare-local.sh"
bash "$repo_root/test/support/python-celery.sh"
bash "$repo_root/test/support/python-client.sh"
bash "$repo_root/test/support/appliance-tools.sh"
step_chromium
