#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, checks formatting, builds the
# guest images once (the guest_image_build and guest_image_debian_build tests), runs every
# test with ctest, the fuzzers briefly, and the unit, integration and redteam tests once more
# in a sanitized build.
# Extra arguments go to ctest (e.g. -L unit). Needs root: tests start airlockd, QEMU guests as
# an unprivileged user, and network namespaces.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
"$src/installers/dev/install-deps.sh"
# Tests ON explicitly: run-demo.sh may have configured the same build dir without them.
# -g1 (line tables only) instead of -g: backtraces and sanitizer reports keep file:line, and
# the build takes a quarter less time on the 2-core CI machines (AIRLOCK_DEBUG_FLAGS overrides).
BUILD_DIR=$build "$src/installers/dev/build.sh" -DAIRLOCK_BUILD_TESTS=ON \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 ${AIRLOCK_DEBUG_FLAGS:--g1} -DNDEBUG"
cmake --build "$build" --target format-check
cd "$build"
ctest --output-on-failure --no-tests=error --timeout 900 -j "${CTEST_JOBS:-2}" "$@"
# A short libFuzzer run of each parser (docs/fuzzing.md), then the unit, integration and
# redteam tests again under AddressSanitizer and UndefinedBehaviorSanitizer (docs/testing.md,
# "Sanitizers"; AIRLOCK_SANITIZED_RUN=0 leaves it out); both skipped when ctest got a selection.
if [[ $# -eq 0 ]]; then
    FUZZ_BUILD_DIR=$build-fuzz "$src/installers/dev/run-fuzz.sh" "${FUZZ_SECONDS:-20}"
    if [[ ${AIRLOCK_SANITIZED_RUN:-1} != 0 ]]; then
        ASAN_BUILD_DIR=$build-asan AIRLOCK_TEST_IMAGE_STORE=$build/images \
            "$src/installers/dev/run-sanitized-tests.sh" -L 'unit|integration|redteam' \
            -FS 'guest_image.*' -E 'guest_image'
    fi
fi
