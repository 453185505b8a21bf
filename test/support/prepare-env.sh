#!/usr/bin/env bash
# Everything the test suite needs, installed by the test command itself (a no-op when present):
# the local service prerequisites (ops/prepare-local.sh) plus test-only tools.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the test and lint commands use: Chromium for the browser tests (test/e2e),
# driven by playwright-core (the test tool never downloads a browser of its own), and shellcheck
# for `npm run lint`. Each installed once; a no-op when the package is present.
step_debian_package() {
  local package="$1"
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    echo "prepare-env: $package: present ($(dpkg-query -W -f='${Version}' "$package"))"
    return 0
  fi
  local run_as_root=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "prepare-env: ERROR: need root (or sudo) to install $package" >&2; exit 1; }
    run_as_root=(sudo)
  fi
  "${run_as_root[@]}" apt-get update -qq
  "${run_as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null
  echo "prepare-env: $package: installed ($(dpkg-query -W -f='${Version}' "$package"))"
}

bash "$repo_root/ops/prepare-local.sh"
bash "$repo_root/test/support/python-celery.sh"
bash "$repo_root/test/support/python-client.sh"
bash "$repo_root/test/support/appliance-tools.sh"
step_debian_package chromium
step_debian_package shellcheck
