#!/usr/bin/env bash
# Test-only tools of the appliance tests (test/integration/installer, test/integration/ops), from
# Debian's packages; a no-op when present:
#   tmux            drives the interactive installer through a pseudo-terminal
#   docker-compose  Compose v1, a real Compose implementation that validates compose.yaml (`config`)
#   caddy           validates docker/Caddyfile (`caddy adapt`) in every TLS mode
#   prometheus      scrapes /api/metrics in the metrics test (test/integration/metrics)
# Package services must not start on install (caddy's would take port 80, prometheus's 9090):
# policy-rc.d guard.
set -euo pipefail

missing=()
for pkg in tmux docker-compose caddy prometheus; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "appliance-tools: tmux, docker-compose, caddy, prometheus: present"
  exit 0
fi
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "appliance-tools: ERROR: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
guard=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${as_root[@]}" chmod 0755 /usr/sbin/policy-rc.d
  guard=1
fi
status=0
"${as_root[@]}" apt-get update -qq || status=$?
[[ $status -eq 0 ]] && { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?; }
[[ $guard -eq 1 ]] && "${as_root[@]}" rm -f /usr/sbin/policy-rc.d
[[ $status -eq 0 ]] || { echo "appliance-tools: ERROR: apt-get install ${missing[*]} failed" >&2; exit 1; }
echo "appliance-tools: installed ${missing[*]}"
