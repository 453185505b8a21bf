#!/usr/bin/env bash
# Creates the project-local virtualenvs (git-ignored) holding unmodified Python Celery stacks
# plus pymongo from PyPI:
#   .venv                 the baseline pinned in test/support/celery/requirements.txt
#   .venv-celery-latest   the newest release, pinned in test/support/celery/requirements-latest.txt
# The interop tests use <venv>/bin/celery and <venv>/bin/python. Each is a no-op when the venv
# already has exactly its pins, so reruns are fast.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

python_bin="${PYTHON:-}"
if [[ -z "$python_bin" ]]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python_bin="$candidate"; break; fi
  done
fi
if [[ -z "$python_bin" ]]; then
  echo "python-celery: no python3 found (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi

# install_venv <venv dir> <requirements file>
install_venv() {
  local venv="$1" requirements="$2"
  local stamp="$venv/.celery-requirements"
  if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
    : # already installed with the same pins
  else
    echo "python-celery: creating $venv with $("$python_bin" --version 2>&1)" >&2
    "$python_bin" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$stamp"
  fi
  "$venv/bin/python" - "$venv" <<'PY'
import sys, celery, kombu, amqp, pymongo
print(f"{sys.argv[1]}: python {sys.version.split()[0]} celery {celery.__version__} kombu {kombu.__version__} "
      f"amqp {amqp.__version__} pymongo {pymongo.version}")
PY
}

install_venv "$repo_root/.venv" "$repo_root/test/support/celery/requirements.txt"
install_venv "$repo_root/.venv-celery-latest" "$repo_root/test/support/celery/requirements-latest.txt"
