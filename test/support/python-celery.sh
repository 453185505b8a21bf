#!/usr/bin/env bash
# Creates the project-local virtualenv .venv (git-ignored) holding an unmodified Python Celery
# plus pymongo from PyPI, pinned in test/support/celery/requirements.txt. The interop tests use
# .venv/bin/celery and .venv/bin/python. A no-op when .venv already has exactly those pins.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$repo_root/.venv"
requirements="$repo_root/test/support/celery/requirements.txt"
stamp="$venv/.celery-requirements"

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

if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
  : # already installed with the same pins
else
  echo "python-celery: creating $venv with $("$python_bin" --version 2>&1)" >&2
  "$python_bin" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
fi

"$venv/bin/python" - <<'PY'
import sys, celery, kombu, amqp, pymongo
print(f"python {sys.version.split()[0]} celery {celery.__version__} kombu {kombu.__version__} "
      f"amqp {amqp.__version__} pymongo {pymongo.version}")
PY
