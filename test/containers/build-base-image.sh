#!/usr/bin/env bash
# Builds the Debian bookworm base image every stand-in image starts from, without a registry:
# debootstrap a minimal root filesystem into .cache/containers (ignored by git), pack it, import it
# into Podman as localhost/cybercom-test/debian:bookworm. Each stage is reused while its output is
# present: the image in Podman's store, else the packed tarball, else a fresh debootstrap.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="$repo_root/.cache/containers"
image=localhost/cybercom-test/debian:bookworm
tarball="$cache/debian-bookworm-rootfs.tar"

log() { printf 'base-image: %s\n' "$*"; }

if podman image exists "$image"; then
  log "$image: present"
  exit 0
fi

if [[ ! -f $tarball ]]; then
  rootfs="$cache/rootfs.tmp"
  rm -rf "$rootfs"
  mkdir -p "$cache"
  # debootstrap's default mirror; it also writes the image's apt sources.list.
  debootstrap --variant=minbase bookworm "$rootfs" >"$cache/debootstrap.log" 2>&1 || {
    tail -20 "$cache/debootstrap.log" >&2
    exit 1
  }
  # The download cache debootstrap leaves behind would only make every image bigger.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -cf "$tarball.tmp" .
  mv -f "$tarball.tmp" "$tarball"
  rm -rf "$rootfs"
  log "root filesystem: debootstrapped into $(basename "$tarball")"
fi

podman import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$image" >/dev/null
log "$image: imported"
