#!/bin/bash
# dpkg-deb --contents lists what the package must ship, and the shipped unit names the installed
# airlockd. Usage: check-deb-contents.sh BUILD_DIR [--gui]
set -euo pipefail
build=$1 gui=${2:-}
deb=$(ls "$build"/packages/airlock_*.deb | head -n1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --contents "$deb" | awk '{print $1, $2, $6}' | sed 's| \./| /|' >"$work/contents"
cat "$work/contents"
fail=0
expect() { # expect PATH [MODE]
    local line
    line=$(grep -E " $1\$" "$work/contents" | head -n1)
    if [[ -z "$line" ]]; then
        echo "FAIL: missing $1" >&2
        fail=1
    elif [[ -n "${2:-}" && "${line%% *}" != "$2" ]]; then
        echo "FAIL: $1 has mode ${line%% *}, want $2" >&2
        fail=1
    elif [[ "$(cut -d' ' -f2 <<<"$line")" != "root/root" ]]; then
        echo "FAIL: $1 not owned by root/root" >&2
        fail=1
    fi
}
expect /usr/bin/airlockctl -rwxr-xr-x
expect /usr/sbin/airlockd -rwxr-xr-x
expect /usr/lib/airlock/airlock-gateway -rwxr-xr-x
expect /usr/lib/airlock/airlock-fcctl -rwxr-xr-x
expect /usr/lib/airlock/airlock-console -rwxr-xr-x
expect /usr/lib/systemd/system/airlockd.service -rw-r--r--
expect /usr/lib/systemd/system/airlockd.socket -rw-r--r--
expect /usr/lib/sysusers.d/airlock.conf
expect /usr/lib/tmpfiles.d/airlock.conf
expect /usr/share/man/man1/airlockctl.1.gz
expect /usr/share/man/man8/airlockd.8.gz
expect /usr/share/bash-completion/completions/airlockctl
expect /usr/share/airlock/guest/build-image.sh -rwxr-xr-x
expect /usr/share/airlock/guest/files/init
expect /usr/share/doc/airlock/copyright
expect /usr/share/doc/airlock/changelog.gz
expect /usr/share/doc/airlock/packaging.md
expect /usr/share/lintian/overrides/airlock
if [[ "$gui" == --gui ]]; then
    expect /usr/bin/airlock -rwxr-xr-x
    expect /usr/share/applications/org.airlock.Airlock.desktop
    expect /usr/share/metainfo/org.airlock.Airlock.metainfo.xml
    expect /usr/share/icons/hicolor/scalable/apps/org.airlock.Airlock.svg
    expect /usr/share/man/man1/airlock.1.gz
fi
# Nothing outside the FHS places a package may use.
if grep -vE ' /(usr/(bin|sbin|lib|share)(/|$)|$)' "$work/contents" | grep -v ' /usr/$'; then
    echo "FAIL: files outside /usr/{bin,sbin,lib,share}" >&2
    fail=1
fi

dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/airlockd.service >"$work/service"
grep -qx 'ExecStart=/usr/sbin/airlockd --socket /run/airlock/airlockd.sock --state-dir /var/lib/airlock' \
    "$work/service" || { echo "FAIL: ExecStart in the packaged unit:" >&2; grep ExecStart "$work/service" >&2; fail=1; }

# Dependencies: computed libraries (shlibdeps) plus the listed run-time tools.
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for pkg in qemu-system-x86 qemu-utils busybox-static cpio libqt6sql6-sqlite systemd libqt6core6 libpsl5 publicsuffix; do
    grep -qE "(^|, )$pkg( |,|$)" <<<"$depends" || { echo "FAIL: Depends lacks $pkg" >&2; fail=1; }
done
exit $fail
