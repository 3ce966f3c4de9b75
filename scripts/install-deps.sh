#!/usr/bin/env bash
# Installs the Debian packages iotrial's build and tests need. Idempotent: packages already
# installed are left as they are. Run as root (or through sudo).
set -euo pipefail

PACKAGES=(
  chromium          # headless browser for tests/report_browser.rs
  fonts-dejavu-core # a font for its screenshots
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
echo "install-deps: installed ${missing[*]}"
