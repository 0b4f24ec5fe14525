#!/bin/bash
# Builds an Airlock guest image from Debian packages only. Two variants:
#
#   busybox (default)  DIR/vmlinux, DIR/initrd.img: the guest is the initramfs itself
#                      (busybox-static, the virtio modules, the guest files, the agent)
#   debian             the same kernel and initramfs, which mounts a root disk and
#                      switch_roots into it, plus DIR/rootfs.qcow2: debootstrap --variant=minbase
#                      with curl, openssl, ca-certificates, python3 and busybox-static (init,
#                      acpid), made into an ext4 file system without mounting (mke2fs -d)
#   DIR/image.json     {id, description, kernel, initrd, [disk], kernelArgs, kernelVersion,
#                      vmms, createdAt}
#
# Usage: build-image.sh --output DIR [--agent PATH] [--variant busybox|debian] [--name ID]
#                       [--cache DIR] [--disk-size SIZE] [--force]
#
# --agent names the guest agent binary (guest/agent, static; stripped into /sbin/airlock-agent
# of both variants); the default is airlock-agent beside this script, where the package puts it.
# Idempotent: does nothing when DIR/image.json exists and is newer than this script, the
# guest files beside it and the agent. Downloaded .debs are kept in the cache (default
# /var/cache/airlock-guest, or DIR/../.cache when that is not writable; debootstrap's in
# CACHE/debootstrap). The kernel is only unpacked into a temporary directory, never installed on
# the host. The debian variant needs root (debootstrap), debootstrap, mke2fs and qemu-img.
set -euo pipefail
umask 022 # the image must be readable by the unprivileged VMM user

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
output=""
name=""
variant="busybox"
cache=""
disk_size="4G"
force=0
agent="$script_dir/airlock-agent"

usage() {
    sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
    case "$1" in
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    --agent) agent=${2:?--agent needs the airlock-agent binary}; shift 2 ;;
    --name) name=${2:?--name needs an id}; shift 2 ;;
    --variant) variant=${2:?--variant needs busybox or debian}; shift 2 ;;
    --disk-size) disk_size=${2:?--disk-size needs a size such as 4G}; shift 2 ;;
    --cache) cache=${2:?--cache needs a directory}; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[[ -n "$output" ]] || { echo "build-image.sh: --output DIR is required" >&2; usage >&2; exit 2; }
