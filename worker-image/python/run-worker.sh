#!/bin/sh
# Starts the Python worker of this bundle (made by ops/worker-bundle --python) on a lab machine:
#   ./run-worker.sh [cybercom worker options, e.g. --check, -A MODULE, -c 4]
# Checks the bundle, installs the client wheel with its [celery] extra and the lab's
# requirements.txt into .venv here (again whenever either changed), then runs
# `cybercom worker --bundle .` in the foreground, which loads the modules in tasks/.
# PYTHON names the interpreter (default python3, >= 3.9).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! sha256sum -c SHA256SUMS --quiet; then
  echo "run-worker: checksums do not match (SHA256SUMS): the bundle is damaged or was changed" >&2
  exit 1
fi

python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || { echo "run-worker: $python not found (Python >= 3.9 is needed; set PYTHON)" >&2; exit 1; }
wheel=$(ls wheel/cybercom-*.whl)
venv="$here/.venv"
# What is installed follows the wheel and the requirements: a change to either reinstalls.
wanted=$(cat "$wheel" requirements.txt | sha256sum | cut -d' ' -f1)
stamp="$venv/.cybercom-bundle"
if [ ! -x "$venv/bin/cybercom" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$wanted" ]; then
  echo "run-worker: installing the client ($wheel) and requirements.txt into $venv" >&2
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "cybercom[celery] @ file://$here/$wheel" -r requirements.txt
  echo "$wanted" >"$stamp"
fi
exec "$venv/bin/cybercom" worker --bundle "$here" "$@"
