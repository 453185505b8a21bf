#!/usr/bin/env bash
# Builds the researchers' Python client (clients/python) as a wheel into
# <CLIENT_DOWNLOADS_DIR>/python (default .cache/client/python), which the API serves at
# /api/client/python/ so any lab machine can `pip install` it from the server itself.
# A no-op when the package's sources are unchanged since the last build. Its build backend
# (hatchling, from PyPI) lives in a small virtualenv of its own, .cache/client-build-venv.
# Without python3 (with venv) it says so and exits 0: the service runs without the download.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$repo_root/clients/python"
wheel_dir="${CLIENT_DOWNLOADS_DIR:-$repo_root/.cache/client}/python"
build_venv="$repo_root/.cache/client-build-venv"

log() { printf 'client-wheel: %s\n' "$*"; }

python_bin="${PYTHON:-}"
if [[ -z "$python_bin" ]]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python_bin="$candidate"; break; fi
  done
fi
if [[ -z "$python_bin" ]] || ! "$python_bin" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "skipped: no python3 with venv here (the API answers /api/client/python/ with 404 client_not_built)"
  exit 0
fi

# A digest of what the package is made of: the wheel follows it.
source_digest() {
  (cd "$package" && find pyproject.toml README.md src -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

digest="$(source_digest)"
stamp="$wheel_dir/.source-digest"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$digest" ]] && compgen -G "$wheel_dir/cybercom-*.whl" >/dev/null; then
  log "present: $(cd "$wheel_dir" && ls cybercom-*.whl)"
  exit 0
fi
if [[ ! -x "$build_venv/bin/python" ]] || ! "$build_venv/bin/python" -c 'import hatchling' >/dev/null 2>&1; then
  "$python_bin" -m venv "$build_venv"
  "$build_venv/bin/python" -m pip install --quiet --disable-pip-version-check hatchling
fi
mkdir -p "$wheel_dir"
rm -f "$wheel_dir"/cybercom-*.whl
# No build isolation: the backend comes from the build venv, so the build downloads nothing.
"$build_venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w "$wheel_dir" "$package"
echo "$digest" >"$stamp"
log "built: $(cd "$wheel_dir" && ls cybercom-*.whl)"
