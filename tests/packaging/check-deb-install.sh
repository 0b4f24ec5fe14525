#!/bin/bash
# Installs the package (dependencies from the Debian archive, through apt), checks what postinst
# did and that the installed executables run, verifies the installed units, then purges the
# package. Needs root on a disposable machine (CI). Exit 77 (skipped) when not root or when an
# airlock package was already installed: this test never replaces someone's installation.
# Usage: check-deb-install.sh BUILD_DIR VERSION [--gui]
set -uo pipefail
build=$1 version=$2 gui=${3:-}
deb=$(ls "$build"/packages/airlock_*.deb | head -n1)
fail() { echo "FAIL: $*" >&2; failed=1; }
failed=0

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: installing a package needs root"
    exit 77
fi
if dpkg-query -W -f='${Status}' airlock 2>/dev/null | grep -q 'install ok installed'; then
    echo "SKIP: an airlock package is already installed; not replacing it"
    exit 77
fi
state_existed=0
[[ -e /var/lib/airlock ]] && state_existed=1

cleanup() {
    echo "--- purging the package"
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q airlock || dpkg --purge airlock
    # The state directory is the user's data and survives a purge; only remove what this test
    # made (the default image built by postinst).
    if [[ $state_existed -eq 0 ]]; then
        rm -rf /var/lib/airlock
    fi
}
trap cleanup EXIT

echo "--- installing $deb"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "$(realpath "$deb")"; then
    echo "FAIL: apt-get install of the package failed" >&2
    exit 1
fi

echo "--- checking the installation"
out=$(/usr/bin/airlockctl --version 2>&1) || fail "airlockctl --version exited $?: $out"
echo "airlockctl --version: $out"
grep -q "$version" <<<"$out" || fail "airlockctl --version does not say $version"
out=$(/usr/sbin/airlockd --version 2>&1) || fail "airlockd --version exited $?: $out"
echo "airlockd --version: $out"
grep -q "$version" <<<"$out" || fail "airlockd --version does not say $version"
if [[ "$gui" == --gui ]]; then
    out=$(env -u DISPLAY -u WAYLAND_DISPLAY timeout 20 /usr/bin/airlock --version 2>&1) \
        || fail "airlock --version exited $?: $out"
    echo "airlock --version: $out"
fi
command -v airlockctl >/dev/null || fail "airlockctl not on PATH"

getent group airlock >/dev/null || fail "postinst did not create the group airlock"
for user in airlock-vmm airlock-gateway; do
    getent passwd "$user" >/dev/null || fail "postinst did not create the user $user"
done
for d in "/var/lib/airlock 711" "/var/lib/airlock/images 755" "/var/lib/airlock/snapshots 700" \
    "/run/airlock 755"; do
    set -- $d
    [[ "$(stat -c %a "$1" 2>/dev/null)" == "$2" ]] || fail "$1 is not a directory with mode $2"
done
if [[ -f /var/lib/airlock/images/default/image.json ]]; then
    echo "postinst built the default guest image"
else
    echo "note: postinst did not build the default guest image (see its message above)"
fi

echo "--- systemd-analyze verify on the installed units"
(cd / && systemd-analyze verify /usr/lib/systemd/system/airlockd.socket \
    /usr/lib/systemd/system/airlockd.service) || fail "systemd-analyze verify on installed units"
man -w airlockd >/dev/null 2>&1 || fail "man airlockd not found"
man -w airlockctl >/dev/null 2>&1 || fail "man airlockctl not found"

exit $failed
