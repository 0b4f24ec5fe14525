#!/usr/bin/env bash
# Builds Airlock with AddressSanitizer + UndefinedBehaviorSanitizer (AIRLOCK_SANITIZE=ON) into
# ASAN_BUILD_DIR (default build-asan/) and runs the unit, integration and redteam tests there
# (docs/testing.md). airlockd and its gateways run instrumented too; every report of any
# process (also those whose stderr a test never reads, such as a gateway) is written under
# $ASAN_BUILD_DIR/sanitizer-reports/, and any report fails the run.
# Extra arguments go to ctest (default: -L 'unit|integration|redteam'). Needs root.
# With --list first: only configures ASAN_BUILD_DIR and prints the names of the tests the
# other arguments select there, one per line (run-tests.sh leaves those out of the normal run).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${ASAN_BUILD_DIR:-$src/build-asan}
reports=$build/sanitizer-reports
options=(-DAIRLOCK_BUILD_TESTS=ON -DAIRLOCK_BUILD_GUI=OFF -DAIRLOCK_BUILD_BENCHMARKS=OFF
    -DAIRLOCK_SANITIZE=ON -DAIRLOCK_TEST_IMAGE_STORE="${AIRLOCK_TEST_IMAGE_STORE:-$src/build/images}")
if [[ ${1:-} == --list ]]; then
    shift
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" >/dev/null
    cd "$build"
    ctest -N "$@" | sed -n 's/^ *Test *#[0-9]*: *\([A-Za-z0-9_.-]*\)$/\1/p'
    exit 0
fi
BUILD_DIR=$build "$src/installers/dev/build.sh" "${options[@]}"
rm -rf "$reports"
# World-writable (sticky): gateways and VMM-side helpers write here as their own uids.
mkdir -p "$reports" && chmod 1777 "$reports"
# Leak checking stays off: processes that the tests kill (SIGKILL, SIGTERM mid-operation) by
# design cannot free what they hold, and LeakSanitizer would report every one of them.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:log_path=$reports/asan:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan:${UBSAN_OPTIONS:-}"
cd "$build"
if [[ $# -eq 0 ]]; then
    set -- -L 'unit|integration|redteam'
fi
status=0
ctest --output-on-failure --no-tests=error --timeout 1800 -j "${CTEST_JOBS:-2}" "$@" || status=$?
shopt -s nullglob
found=("$reports"/*)
if [[ ${#found[@]} -gt 0 ]]; then
    echo "run-sanitized-tests.sh: ${#found[@]} sanitizer report(s):" >&2
    for report in "${found[@]}"; do
        echo "== $report" >&2
        head -60 "$report" >&2
    done
    status=1
fi
exit $status
