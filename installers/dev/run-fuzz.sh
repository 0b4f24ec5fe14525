#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang and runs each for SECONDS (default 20)
# on a copy of its seed corpus. CI (run-tests.sh) runs it briefly; for long runs see
# docs/fuzzing.md. A crash leaves the input in $BUILD_DIR/crashes/<target>/ and fails the script.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-20}
build=${FUZZ_BUILD_DIR:-$src/build-fuzz}
cxx=${FUZZ_CXX:-clang++-16}
cmake -S "$src/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build"
status=0
for pair in http_request:http dns_query:dns policy:policy agent_frames:agent; do
    target=fuzz_${pair%%:*}
    corpus=$build/corpus/${pair##*:}
    crashes=$build/crashes/$target
    mkdir -p "$corpus" "$crashes"
    cp -n "$src/tests/fuzz/corpus/${pair##*:}/"* "$corpus/"
    echo "== $target for ${seconds}s"
    if ! "$build/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$corpus" 2>"$build/$target.log"; then
        echo "$target FAILED: see $build/$target.log and $crashes/" >&2
        tail -40 "$build/$target.log" >&2
        status=1
    else
        grep -E "^(Done|stat::number_of_executed_units)" "$build/$target.log" || true
    fi
done
exit $status
