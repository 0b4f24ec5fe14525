#!/bin/bash
# systemd-analyze verify on airlockd.socket and airlockd.service, plus sysusers.d and tmpfiles.d
# applied to a scratch root. verify needs ExecStart's binary to exist, so the service is checked
# as a copy whose airlockd path is the one just built.
# Usage: check-units.sh SERVICE_TEMPLATE SOCKET_UNIT SYSUSERS TMPFILES AIRLOCKD
set -euo pipefail
service_in=$1 socket_unit=$2 sysusers=$3 tmpfiles=$4 airlockd=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ -x "$airlockd" ]] || fail "airlockd not built: $airlockd"
sed "s|@AIRLOCK_AIRLOCKD_PATH@|$airlockd|g" "$service_in" >"$work/airlockd.service"
cp "$socket_unit" "$work/airlockd.socket"
grep -q '@[A-Z_]*@' "$work/airlockd.service" "$work/airlockd.socket" \
    && fail "unsubstituted @VARIABLE@ left in a unit"

# --man=no: the man pages are not installed yet (the installed units are verified with them by
# check-deb-install.sh).
(cd "$work" && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no \
    "$work/airlockd.socket" "$work/airlockd.service") 2>&1 | tee "$work/verify.log"
status=${PIPESTATUS[0]}
[[ $status -eq 0 ]] || fail "systemd-analyze verify exited $status"
# verify only fails on some mistakes; unknown directives and bad values are warnings.
if grep -vE 'Failed to (open|connect|create bus)|bus connection' "$work/verify.log" \
    | grep -E '\.(service|socket):[0-9]+:|Unknown|Failed|Invalid|not valid|deprecated' ; then
    fail "systemd-analyze verify reported problems"
fi

# The socket unit: the contract from the issue.
grep -qx 'ListenStream=/run/airlock/airlockd.sock' "$work/airlockd.socket" || fail "ListenStream"
grep -qx 'SocketMode=0660' "$work/airlockd.socket" || fail "SocketMode"
grep -qx 'SocketGroup=airlock' "$work/airlockd.socket" || fail "SocketGroup"
for cap in CAP_NET_ADMIN CAP_SETUID CAP_SETGID CAP_CHOWN CAP_DAC_OVERRIDE CAP_FOWNER CAP_KILL; do
    grep -q "^CapabilityBoundingSet=.*\b$cap\b" "$work/airlockd.service" || fail "missing $cap"
done
grep -q "^ExecStart=$airlockd --socket /run/airlock/airlockd.sock --state-dir " \
    "$work/airlockd.service" || fail "ExecStart"

# sysusers.d: group airlock, users airlock-vmm and airlock-gateway.
mkdir -p "$work/root/etc"
systemd-sysusers --root="$work/root" - <"$sysusers"
grep -q '^airlock:' "$work/root/etc/group" || fail "sysusers: no group airlock"
for user in airlock-vmm airlock-gateway; do
    line=$(grep "^$user:" "$work/root/etc/passwd") || fail "sysusers: no user $user"
    uid=$(cut -d: -f3 <<<"$line")
    ((uid > 0 && uid < 1000)) || fail "sysusers: $user has uid $uid, not a system uid"
    [[ $(cut -d: -f7 <<<"$line") == /usr/sbin/nologin ]] || fail "sysusers: $user has a shell"
done
grep -qE '^kvm:[^:]*:[0-9]+:(.*,)?airlock-vmm(,|$)' "$work/root/etc/group" \
    || fail "sysusers: airlock-vmm is not in group kvm"

# tmpfiles.d: directories, modes and owners.
systemd-tmpfiles --root="$work/root" --create - <"$tmpfiles"
check_dir() {
    local path=$1 mode=$2
    [[ -d "$work/root$path" ]] || fail "tmpfiles: $path not created"
    local got
    got=$(stat -c '%a %U' "$work/root$path")
    [[ "$got" == "$mode root" ]] || fail "tmpfiles: $path is '$got', want '$mode root'"
}
check_dir /var/lib/airlock 711
check_dir /var/lib/airlock/images 755
check_dir /var/lib/airlock/snapshots 700
check_dir /run/airlock 755
echo "units, sysusers.d and tmpfiles.d: ok"
