#!/usr/bin/env bash
# installers/dev/run-demo.sh for real, without a display server: as root without SUDO_USER
# (with DISPLAY set) it must not open the window but say how to, leave a real airlockd and the
# sandbox `demo` running, and `--stop` must stop that guest and that helper.
# Usage: run-demo-test.sh SOURCE_DIR BUILD_DIR IMAGE_STORE
set -euo pipefail
src=$1 build=$2 images=$3
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# The window decision alone.
# shellcheck source=../../installers/dev/demo-window.sh
source "$src/installers/dev/demo-window.sh"
[ "$(demo_window_plan 0 '' 1)" = refuse-root ] || fail "root without SUDO_USER opens a window"
[ "$(demo_window_plan 0 root 1)" = refuse-root ] || fail "SUDO_USER=root opens a window as root"
[ "$(demo_window_plan 0 alice 1)" = sudo-user ] || fail "root through sudo: not as SUDO_USER"
[ "$(demo_window_plan 1000 '' 1)" = self ] || fail "a desktop user does not open the window"
[ "$(demo_window_plan 0 alice 0)" = none ] || fail "no display, yet a window"

[ "$EUID" = 0 ] || {
    echo "SKIP: needs root (airlockd)"
    exit 0
}
[ -f "$images/default/image.json" ] || fail "no default image in $images"

tmp=$(mktemp -d /tmp/airlock-rundemo.XXXXXX)
# The VMMs run as unprivileged uids and must reach their run folder below the state dir, as
# they do below /var/lib/airlock (mktemp makes the folder 0700).
chmod 0755 "$tmp"
ns=alt-rundemo-$$
helper=
vmm=
cleanup() {
    # Only what this test started, by pid.
    [ -z "$vmm" ] || kill -KILL "$vmm" 2>/dev/null || true
    [ -z "$helper" ] || kill -KILL "$helper" 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/state/images"
ln -s "$images/default" "$tmp/state/images/default"
# Its own network namespace, like every test helper (tests/support/helperprocess.cpp): the
# tap and nftables table never meet another helper's.
ip netns add "$ns"
ip -n "$ns" link set lo up
export BUILD_DIR=$build AIRLOCK_STATE_DIR=$tmp/state AIRLOCK_SOCKET=$tmp/airlockd.sock
export AIRLOCKD_ARGS="--templates off"
ctl=("$build/app/airlockctl/airlockctl" --socket "$AIRLOCK_SOCKET")

out=$(env -u SUDO_USER DISPLAY=:77 ip netns exec "$ns" "$src/installers/dev/run-demo.sh" \
    --no-build 2>&1) || fail "run-demo.sh --no-build failed: $out"
echo "$out"
helper=$(cat "$tmp/state/run-demo/airlockd.pid")
grep -q "window never runs" <<<"$out" || fail "no word on why the window was not opened"
grep -q "airlock/airlock --socket $AIRLOCK_SOCKET --open-console demo" <<<"$out" \
    || fail "no command for the desktop user"
grep -q "usermod -aG airlock" <<<"$out" || fail "no group advice"
grep -q -- "run-demo.sh --stop" <<<"$out" || fail "no word on how to stop it"
grep -qx demo "$tmp/state/run-demo/sandboxes" || fail "the started sandbox is not recorded"
[ "$(cat "/proc/$helper/comm")" = airlockd ] || fail "no airlockd at the recorded pid $helper"
info=$("${ctl[@]}" info demo --json)
grep -q '"state": *"running"' <<<"$info" || fail "demo is not running: $info"
vmm=$(sed -n 's/.*"vmmPid": *\([0-9]*\).*/\1/p' <<<"$info")
{ [ -n "$vmm" ] && [ -d "/proc/$vmm" ]; } || fail "no VMM process for demo: $info"
vmm_start=$(cut -d' ' -f22 "/proc/$vmm/stat")

stop=$("$src/installers/dev/run-demo.sh" --stop 2>&1) || fail "--stop failed: $stop"
echo "$stop"
grep -q "airlockd has exited" <<<"$stop" || fail "--stop did not see airlockd exit"
# The facts: the guest's QEMU is gone (or another process took its pid), the helper is gone
# or a zombie, its socket is closed, and nothing is left recorded.
if [ -d "/proc/$vmm" ] && [ "$(cut -d' ' -f22 "/proc/$vmm/stat")" = "$vmm_start" ]; then
    fail "the sandbox's VMM $vmm still runs"
fi
vmm=
state=$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$helper/stat" 2>/dev/null || true)
[ -z "$state" ] || [ "$state" = Z ] || fail "airlockd $helper still runs ($state)"
helper=
! "${ctl[@]}" list >/dev/null 2>&1 || fail "something still answers on the socket"
[ ! -e "$tmp/state/run-demo" ] || fail "--stop left its record behind"
again=$("$src/installers/dev/run-demo.sh" --stop 2>&1) || fail "a second --stop failed"
grep -q "nothing to stop" <<<"$again" || fail "a second --stop: $again"
echo PASS
