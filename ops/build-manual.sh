#!/usr/bin/env bash
# Builds the manual (the VitePress site in docs/) for the path the API serves it at, /api/manual/,
# into MANUAL_DIR (default .cache/manual), so a lab whose network has no internet has the manual
# on its own server. A no-op when the manual's sources are unchanged since the last build. The
# new site is built beside the old one and swapped in, so the API never serves half a build.
# Needs the repository's npm packages (vitepress is a development dependency); nothing is downloaded.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
manual_dir="${MANUAL_DIR:-$repo_root/.cache/manual}"
manual_dir="$(mkdir -p "$(dirname "$manual_dir")" && cd "$(dirname "$manual_dir")" && pwd)/$(basename "$manual_dir")"
vitepress="$repo_root/node_modules/.bin/vitepress"

log() { printf 'manual: %s\n' "$*"; }

if [[ ! -x "$vitepress" ]]; then
  log "skipped: vitepress is not installed (npm ci); the API answers /api/manual/ with 404 manual_not_built"
  exit 0
fi

# What the site is made of: the pages, their images, the configuration and VitePress's version.
source_digest() {
  {
    (cd "$repo_root/docs" && find . -type f -not -path './.vitepress/cache/*' -not -path './.vitepress/.temp/*' -print0 | sort -z | xargs -0 sha256sum)
    grep -m1 '"version"' "$repo_root/node_modules/vitepress/package.json"
  } | sha256sum | cut -d' ' -f1
}

digest="$(source_digest)"
stamp="$manual_dir/.source-digest"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$digest" && -f "$manual_dir/index.html" ]]; then
  log "present: $manual_dir"
  exit 0
fi
building="$manual_dir.building.$$"
rm -rf "$building"
trap 'rm -rf "$building"' EXIT
# VitePress's progress goes to stderr, so the last line of stdout says what happened.
(cd "$repo_root" && MANUAL_BASE=/api/manual/ "$vitepress" build docs --outDir "$building" >&2)
echo "$digest" >"$building/.source-digest"
old="$manual_dir.old.$$"
if [[ -d "$manual_dir" ]]; then mv "$manual_dir" "$old"; fi
mv "$building" "$manual_dir"
rm -rf "$old"
log "built: $manual_dir"
