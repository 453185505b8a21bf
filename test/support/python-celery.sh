#!/usr/bin/env bash
# Creates the virtualenvs (project-local links, git-ignored) holding unmodified Python Celery
# stacks plus pymongo from PyPI:
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

# The venvs themselves live in the user's cache (like the engine binaries), one per Python version
# and requirements file, and each checkout links to them: a fresh clone on the same machine, or a
# second worktree, installs nothing. The venvs hold no file of the checkout.
cache_dir="${CYBERCOM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cybercom-ts}/venvs"

# install_venv <venv dir> <requirements file>
install_venv() {
  local venv="$1" requirements="$2"
  local key cached
  key="$({ "$python_bin" -c 'import sys; print(sys.version)'; cat "$requirements"; } | sha256sum | cut -c1-16)"
  cached="$cache_dir/celery-$key"
  mkdir -p "$cache_dir"
  # One build of each cached venv, even when several checkouts prepare at once.
  (
    flock 9
    local stamp="$cached/.celery-requirements"
    if [[ -x "$cached/bin/python" && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
      : # already installed with the same pins
    else
      echo "python-celery: creating $cached with $("$python_bin" --version 2>&1)" >&2
      rm -rf "$cached"
      "$python_bin" -m venv "$cached"
      "$cached/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
      cp "$requirements" "$stamp"
    fi
  ) 9>"$cached.lock"
  if [[ "$(readlink "$venv" 2>/dev/null)" != "$cached" ]]; then
    rm -rf "$venv"
    ln -s "$cached" "$venv"
  fi
  "$venv/bin/python" - "$venv" <<'PY'
import sys, celery, kombu, amqp, pymongo
print(f"{sys.argv[1]}: python {sys.version.split()[0]} celery {celery.__version__} kombu {kombu.__version__} "
      f"amqp {amqp.__version__} pymongo {pymongo.version}")
PY
}

install_venv "$repo_root/.venv" "$repo_root/test/support/celery/requirements.txt"
install_venv "$repo_root/.venv-celery-latest" "$repo_root/test/support/celery/requirements-latest.txt"
