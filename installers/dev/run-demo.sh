#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, builds the default guest image,
# starts airlockd, creates and starts the sandbox `demo`, and opens the Airlock window on it as
# the desktop user (never as root). Without a display, or as root without SUDO_USER, it says so
# and leaves the helper and the sandbox running for airlockctl.
#
#   run-demo.sh              the above
#   run-demo.sh --no-build   the same without installing packages or building (an existing build
#                            and image; the tests use it)
#   run-demo.sh --stop       stops the sandbox and the helper this script started
# Environment: BUILD_DIR, AIRLOCK_STATE_DIR, AIRLOCK_SOCKET, AIRLOCKD_ARGS (extra airlockd options).
#
# What it started is recorded under STATE/run-demo/ (airlockd.pid, sandboxes), so --stop never
# touches a helper or sandbox that was there before.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
state=${AIRLOCK_STATE_DIR:-/var/lib/airlock}
socket=${AIRLOCK_SOCKET:-/run/airlock/airlockd.sock}
record=$state/run-demo
# shellcheck source=demo-window.sh
source "$src/installers/dev/demo-window.sh"

mode=run
case "${1:-}" in
"") ;;
--no-build) mode=no-build ;;
--stop) mode=stop ;;
-h | --help)
    sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    exit 0
    ;;
*)
    echo "run-demo.sh: unknown argument '$1' (try --help)" >&2
    exit 2
    ;;
esac

ctl=("$build/app/airlockctl/airlockctl" --socket "$socket")
me=$0
# Extra airlockd options, e.g. AIRLOCKD_ARGS="--upstream-dns 192.0.2.53" (word-split).
read -r -a helper_args <<<"${AIRLOCKD_ARGS:-}"

# The pid in airlockd.pid, if that process is still the airlockd this script started (a pid
# file outlives its process; a recycled pid must never be signalled).
recorded_helper() {
    local pid
    pid=$(cat "$record/airlockd.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = airlockd ] || return 1
    tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$socket" || return 1
    echo "$pid"
}

# Waits until process $1 has exited (gone, or a zombie nobody reaped yet), for up to $2 s.
wait_for_exit() {
    local pid=$1 deadline=$((SECONDS + $2)) status
    while status=$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null) \
        && [ -n "$status" ] && [ "$status" != Z ]; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}

stop_all() {
    if [ ! -d "$record" ]; then
        echo "run-demo.sh --stop: nothing to stop (no $record: run-demo.sh started nothing here)"
        return 0
    fi
    local status=0 name pid
    if [ -f "$record/sandboxes" ]; then
        while read -r name; do
            [ -n "$name" ] || continue
            echo "run-demo.sh --stop: stopping sandbox '$name'"
            # `stop` waits for the helper's `stopped` event; a sandbox already stopped is fine.
            "${ctl[@]}" stop "$name" || status=1
        done <"$record/sandboxes"
        rm -f "$record/sandboxes"
    fi
    if pid=$(recorded_helper); then
        echo "run-demo.sh --stop: stopping airlockd (pid $pid)"
        kill -TERM "$pid"
        if wait_for_exit "$pid" 30; then
            echo "run-demo.sh --stop: airlockd has exited"
        else
            echo "run-demo.sh --stop: airlockd (pid $pid) did not exit within 30 s" >&2
            status=1
        fi
    elif [ -f "$record/airlockd.pid" ]; then
        echo "run-demo.sh --stop: the airlockd it started is no longer running"
    else
        echo "run-demo.sh --stop: airlockd was already running before run-demo.sh; left alone"
    fi
    [ $status -ne 0 ] || rm -rf "$record"
    return $status
}

if [ "$mode" = stop ]; then
    stop_all
    exit
fi

if [ "$mode" = run ]; then
    "$src/installers/dev/install-deps.sh"
    BUILD_DIR=$build "$src/installers/dev/build.sh" -DAIRLOCK_BUILD_TESTS=OFF
    "$src/installers/guest/build-image.sh" --agent "$build/guest/agent/airlock-agent" \
        --output "$state/images/default"
fi

mkdir -p "$record"
if ! "${ctl[@]}" list >/dev/null 2>&1; then
    echo "run-demo.sh: starting airlockd (log: $state/airlockd.out)"
    setsid "$build/app/airlockd/airlockd" --socket "$socket" --state-dir "$state" \
        "${helper_args[@]}" >>"$state/airlockd.out" 2>&1 </dev/null &
    echo $! >"$record/airlockd.pid"
    for _ in $(seq 100); do
        "${ctl[@]}" list >/dev/null 2>&1 && break
        kill -0 "$(cat "$record/airlockd.pid")" 2>/dev/null || break
        sleep 0.2
    done
    if ! "${ctl[@]}" list >/dev/null; then
        echo "run-demo.sh: airlockd did not come up; see $state/airlockd.out" >&2
        exit 1
    fi
fi
"${ctl[@]}" info demo >/dev/null 2>&1 || "${ctl[@]}" create demo
demo_state() { "${ctl[@]}" info demo --json | sed -n 's/.*"state": *"\([a-z]*\)".*/\1/p'; }
# Starting or stopping settles within seconds; wait for it rather than fail.
for _ in $(seq 60); do
    case "$(demo_state)" in starting | stopping) sleep 0.5 ;; *) break ;; esac
done
if [ "$(demo_state)" != running ]; then
    grep -qxF demo "$record/sandboxes" 2>/dev/null || echo demo >>"$record/sandboxes"
    "${ctl[@]}" start demo
fi

stop_hint="To stop what run-demo.sh started: sudo $me --stop"
[ -s "$record/sandboxes" ] || [ -f "$record/airlockd.pid" ] \
    || stop_hint="run-demo.sh started nothing (airlockd and 'demo' were already running)."
window=("$build/app/airlock/airlock" --socket "$socket" --open-console demo)
display_set=0
[ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || display_set=1
case "$(demo_window_plan "$EUID" "${SUDO_USER:-}" "$display_set")" in
sudo-user)
    getent group airlock >/dev/null && usermod -aG airlock "$SUDO_USER" || true
    echo "$stop_hint"
    exec sudo -u "$SUDO_USER" -g airlock env DISPLAY="${DISPLAY:-}" \
        WAYLAND_DISPLAY="${WAYLAND_DISPLAY:-}" XAUTHORITY="${XAUTHORITY:-}" "${window[@]}"
    ;;
self)
    echo "$stop_hint"
    exec "${window[@]}"
    ;;
refuse-root)
    cat <<MSG
run-demo.sh: not opening the window: this is root without SUDO_USER, and the window never runs
as root. airlockd and the sandbox 'demo' are running. Open the window as your desktop user:
  sudo usermod -aG airlock YOUR_USER     (once; then log out and in again)
  ${window[*]}
or run this script from your desktop session with sudo: sudo $me
Meanwhile, as root:
  ${ctl[*]} list
  ${ctl[*]} console demo      (Ctrl-] detaches)
$stop_hint
MSG
    ;;
none)
    cat <<MSG
run-demo.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window was not opened.
airlockd and the sandbox 'demo' are running. Try:
  ${ctl[*]} list
  ${ctl[*]} console demo      (Ctrl-] detaches)
$stop_hint
MSG
    ;;
esac
