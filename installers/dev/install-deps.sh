#!/usr/bin/env bash
# Installs the Debian 12 packages Airlock needs to build, run and test (installers/dev/packages.txt).
# Only what is missing is installed; safe to run again. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: run as root (sudo $0)" >&2
    exit 2
fi
mapfile -t wanted < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/packages.txt")
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ! command -v npm >/dev/null; then
    missing+=(npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps.sh: all ${#wanted[@]} packages present"
    exit 0
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
