# shellcheck shell=bash
# node_modules as the lock file says (sourced by the installer, ops/prepare-local.sh and the
# container test run). A tree counts as current only when it was installed from this very lock
# file: a checkout that pulled a change adding or bumping a package must not run on the old tree
# (the new package would be missing at start-up), and a kept node_modules (a CI cache, an
# installation being upgraded) is exactly such a tree. The lock file a tree was installed from is
# kept inside it, so the check is one file comparison.

node_modules_stamp() { printf '%s/node_modules/.installed-from-package-lock.json' "$1"; }

# node_modules_current ROOT: whether ROOT/node_modules was installed from ROOT/package-lock.json.
node_modules_current() {
  [[ -d "$1/node_modules" ]] && cmp -s "$1/package-lock.json" "$(node_modules_stamp "$1")"
}

# install_node_modules ROOT: npm ci (never npm install: the lock file is the source of truth).
install_node_modules() {
  (cd "$1" && npm ci --no-audit --no-fund)
  cp "$1/package-lock.json" "$(node_modules_stamp "$1")"
}
