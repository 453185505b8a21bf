#!/usr/bin/env bash
# Everything the test suite needs, installed by the test command itself (a no-op when present):
# the local service prerequisites (ops/prepare-local.sh) plus test-only tools.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bash "$repo_root/ops/prepare-local.sh"
bash "$repo_root/test/support/python-celery.sh"
