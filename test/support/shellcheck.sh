#!/usr/bin/env bash
# Runs shellcheck over every shell script in the repository (part of `npm run lint`): the tracked *.sh
# files and the extensionless ones whose first line names sh or bash (the installer, ops/*).
# Sourced files are followed relative to the script that sources them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

command -v shellcheck >/dev/null 2>&1 || { echo "shellcheck: not installed (bash test/support/prepare-env.sh installs it)" >&2; exit 1; }

scripts=()
while IFS= read -r -d '' file; do
  [[ -f $file ]] || continue
  if [[ $file == *.sh ]] || { [[ ${file##*/} != *.* ]] && head -n 1 "$file" | grep -qE '^#!.*\b(ba)?sh\b'; }; then
    scripts+=("$file")
  fi
done < <(git ls-files -z)

shellcheck --external-sources --source-path=SCRIPTDIR "${scripts[@]}"
