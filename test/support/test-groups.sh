#!/usr/bin/env bash
# Runs the test projects as three vitest processes side by side: the `installations` files one at
# a time; the clock-bound integration files (vitest.config.ts, TEST_CLOCK_BOUND) one at a time; and
# the projects named by $2 (`!installations` for everything else) without the clock-bound files.
# The last group's output is shown as it comes; the two others' outputs follow, each as one block,
# once all have ended; then the slowest files of each (./file-times.ts) and a digest of every
# failure of all three come last, so that the end of the output (all a CI log may keep) names
# whatever failed.
# Usage: test-groups.sh <name of the last group> <its vitest --project filter>
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo_root" || exit 1
group="$1"
projects="$2"
reports="$repo_root/.cache/test-reports"
rm -rf "$reports"
mkdir -p "$reports"
vitest="$repo_root/node_modules/.bin/vitest"

json_report() { printf '%s\n' --reporter=default --reporter=json "--outputFile.json=$reports/$1.json" --reporter=./test/support/file-times.ts; }
mapfile -t installations_report < <(json_report installations)
mapfile -t clock_report < <(json_report clock-bound)
mapfile -t group_report < <(json_report "$group")

TEST_FILE_TIMES="$reports/installations.times.json" "$vitest" run --project installations --maxWorkers=1 "${installations_report[@]}" >"$reports/installations.log" 2>&1 &
installations_pid=$!
TEST_CLOCK_BOUND=only TEST_FILE_TIMES="$reports/clock-bound.times.json" "$vitest" run --project integration --maxWorkers=1 "${clock_report[@]}" >"$reports/clock-bound.log" 2>&1 &
clock_pid=$!
# Stopping the test command stops the other two runs too (they start and kill engines of their own).
trap 'kill "$installations_pid" "$clock_pid" 2>/dev/null' EXIT INT TERM

group_status=0
TEST_CLOCK_BOUND=exclude TEST_FILE_TIMES="$reports/$group.times.json" "$vitest" run --project "$projects" "${group_report[@]}" 2>&1 | sed -u "s/^/[$group] /" || group_status=$?
installations_status=0
wait "$installations_pid" || installations_status=$?
clock_status=0
wait "$clock_pid" || clock_status=$?
trap - EXIT INT TERM
sed "s/^/[installations] /" "$reports/installations.log"
sed "s/^/[clock-bound] /" "$reports/clock-bound.log"
echo "[installations] exited with code $installations_status; [clock-bound] exited with code $clock_status; [$group] exited with code $group_status"

"$repo_root/node_modules/.bin/tsx" test/support/failure-digest.ts installations "$reports/installations.json" clock-bound "$reports/clock-bound.json" "$group" "$reports/$group.json"
if ((installations_status != 0 || clock_status != 0 || group_status != 0)); then exit 1; fi
