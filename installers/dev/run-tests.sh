#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, checks formatting, builds the
# guest images once (the guest_image_build and guest_image_debian_build tests) and runs every
# test with ctest.
# Extra arguments go to ctest (e.g. -L unit). Needs root: tests start airlockd, QEMU guests as
# an unprivileged user, and network namespaces.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
"$src/installers/dev/install-deps.sh"
# Tests ON explicitly: run-demo.sh may have configured the same build dir without them.
BUILD_DIR=$build "$src/installers/dev/build.sh" -DAIRLOCK_BUILD_TESTS=ON
cmake --build "$build" --target format-check
cd "$build"
ctest --output-on-failure --no-tests=error --timeout 900 -j "${CTEST_JOBS:-2}" "$@"
# A short libFuzzer run of each parser (docs/fuzzing.md); skipped when ctest got a selection.
if [[ $# -eq 0 ]]; then
    FUZZ_BUILD_DIR=$build-fuzz "$src/installers/dev/run-fuzz.sh" "${FUZZ_SECONDS:-20}"
fi
