#!/usr/bin/env bash
# airlockd serves the listening socket systemd hands it (airlockd.socket, LISTEN_FDS), started
# on the first connection exactly as systemd would: through systemd-socket-activate.
# Usage: check-socket-activation.sh AIRLOCKD AIRLOCKCTL
set -euo pipefail
airlockd=$1
airlockctl=$2
command -v systemd-socket-activate >/dev/null || { echo "systemd-socket-activate missing"; exit 1; }
tmp=$(mktemp -d)
activator=
cleanup() {
    [ -n "$activator" ] && kill "$activator" 2>/dev/null || true
    pkill -f -- "--state-dir $tmp/state" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
sock=$tmp/airlockd.sock
systemd-socket-activate -l "$sock" "$airlockd" --socket "$sock" --state-dir "$tmp/state" \
    --image-store "$tmp/images" >"$tmp/out" 2>&1 &
activator=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { echo "the activator never created $sock"; exit 1; }
if ! "$airlockctl" --socket "$sock" list; then
    echo "airlockctl could not talk to the socket-activated airlockd:"; cat "$tmp/out"; exit 1
fi
grep -q "socket-activated" "$tmp/out" || { echo "airlockd did not use the inherited socket:"; cat "$tmp/out"; exit 1; }
# The inherited socket belongs to systemd: airlockd must not have replaced or removed it.
[ -S "$sock" ] || { echo "$sock vanished"; exit 1; }
echo "socket activation: ok"
