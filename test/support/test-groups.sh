#!/usr/bin/env bash
# Runs the test projects as two vitest processes side by side: the `installations` files one at
# a time, and the projects named by $2 (`!installations` for everything else). Each process's
# output is printed as one block, and a digest of every failure of both comes last, so that the
# end of the output (all a CI log may keep) names whatever failed.
# Usage: test-groups.sh <name of the second group> <its vitest --project filter>
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo_root" || exit 1
group="$1"
projects="$2"
reports="$repo_root/.cache/test-reports"
rm -rf "$reports"
mkdir -p "$reports"

json_report() { echo "--reporter=default --reporter=json --outputFile.json=$reports/$1.json"; }

status=0
npx concurrently --group --names "installations,$group" \
  "vitest run --project installations --maxWorkers=1 $(json_report installations)" \
  "vitest run --project '$projects' $(json_report "$group")" || status=$?

npx tsx test/support/failure-digest.ts installations "$reports/installations.json" "$group" "$reports/$group.json"
echo "npm test: exit code $status"
exit "$status"
