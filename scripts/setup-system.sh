#!/usr/bin/env bash
# Installs the Debian packages IMEP's tests and Python sim-bridge need, only when missing.
# Runs as root (CI, developer machines here) or through sudo when available.
set -euo pipefail
PKGS=(python3-zmq python3-msgpack python3-numpy python3-pytest python3-scipy python3-venv chromium fonts-dejavu-core bubblewrap minisign)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup-system: missing Debian packages: ${missing[*]} — install them as root (apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
fi
echo "setup-system: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
