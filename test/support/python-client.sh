#!/usr/bin/env bash
# The researchers' Python client (clients/python), prepared for the tests and for the API to serve:
#   .venv-client            a virtualenv with the package installed editable plus its dev extras
#                           (pytest, ruff, mypy, pandas, pyarrow) and Celery for the extension
#   .cache/client/python/   the wheel, built offline from the repository (served at /api/client/python/)
# Each step is a no-op when its inputs are unchanged, so reruns are fast.
#   test/support/python-client.sh          prepare both
#   test/support/python-client.sh lint     ruff check + ruff format --check + mypy --strict
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
package="$repo_root/clients/python"
venv="$repo_root/.venv-client"
wheel_dir="${CLIENT_DOWNLOADS_DIR:-$repo_root/.cache/client}/python"

# Test files running side by side call this at once: one prepares, the others then find it done.
mkdir -p "$repo_root/.cache"
exec 9>"$repo_root/.cache/python-client.lock"
flock 9

python_bin="${PYTHON:-}"
if [[ -z "$python_bin" ]]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python_bin="$candidate"; break; fi
  done
fi
[[ -n "$python_bin" ]] || { echo "python-client: no python3 found (set PYTHON=/path/to/python3)" >&2; exit 1; }

prepare_venv() {
  local stamp="$venv/.client-pyproject"
  if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$package/pyproject.toml" "$stamp"; then
    return 0
  fi
  echo "python-client: creating $venv with $("$python_bin" --version 2>&1)" >&2
  "$python_bin" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check hatchling -e "${package}[dev,celery,geo]"
  cp "$package/pyproject.toml" "$stamp"
}

lint() {
  cd "$package"
  "$venv/bin/ruff" check src tests
  "$venv/bin/ruff" format --check src tests
  "$venv/bin/mypy" --strict src/cybercom
  # The project's other Python (the worker image's healthcheck, the Celery interop tasks of the
  # tests, the benchmarks' scripts) is held to the client's style rules.
  cd "$repo_root"
  local others=(worker-image/python test/support/celery bench/python)
  "$venv/bin/ruff" check --config "$package/pyproject.toml" "${others[@]}"
  "$venv/bin/ruff" format --check --config "$package/pyproject.toml" "${others[@]}"
}

prepare_venv
case "${1:-prepare}" in
  prepare)
    bash "$repo_root/ops/build-client-wheel.sh"
    echo "python-client: $("$venv/bin/python" -c 'import cybercom; print("cybercom", cybercom.__version__)') in $venv; wheel: $(cd "$wheel_dir" && ls cybercom-*.whl)"
    ;;
  lint) lint ;;
  *) echo "usage: python-client.sh [prepare|lint]" >&2; exit 2 ;;
esac