[[ -f "$agent" && -x "$agent" ]] || { echo "build-image.sh: no guest agent binary at '$agent' (--agent PATH)" >&2; exit 2; }
case "$variant" in
busybox) name=${name:-default} ;;
debian) name=${name:-debian} ;;
*) echo "build-image.sh: unknown variant '$variant' (busybox or debian)" >&2; exit 2 ;;
esac
[[ "$disk_size" =~ ^[1-9][0-9]*[MG]$ ]] || { echo "build-image.sh: invalid --disk-size '$disk_size' (e.g. 4G)" >&2; exit 2; }
# Image ids follow the same rule as sandbox names (core/model/names.h).
[[ "$name" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || { echo "build-image.sh: invalid image id '$name'" >&2; exit 2; }

log() { echo "build-image.sh: $*" >&2; }

# Up to date? Newer than this script, every guest file it copies and the agent binary.
products=(image.json vmlinux initrd.img)
[[ $variant == debian ]] && products+=(rootfs.qcow2)
complete=1
for f in "${products[@]}"; do [[ -f "$output/$f" ]] || complete=0; done
if [[ $force -eq 0 && $complete -eq 1 ]]; then
    stale=0
    for src in "${BASH_SOURCE[0]}" "$script_dir"/files/* "$agent"; do
        [[ -e "$src" && "$src" -nt "$output/image.json" ]] && stale=1
    done
    if [[ $stale -eq 0 ]]; then
        log "$output is up to date"
        exit 0
    fi
fi

tools=(apt-get apt-cache dpkg-deb cpio gzip xz grep strip readelf)
[[ $variant == debian ]] && tools+=(debootstrap mke2fs qemu-img)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { log "missing tool: $tool (apt-get install it)"; exit 1; }
done
if [[ $variant == debian && $(id -u) -ne 0 ]]; then
    log "the debian variant needs root (debootstrap creates device nodes and owners)"
    exit 1
fi

mkdir -p "$output"
output=$(cd "$output" && pwd)
if [[ -z "$cache" ]]; then
    cache=/var/cache/airlock-guest
    if ! mkdir -p "$cache" 2>/dev/null || [[ ! -w "$cache" ]]; then
        cache="$(dirname "$output")/.cache"
    fi
fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/airlock-guest.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work" # apt-get download hands the fetch to the _apt user

# The concrete kernel package the linux-image-amd64 metapackage points at.
kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
if [[ -z "$kernel_pkg" ]]; then
    log "apt-cache knows no linux-image-amd64; running apt-get update"
    apt-get update -qq
    kernel_pkg=$(apt-cache depends linux-image-amd64 \
        | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
fi
[[ -n "$kernel_pkg" ]] || { log "cannot resolve linux-image-amd64 to a kernel package"; exit 1; }

# Downloads a package's .deb into the cache unless that exact version is there; prints its path.
fetch_deb() {
    local pkg=$1 version file
    version=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
    if [[ -n "$version" && "$version" != "(none)" ]]; then
        # apt-get names files pkg_version_arch.deb with ':' in the version escaped as %3a.
        local cached=("$cache/${pkg}_${version//:/%3a}_"*.deb)
        if [[ -e "${cached[0]}" ]]; then
            echo "${cached[0]}"
            return
        fi
    fi
    log "downloading $pkg"
    # _apt cannot write into root-only caches; download in a world-writable scratch dir.
    local dl="$work/dl-$pkg"
    mkdir -p "$dl"
    chmod 0777 "$dl"
    if ! (cd "$dl" && apt-get download -q "$pkg" >&2); then
        log "download failed; running apt-get update and retrying"
        apt-get update -qq
        (cd "$dl" && apt-get download -q "$pkg" >&2)
    fi
    local downloaded=("$dl"/*.deb)
    file=${downloaded[0]}
    [[ -e "$file" ]] || { log "apt-get download $pkg produced no .deb"; exit 1; }
    mv "$file" "$cache/"
    echo "$cache/$(basename "$file")"
}

kernel_deb=$(fetch_deb "$kernel_pkg")
busybox_deb=$(fetch_deb busybox-static)

log "unpacking $(basename "$kernel_deb")"
dpkg-deb -x "$kernel_deb" "$work/kernel"
dpkg-deb -x "$busybox_deb" "$work/busybox"

kernels=("$work"/kernel/boot/vmlinuz-*)
vmlinuz=${kernels[0]}
[[ -e "$vmlinuz" ]] || { log "$kernel_pkg ships no /boot/vmlinuz-*"; exit 1; }
kver=${vmlinuz##*/vmlinuz-}
moddir="$work/kernel/lib/modules/$kver"

# vmlinuz is a bzImage whose payload is an XZ-compressed ELF vmlinux; QEMU's microvm boots the
# ELF directly through its PVH note. Try each XZ magic (fd 37 7a 58 5a 00) until one
# decompresses to an ELF file.
log "extracting vmlinux from $(basename "$vmlinuz")"
found=0
while IFS=: read -r offset _; do
    # tail dies of SIGPIPE once xz has read its one stream; only xz's status counts.
    set +e +o pipefail
    tail -c +$((offset + 1)) "$vmlinuz" | xz -dc --single-stream >"$work/vmlinux" 2>/dev/null
    xz_status=${PIPESTATUS[1]}
    set -e -o pipefail
    if [[ $xz_status -eq 0 \
        && "$(head -c4 "$work/vmlinux" | od -An -tx1 | tr -d ' ')" == "7f454c46" ]]; then
        found=1
        break
    fi
done < <(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz")
[[ $found -eq 1 ]] || { log "no XZ-compressed ELF found in $vmlinuz"; exit 1; }

# initramfs tree
root="$work/root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,root,etc/acpi/PWRF,lib/modules,usr/bin,usr/sbin,var/log}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

# Modules in load order (the initramfs loads them; they stay loaded after a switch_root, so the
# Debian root file system needs none). Built-in ones are skipped; compressed ones are unpacked
# here so the guest's busybox insmod needs no decompressor. button + evdev let busybox acpid see
# the ACPI power button that QMP system_powerdown presses. vsock and its virtio transport carry
# the agent's channel in a Firecracker guest (no virtio-serial there; docs/vmm.md, "Guest agent";
# the kernel has CONFIG_VIRTIO_VSOCKETS=m). The debian variant adds ext4 and what
# it needs (modinfo: depends jbd2, mbcache, crc16; softdep crypto-crc32c).
modules=(virtio_ring virtio virtio_mmio failover net_failover virtio_net virtio_blk virtio_console
    button evdev vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport)
[[ $variant == debian ]] && modules+=(crc16 mbcache crc32c_generic jbd2 ext4)
: >"$root/lib/modules/load-order"
for mod in "${modules[@]}"; do
    if grep -qE "/${mod}\.ko$" "$moddir/modules.builtin" 2>/dev/null; then
        continue
    fi
    path=$(find "$moddir/kernel" -name "${mod}.ko" -o -name "${mod}.ko.xz" -o -name "${mod}.ko.zst" \
        -o -name "${mod}.ko.gz" | head -n1)
    [[ -n "$path" ]] || { log "module $mod is neither built in nor shipped by $kernel_pkg"; exit 1; }
    case "$path" in
    *.ko.xz) xz -dc "$path" >"$root/lib/modules/$mod.ko" ;;
    *.ko.zst) zstd -qdc "$path" >"$root/lib/modules/$mod.ko" ;;
    *.ko.gz) gzip -dc "$path" >"$root/lib/modules/$mod.ko" ;;
    *) cp "$path" "$root/lib/modules/$mod.ko" ;;
    esac
    echo "$mod" >>"$root/lib/modules/load-order"
