#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, builds the default guest image,
# starts airlockd, creates and starts the sandbox `demo`, and opens the Airlock window on it.
# Without a display it says so and leaves the helper and the sandbox running for airlockctl.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
state=${AIRLOCK_STATE_DIR:-/var/lib/airlock}
socket=${AIRLOCK_SOCKET:-/run/airlock/airlockd.sock}
"$src/installers/dev/install-deps.sh"
BUILD_DIR=$build "$src/installers/dev/build.sh" -DAIRLOCK_BUILD_TESTS=OFF
"$src/installers/guest/build-image.sh" --agent "$build/guest/agent/airlock-agent" \
    --output "$state/images/default"

ctl=("$build/app/airlockctl/airlockctl" --socket "$socket")
if ! "${ctl[@]}" list >/dev/null 2>&1; then
    mkdir -p "$state"
    echo "run-demo.sh: starting airlockd (log: $state/airlockd.out)"
    setsid "$build/app/airlockd/airlockd" --socket "$socket" --state-dir "$state" \
        >>"$state/airlockd.out" 2>&1 < /dev/null &
    for _ in $(seq 50); do
        "${ctl[@]}" list >/dev/null 2>&1 && break
        sleep 0.2
    done
fi
"${ctl[@]}" info demo >/dev/null 2>&1 || "${ctl[@]}" create demo
demo_state() { "${ctl[@]}" info demo --json | sed -n 's/.*"state": *"\([a-z]*\)".*/\1/p'; }
# Starting or stopping settles within seconds; wait for it rather than fail.
for _ in $(seq 60); do
    case "$(demo_state)" in starting|stopping) sleep 0.5 ;; *) break ;; esac
done
[ "$(demo_state)" = running ] || "${ctl[@]}" start demo

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    # The window runs as the desktop user when started through sudo.
    if [ -n "${SUDO_USER:-}" ]; then
        getent group airlock >/dev/null && usermod -aG airlock "$SUDO_USER" || true
        exec sudo -u "$SUDO_USER" -g airlock env DISPLAY="${DISPLAY:-}" \
            WAYLAND_DISPLAY="${WAYLAND_DISPLAY:-}" XAUTHORITY="${XAUTHORITY:-}" \
            "$build/app/airlock/airlock" --socket "$socket" --open-console demo
    fi
    exec "$build/app/airlock/airlock" --socket "$socket" --open-console demo
fi
cat <<MSG
run-demo.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window was not opened.
airlockd and the sandbox 'demo' are running. Try:
  ${ctl[*]} list
  ${ctl[*]} console demo      (Ctrl-] detaches)
MSG
