#!/usr/bin/env bash
# Installs what bench_gateway compares the gateway with (README.md, "Benchmarks"): nginx-light
# (the origin), haproxy (the equivalent proxy) and wrk (the load client). Not needed to build or
# test. The packages' postinst scripts would start nginx and haproxy as system services on the
# host's own interfaces; a policy-rc.d that refuses every start (exit 101, invoke-rc.d(8)) is in
# place during the install, and the units are stopped and disabled afterwards in case something
# started them anyway. The bench runs its own instances inside test network namespaces.
# Only what is missing is installed; safe to run again. Needs root.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "install-bench-deps.sh: run as root (sudo $0)" >&2
    exit 2
fi
wanted=(nginx-light haproxy wrk)
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-bench-deps.sh: ${wanted[*]} present"
else
    echo "install-bench-deps.sh: installing ${missing[*]}"
    policy=/usr/sbin/policy-rc.d
    saved=
    if [ -e "$policy" ]; then
        saved=$(mktemp)
        cp -p "$policy" "$saved"
    fi
    restore() {
        if [ -n "$saved" ]; then
            mv -f "$saved" "$policy"
        else
            rm -f "$policy"
        fi
    }
    trap restore EXIT
    printf '#!/bin/sh\n# install-bench-deps.sh: no service starts during the install\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
    restore
    trap - EXIT
fi
# Whatever started them (an earlier install without this script, systemd presets): stop them and
# keep them from starting at boot. The binaries are all the bench uses.
for unit in nginx haproxy; do
    if command -v systemctl >/dev/null; then
        if [ -d /run/systemd/system ]; then
            systemctl stop "$unit" 2>/dev/null || true
        fi
        systemctl disable "$unit" 2>/dev/null || true # works without a running systemd too
    fi
    if [ -x "/etc/init.d/$unit" ]; then
        "/etc/init.d/$unit" stop >/dev/null 2>&1 || true
        update-rc.d "$unit" disable >/dev/null 2>&1 || true
    fi
done
for binary in nginx haproxy wrk; do
    command -v "$binary" >/dev/null || { echo "install-bench-deps.sh: $binary missing after the install" >&2; exit 1; }
done
echo "install-bench-deps.sh: nginx, haproxy and wrk installed; their services are stopped and disabled"
