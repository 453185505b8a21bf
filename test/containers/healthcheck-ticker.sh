#!/usr/bin/env bash
# Runs the healthchecks of running Podman containers at their configured intervals.
#
# Why: Podman schedules healthchecks with systemd timers, and these machines have no systemd
# ("unable to get systemd connection to start healthchecks"), so a container's health would stay
# `starting` forever and `docker compose up --wait` / `depends_on: condition: service_healthy`
# would never proceed. `podman healthcheck run` performs one check and records its result exactly
# as the timer would (start period, retries, unhealthy state); this loop plays the timer's part.
# Docker engines and Podman on systemd hosts need nothing of the kind.
#
# Started in the background by prepare-podman.sh, which also stops it.
set -uo pipefail

# Go duration ("30s", "1m30s", "500ms", "0s") to whole seconds, at least 1.
seconds() {
  local d="$1" total=0 n unit
  while [[ $d =~ ^([0-9]+(\.[0-9]+)?)(h|ms|m|s|us|µs|ns)(.*)$ ]]; do
    n="${BASH_REMATCH[1]%%.*}" unit="${BASH_REMATCH[3]}" d="${BASH_REMATCH[4]}"
    case $unit in
      h) total=$((total + n * 3600)) ;;
      m) total=$((total + n * 60)) ;;
      s) total=$((total + n)) ;;
    esac
  done
  ((total < 1)) && total=1
  echo "$total"
}

declare -A interval_of next_at
while true; do
  now=$(date +%s)
  declare -A alive=()
  for id in $(podman ps -q --no-trunc 2>/dev/null); do
    alive[$id]=1
    if [[ -z ${interval_of[$id]+x} ]]; then
      iv="$(podman inspect --format '{{if .Config.Healthcheck}}{{.Config.Healthcheck.Interval}}{{end}}' "$id" 2>/dev/null)"
      # No healthcheck: remember that with an empty interval. Docker's default interval is 30 s.
      if [[ -z $iv ]]; then interval_of[$id]=""; else
        [[ $iv == 0s ]] && iv=30s
        interval_of[$id]="$(seconds "$iv")"
      fi
      next_at[$id]=$now
    fi
    [[ -z ${interval_of[$id]} ]] && continue
    if ((now >= next_at[$id])); then
      podman healthcheck run "$id" >/dev/null 2>&1
      next_at[$id]=$((now + interval_of[$id]))
    fi
  done
  for id in "${!interval_of[@]}"; do
    [[ -n ${alive[$id]+x} ]] || unset "interval_of[$id]" "next_at[$id]"
  done
  unset alive
  sleep 1
done
