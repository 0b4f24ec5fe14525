#!/usr/bin/env bash
# Configures and builds Airlock into BUILD_DIR (default: build/ in the source tree).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
jobs=${JOBS:-$(nproc)}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$jobs"
