#!/bin/bash
# Runs airlockd the way airlockd.service confines it, with exactly the unit's
# CapabilityBoundingSet= and NoNewPrivileges= (through setpriv), and drives one sandbox through
# create, start, console, stop and rm. Catches a capability the code starts to need that the
# unit does not grant. Needs root (exit 77 otherwise).
# airlockd runs in a network namespace of its own (its taps and tables live and die there).
# Usage: check-capabilities.sh SERVICE_TEMPLATE AIRLOCKD AIRLOCKCTL IMAGE_STORE GATEWAY
set -uo pipefail
service=$1 airlockd=$2 airlockctl=$3 images=$4 gateway=$5
if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: airlockd needs root"
    exit 77
fi
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$service")
[[ -n "$caps" ]] || { echo "FAIL: no CapabilityBoundingSet= in $service" >&2; exit 1; }
grep -qx 'NoNewPrivileges=yes' "$service" || { echo "FAIL: NoNewPrivileges=yes missing" >&2; exit 1; }
bounding="-all"
for cap in $caps; do
    cap=${cap#CAP_}
    bounding+=",+${cap,,}"
done
echo "bounding set: $bounding"

work=$(mktemp -d)
chmod 0755 "$work" # the VMM user traverses it to its runtime directory
name=capcheck-$$
netns=alt-cap-$$
ip netns add "$netns" || { echo "FAIL: cannot create network namespace $netns" >&2; exit 1; }
ip -n "$netns" link set lo up
daemon=""
cleanup() {
    if [[ -n "$daemon" ]]; then
        "$airlockctl" --socket "$work/s.sock" kill "$name" >/dev/null 2>&1
        "$airlockctl" --socket "$work/s.sock" rm "$name" >/dev/null 2>&1
        kill "$daemon" 2>/dev/null
        wait "$daemon" 2>/dev/null
    fi
    echo "--- airlockd log"
    cat "$work/airlockd.log" 2>/dev/null
    rm -rf "$work"
    ip netns delete "$netns"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

ip netns exec "$netns" setpriv --no-new-privs --bounding-set "$bounding" \
    "$airlockd" --socket "$work/s.sock" --state-dir "$work/state" --image-store "$images" \
    --gateway "$gateway" >"$work/airlockd.log" 2>&1 &
daemon=$!
for _ in $(seq 50); do
    [[ -S "$work/s.sock" ]] && break
    kill -0 "$daemon" 2>/dev/null || fail "airlockd exited"
    sleep 0.2
done
[[ -S "$work/s.sock" ]] || fail "airlockd did not listen"
bnd=$(sed -n 's/^CapBnd:\t//p' "/proc/$daemon/status")
echo "airlockd CapBnd: $bnd"

ctl() { "$airlockctl" --socket "$work/s.sock" "$@"; }
ctl create "$name" --memory 128 || fail "create"
ctl start "$name" || fail "start"
# One console session fed from a fifo (--scrollback: the ready line may precede the attach):
# wait for the ready line, then type a command.
mkfifo "$work/in"
exec 3<>"$work/in"
"$airlockctl" --socket "$work/s.sock" console "$name" --scrollback --follow <"$work/in" >"$work/console" 2>&1 &
console=$!
wait_for() { # wait_for PATTERN SECONDS
    for _ in $(seq $(($2 * 5))); do
        tr -d '\r' <"$work/console" | grep -q "$1" && return 0
        sleep 0.2
    done
    return 1
}
wait_for 'airlock-guest ready' 120 || fail "no 'airlock-guest ready' on the console: $(cat "$work/console")"
echo 'echo $((6*7))' >&3
wait_for '^42' 30 || fail "the guest shell did not answer: $(cat "$work/console")"
kill "$console" 2>/dev/null
wait "$console" 2>/dev/null
exec 3>&-
ctl stop "$name" --timeout 10 || fail "stop"
ctl rm "$name" || fail "rm"
echo "airlockd confined like airlockd.service: create, start, console, stop, rm ok"
