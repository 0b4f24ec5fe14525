#!/bin/bash
# The man pages render without a single groff or man warning.
# Usage: check-man.sh PAGE...
set -euo pipefail
for page in "$@"; do
    [[ -s "$page" ]] || { echo "FAIL: $page missing" >&2; exit 1; }
    out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
    if [[ -n "$out" ]]; then
        echo "FAIL: $page:" >&2
        echo "$out" >&2
        exit 1
    fi
    # The NAME section is what apropos and lintian read.
    # Read all of it first: `grep -q` stopping early would SIGPIPE man under pipefail.
    rendered=$(man -l "$page" 2>/dev/null | col -b)
    grep -q '^NAME' <<<"$rendered" || { echo "FAIL: $page: no NAME" >&2; exit 1; }
    echo "$page: ok"
done
