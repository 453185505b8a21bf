# shellcheck shell=bash
# Debian package helpers shared by ops/prepare-local.sh and ops/build-engine.sh (sourced; the
# sourcing script defines `fail`). Services in the packages must not start on install (the
# runtime starts its own private instances), hence the policy-rc.d guard, added only when the
# system has none.

# Runs a command as root (directly, or through sudo when available).
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else fail "need root to run: $*"
  fi
}

deb_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_updated=0
# Installs the given packages that are missing (`apt-get update` at most once per script run);
# sets APT_INSTALLED to what it installed.
apt_install() {
  local pkg
  APT_INSTALLED=()
  for pkg in "$@"; do deb_installed "$pkg" || APT_INSTALLED+=("$pkg"); done
  [[ ${#APT_INSTALLED[@]} -eq 0 ]] && return 0
  if [[ $apt_updated -eq 0 ]]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  local guard=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod 0755 /usr/sbin/policy-rc.d
    guard=1
  fi
  local status=0
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${APT_INSTALLED[@]}" >/dev/null || status=$?
  [[ $guard -eq 1 ]] && as_root rm -f /usr/sbin/policy-rc.d
  [[ $status -eq 0 ]] || fail "apt-get install ${APT_INSTALLED[*]} failed"
}
