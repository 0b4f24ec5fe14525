#!/bin/bash
# Builds the Debian package with CPack in the build directory: BUILD_DIR/packages/airlock_*.deb.
# Usage: build-deb.sh CPACK BUILD_DIR
set -euo pipefail
cpack=$1 build=$2
rm -f "$build"/packages/airlock_*.deb
cd "$build"
"$cpack" -G DEB --config "$build/CPackConfig.cmake"
debs=("$build"/packages/airlock_*.deb)
[[ -f "${debs[0]}" ]] || { echo "FAIL: cpack made no package" >&2; exit 1; }
dpkg-deb --info "${debs[0]}"