done

# The guest contract (files/rcS) is one script for both variants: the busybox guest runs it from
# the initramfs, the Debian guest from its root disk after files/init has switched to it. The
# agent is static (no library of either variant needed); its symbols are of no use in a guest.
install_guest_files() {
    local dest=$1 shell=$2
    mkdir -p "$dest/etc/acpi/PWRF" "$dest/sbin"
    install -m 0755 "$script_dir/files/rcS" "$dest/etc/rcS"
    strip --strip-all -o "$dest/sbin/airlock-agent" "$agent"
    chmod 0755 "$dest/sbin/airlock-agent"
    install -m 0755 "$script_dir/files/power-button" "$dest/etc/acpi/PWRF/00000080"
    sed "s|-/bin/sh\$|-$shell|" "$script_dir/files/inittab" >"$dest/etc/inittab"
    chmod 0644 "$dest/etc/inittab"
}

# curl for the busybox image: busybox wget's HTTPS (ssl_client) verifies no certificate, so the
# image gets Debian's curl, the shared libraries it needs and the dynamic loader. The packages
# are the ones apt says curl depends on; of their files only curl and the libraries its ELF
# NEEDED entries reach (transitively) are copied, stripped. curl reads the CA bundle compiled
# into Debian's build, /etc/ssl/certs/ca-certificates.crt, which rcS writes with the sandbox CA.
install_curl() {
    local dest=$1 staging="$work/curl" pkg lib
    mkdir -p "$staging"
    while read -r pkg; do
        dpkg-deb -x "$(fetch_deb "$pkg")" "$staging"
    done < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances curl | grep -v '^ ' | grep -v '^<' | sort -u)
    local libdirs=("$staging/lib/x86_64-linux-gnu" "$staging/usr/lib/x86_64-linux-gnu")
    local -A copied=()
    local queue=("$staging/usr/bin/curl")
    mkdir -p "$dest/lib/x86_64-linux-gnu" "$dest/lib64" "$dest/usr/bin"
    strip --strip-all -o "$dest/usr/bin/curl" "$staging/usr/bin/curl"
    while [[ ${#queue[@]} -gt 0 ]]; do
        local elf=${queue[0]}
        queue=("${queue[@]:1}")
        while read -r lib; do
            [[ -n "${copied[$lib]:-}" ]] && continue
            local found=""
            for dir in "${libdirs[@]}"; do
                [[ -e "$dir/$lib" ]] && { found="$dir/$lib"; break; }
            done
            [[ -n "$found" ]] || { log "curl needs $lib, which no package of its dependencies ships"; exit 1; }
            copied[$lib]=1
            strip --strip-unneeded -o "$dest/lib/x86_64-linux-gnu/$lib" "$(readlink -f "$found")"
            queue+=("$found")
        done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
    done
    # The loader the binaries name (PT_INTERP) is /lib64/ld-linux-x86-64.so.2.
    strip --strip-unneeded -o "$dest/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
        "$(readlink -f "$staging/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")"
    chmod 0755 "$dest"/lib/x86_64-linux-gnu/* "$dest/usr/bin/curl"
    ln -sf ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$dest/lib64/ld-linux-x86-64.so.2"
}

install -m 0755 "$script_dir/files/init" "$root/init"
if [[ $variant == busybox ]]; then
    install_guest_files "$root" /bin/sh
    install -m 0644 "$script_dir/files/profile" "$root/etc/profile"
    # busybox sh runs its applets whatever PATH holds, so init's removal of the wget link does
    # not keep the console's shell from busybox's crashing wget; a function does.
    printf '%s\n' "# busybox's wget crashes (SIGSEGV) on every URL here; this image has curl." \
        "wget() { echo 'wget: not in this image; use curl (curl -O URL saves a file)' >&2; return 127; }" \
        >>"$root/etc/profile"
    # The agent user (uid and gid 1000 in both images): exec and workspaces run as it
    # (docs/agent-protocol.md). The cpio owns everything by root: rcS makes its folders.
    printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n' \
        >"$root/etc/passwd"
    printf 'root:x:0:\nagent:x:1000:\n' >"$root/etc/group"
    printf 'airlock\n' >"$root/etc/hostname"
    install_curl "$root"
fi

log "packing initramfs"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) \
    | gzip -9n >"$work/initrd.img"

if [[ $variant == debian ]]; then
    # The suite and mirror the host's apt uses (apt-cache policy names the mirror of each
    # index), so the guest gets the same release as the kernel.
    # shellcheck source=/dev/null
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n "$suite" ]] || { log "cannot tell the host's Debian release (/etc/os-release)"; exit 1; }
    mirror=$(apt-cache policy | sed -n "s|^ *[0-9]* \(https\?://[^ ]*\) $suite/main amd64 Packages\$|\1|p" \
        | head -n1)
    [[ -n "$mirror" ]] || { log "no apt source for $suite/main amd64 on this host"; exit 1; }
    mkdir -p "$cache/debootstrap"
    rootfs="$work/rootfs"
    log "debootstrap --variant=minbase $suite from $mirror (packages cached in $cache/debootstrap)"
    debootstrap --variant=minbase --cache-dir="$cache/debootstrap" \
        --include=curl,openssl,ca-certificates,python3,busybox-static \
        "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 30 "$work/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }

    # busybox provides what minbase lacks for the contract: init, acpid, poweroff, ip.
    for applet in init acpid poweroff reboot halt ip; do
        if ! chroot "$rootfs" /bin/sh -c "command -v $applet" >/dev/null; then
            ln -s /bin/busybox "$rootfs/usr/sbin/$applet"
        fi
    done
    install_guest_files "$rootfs" /bin/bash
    # The agent user, as in the busybox image; mke2fs -d keeps the owners of its folders.
    chroot "$rootfs" groupadd --gid 1000 agent
    chroot "$rootfs" useradd --uid 1000 --gid agent --create-home --home-dir /home/agent \
        --shell /bin/bash agent
    install -d -m 0755 -o 1000 -g 1000 "$rootfs/workspace"
    install -m 0644 "$script_dir/files/profile" "$rootfs/etc/profile.d/airlock.sh"
    mkdir -p "$rootfs/usr/local/share/ca-certificates"
    printf 'airlock\n' >"$rootfs/etc/hostname"
    # debootstrap copied the host's resolver configuration; the guest writes its own at boot.
    : >"$rootfs/etc/resolv.conf"
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
    # Nothing the guest needs at run time: package caches and lists (apt-get update brings the
    # lists back), documentation, manuals, translations.
    rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
        "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* \
        "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*.log \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/tmp/*
    rootfs_kib=$(du -sk "$rootfs" | cut -f1)

    # ext4 straight from the directory (mke2fs -d: no loop device, no mount) on a sparse file of
    # the disk's virtual size. Inode tables and journal are written now (zeros that qemu-img
    # skips) so the guest's ext4lazyinit does not dirty them into every sandbox's overlay.
    log "making the ext4 root file system ($((rootfs_kib / 1024)) MiB of files, $disk_size disk)"
    truncate -s "$disk_size" "$work/rootfs.ext4"
    mke2fs -q -t ext4 -L airlock-root -d "$rootfs" -i 65536 -J size=32 -m 0 \
        -E lazy_itable_init=0,lazy_journal_init=0 "$work/rootfs.ext4"
    qemu-img convert -q -f raw -O qcow2 "$work/rootfs.ext4" "$work/rootfs.qcow2"
    rm -f "$work/rootfs.ext4"
    rootfs_packages=$(chroot "$rootfs" dpkg-query -W -f '.' | wc -c)
fi

if [[ $variant == debian ]]; then
    description="Debian $suite ($rootfs_packages packages: minbase with curl, openssl, ca-certificates, python3) on a $disk_size disk, kernel $kver"
    disk_line='    "disk": "rootfs.qcow2",'
    kernel_args="quiet loglevel=3 panic=-1"
    # Firecracker reads raw disks only: the qcow2 root disk is QEMU's.
    vmms='"qemu"'
else
    description="Debian 12 kernel $kver with a busybox initramfs and a root shell on the console"
    disk_line=""
    kernel_args="quiet loglevel=3 panic=-1"
    # The same vmlinux and initramfs boot in Firecracker (1.8 or later: the kernel finds the
    # virtio-mmio devices in the ACPI tables), which shows its seed disk without a serial
    # (/etc/rcS then takes the read-only disk).
    vmms='"qemu", "firecracker"'
fi
# loglevel=3 (after quiet, which would set 4): the console shows critical kernel messages, not
# errors (they stay in dmesg). The microvm has no PCI bus, and x86's PCI init reports that as
# "PCI: Fatal: No config space access function found" at error level on every boot, pci=off
# included; harmless (the devices are virtio-mmio), but it is the first thing a new user reads.
created_at=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
{
    printf '{\n'
    printf '    "id": "%s",\n' "$name"
    printf '    "description": "%s",\n' "$description"
    printf '    "kernel": "vmlinux",\n'
    printf '    "initrd": "initrd.img",\n'
    [[ -n "$disk_line" ]] && printf '%s\n' "$disk_line"
    printf '    "kernelArgs": "%s",\n' "$kernel_args"
    printf '    "kernelVersion": "%s",\n' "$kver"
    printf '    "vmms": [%s],\n' "$vmms"
    printf '    "createdAt": "%s"\n' "$created_at"
    printf '}\n'
} >"$work/image.json"

# Files 0644 and directories 0755: the unprivileged VMM user reads them. image.json goes last so
# a half-built image is never taken for a finished one.
rm -f "$output/image.json"
files=(vmlinux initrd.img)
[[ $variant == debian ]] && files+=(rootfs.qcow2)
for f in "${files[@]}"; do
    install -m 0644 "$work/$f" "$output/.$f.tmp"
    mv -f "$output/.$f.tmp" "$output/$f"
done
[[ $variant == busybox ]] && rm -f "$output/rootfs.qcow2"
chmod 0755 "$output"
install -m 0644 "$work/image.json" "$output/.image.json.tmp"
mv -f "$output/.image.json.tmp" "$output/image.json"
log "built $variant image '$name' (kernel $kver) in $output"
