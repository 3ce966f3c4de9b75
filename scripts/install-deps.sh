#!/usr/bin/env bash
# Installs the system packages iotrial needs (mkfs tools, partitioning, FUSE, a headless
# browser for the report test, QEMU and busybox for VM trials, Slurm and munge for the one-node
# cluster scripts/slurm-local.sh starts in the launcher's tests), makes a Python venv with
# kubernetes-validate (the launcher's tests check its Kubernetes manifests offline against
# the schemas the package bundles) in iotrial's cache directory, and extracts the guest kernel of
# VM trials (Debian's cloud kernel) and mdadm into iotrial's cache directory without installing
# them: this machine's /boot and boot setup are never touched. Idempotent: does nothing when
# everything is present. Needs root (or sudo) only when something is missing.
set -euo pipefail

PACKAGES=(
  e2fsprogs    # mkfs.ext2/3/4, e2fsck
  xfsprogs     # mkfs.xfs
  btrfs-progs  # mkfs.btrfs
  fdisk        # sfdisk (GPT partitions layout)
  util-linux   # losetup, wipefs, blkid, findmnt
  fuse3        # /dev/fuse userspace helpers for emulated devices
  fio          # reference I/O tool: tests run it on `iotrial device serve`, bench/ compares with it
  python3-six  # fio_jsonplus_clat2csv (fio's package) imports it: tests convert iotrial's json+ with it
  sysstat      # iostat: tests check the diskstats monitor against iostat -x side by side
  fsmark       # fs_mark: bench/fsck_fsmark.rs compares the fsck workload's fill rate with it
  chromium     # headless browser that checks report.html
  fonts-dejavu-core  # fonts for report screenshots on a fresh machine
  qemu-system-x86    # VM trials: the guest's machine
  busybox-static     # VM trials: the guest's shell and small tools
  slurmctld    # `iotrial launch slurm`'s test: the one-node cluster's controller
  slurmd       # ... its node daemon
  slurm-client # ... sbatch, squeue, scancel, sinfo
  munge        # ... the authentication Slurm uses
  python3-venv # the venv of kubernetes-validate
)

# Extracted, not installed: the guest kernel (its modules carry md, raid10, virtio, xfs, btrfs)
# and mdadm (whose package would pull udev into the host).
CACHE="${IOTRIAL_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/iotrial}"

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  SUDO=(sudo)
fi

# Extracts Debian package $1 (a metapackage is followed to the package it depends on) into $2.
extract() {
  local name=$1 dest=$2 tmp real
  if ! apt-cache show "$name" >/dev/null 2>&1; then
    "${SUDO[@]}" apt-get update -qq
  fi
  real=$(apt-cache depends "$name" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
  real=${real:-$name}
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -q "$real" >/dev/null 2>&1)
  mkdir -p "$dest"
  dpkg-deb -x "$tmp"/*.deb "$dest"
  rm -rf "$tmp"
  echo "install-deps: extracted $real into $dest" >&2
}

have_kernel() { compgen -G "$CACHE/kernel/boot/vmlinuz-*-cloud-amd64" >/dev/null; }
if ! have_kernel; then
  extract linux-image-cloud-amd64 "$CACHE/kernel"
fi
if [[ ! -x $CACHE/packages/sbin/mdadm ]] && ! command -v mdadm >/dev/null 2>&1; then
  extract mdadm "$CACHE/packages"
fi

# kubernetes-validate (PyPI) in a venv of iotrial's cache, once Python's venv is installed.
VENV="$CACHE/venv-k8s"
install_validator() {
  if [[ -x $VENV/bin/kubernetes-validate ]]; then
    return 0
  fi
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate
  echo "install-deps: installed kubernetes-validate into $VENV" >&2
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  install_validator
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; please install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_validator
