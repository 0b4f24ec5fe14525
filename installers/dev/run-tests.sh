#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, checks formatting, builds the
# guest images once (the guest_image_build and guest_image_debian_build tests), runs every
# test with ctest (the unit, integration and redteam tests in a sanitized build, the others in
# the normal one), and the fuzzers briefly.
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
# Without a selection the unit, integration and redteam tests run under AddressSanitizer and
# UndefinedBehaviorSanitizer after this run (docs/testing.md, "Sanitizers"; AIRLOCK_SANITIZED_RUN=0
# leaves that out). Each test runs once: those the sanitized run covers whole are left out here;
# those with functions that skip themselves when sanitized (label sanitizer_skips) run in both.
sanitized=(-L 'unit|integration|redteam' -FS 'guest_image.*' -E 'guest_image')
sanitize=0
plain=()
if [[ $# -eq 0 && ${AIRLOCK_SANITIZED_RUN:-1} != 0 ]]; then
    sanitize=1
    mapfile -t covered < <(ASAN_BUILD_DIR=$build-asan AIRLOCK_TEST_IMAGE_STORE=$build/images \
        "$src/installers/dev/run-sanitized-tests.sh" --list "${sanitized[@]}" -LE sanitizer_skips)
    if [[ ${#covered[@]} -gt 0 ]]; then
        plain=(-E "^($(IFS='|'; echo "${covered[*]}"))\$")
        echo "run-tests.sh: ${#covered[@]} tests run only in the sanitized build"
    fi
fi
cd "$build"
ctest --output-on-failure --no-tests=error --timeout 900 -j "${CTEST_JOBS:-2}" "${plain[@]}" "$@"
# A short libFuzzer run of each parser (docs/fuzzing.md), then the sanitized run; both skipped
# when ctest got a selection.
if [[ $# -eq 0 ]]; then
    FUZZ_BUILD_DIR=$build-fuzz "$src/installers/dev/run-fuzz.sh" "${FUZZ_SECONDS:-20}"
    if [[ $sanitize == 1 ]]; then
        ASAN_BUILD_DIR=$build-asan AIRLOCK_TEST_IMAGE_STORE=$build/images \
            "$src/installers/dev/run-sanitized-tests.sh" "${sanitized[@]}"
    fi
fi
