#!/usr/bin/env bash
# Installs the system packages iotrial needs (mkfs tools, partitioning, FUSE, a headless
# browser for the report test). Idempotent: does nothing when everything is present.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

PACKAGES=(
  e2fsprogs    # mkfs.ext2/3/4, e2fsck
  xfsprogs     # mkfs.xfs
  btrfs-progs  # mkfs.btrfs
  fdisk        # sfdisk (GPT partitions layout)
  util-linux   # losetup, wipefs, blkid, findmnt
  fuse3        # /dev/fuse userspace helpers for emulated devices
  fio          # reference I/O tool: tests run it on `iotrial device serve`, bench/ compares with it
  sysstat      # iostat: tests check the diskstats monitor against iostat -x side by side
  chromium     # headless browser that checks report.html
  fonts-dejavu-core  # fonts for report screenshots on a fresh machine
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; please install: ${missing[*]}" >&2
  exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  SUDO=(sudo)
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
