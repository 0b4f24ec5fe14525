#!/bin/bash
# Builds Airlock's default guest image from Debian packages only:
#   DIR/vmlinux     uncompressed ELF kernel (boots directly through PVH on QEMU microvm)
#   DIR/initrd.img  gzip'd cpio (newc): busybox-static, the virtio modules, an init
#   DIR/image.json  {id, description, kernel, initrd, kernelArgs, kernelVersion, createdAt}
#
# Usage: build-image.sh --output DIR [--name ID] [--cache DIR] [--force]
#
# Idempotent: does nothing when DIR/image.json exists and is newer than this script and the
# guest files beside it. Downloaded .debs are kept in the cache (default
# /var/cache/airlock-guest, or DIR/../.cache when that is not writable). The kernel is only
# unpacked into a temporary directory, never installed on the host.
set -euo pipefail
umask 022 # the image must be readable by the unprivileged VMM user

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
output=""
name="default"
cache=""
force=0

usage() {
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
    case "$1" in
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    --name) name=${2:?--name needs an id}; shift 2 ;;
    --cache) cache=${2:?--cache needs a directory}; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[[ -n "$output" ]] || { echo "build-image.sh: --output DIR is required" >&2; usage >&2; exit 2; }
# Image ids follow the same rule as sandbox names (core/model/names.h).
[[ "$name" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || { echo "build-image.sh: invalid image id '$name'" >&2; exit 2; }

log() { echo "build-image.sh: $*" >&2; }

# Up to date? Newer than this script and every guest file it copies.
if [[ $force -eq 0 && -f "$output/image.json" && -f "$output/vmlinux" && -f "$output/initrd.img" ]]; then
    stale=0
    for src in "${BASH_SOURCE[0]}" "$script_dir"/files/*; do
        [[ -e "$src" && "$src" -nt "$output/image.json" ]] && stale=1
    done
    if [[ $stale -eq 0 ]]; then
        log "$output is up to date"
        exit 0
    fi
fi

for tool in apt-get apt-cache dpkg-deb cpio gzip xz grep; do
    command -v "$tool" >/dev/null || { log "missing tool: $tool (apt-get install it)"; exit 1; }
done

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

# Modules in load order. Built-in ones are skipped; compressed ones are unpacked here so the
# guest's busybox insmod needs no decompressor. button + evdev let busybox acpid see the ACPI
# power button that QMP system_powerdown presses.
modules=(virtio_ring virtio virtio_mmio failover net_failover virtio_net virtio_blk virtio_console
    button evdev)
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

install -m 0755 "$script_dir/files/init" "$root/init"
install -m 0755 "$script_dir/files/rcS" "$root/etc/rcS"
install -m 0755 "$script_dir/files/airlock-agent" "$root/sbin/airlock-agent"
install -m 0755 "$script_dir/files/power-button" "$root/etc/acpi/PWRF/00000080"
install -m 0644 "$script_dir/files/inittab" "$root/etc/inittab"
install -m 0644 "$script_dir/files/profile" "$root/etc/profile"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf 'airlock\n' >"$root/etc/hostname"

log "packing initramfs"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) \
    | gzip -9n >"$work/initrd.img"

kernel_args="quiet panic=-1"
created_at=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
cat >"$work/image.json" <<EOF
{
    "id": "$name",
    "description": "Debian 12 kernel $kver with a busybox initramfs and a root shell on the console",
    "kernel": "vmlinux",
    "initrd": "initrd.img",
    "kernelArgs": "$kernel_args",
    "kernelVersion": "$kver",
    "createdAt": "$created_at"
}
EOF

# Files 0644 and directories 0755: the unprivileged VMM user reads them. image.json goes last so
# a half-built image is never taken for a finished one.
rm -f "$output/image.json"
for f in vmlinux initrd.img; do
    install -m 0644 "$work/$f" "$output/.$f.tmp"
    mv -f "$output/.$f.tmp" "$output/$f"
done
chmod 0755 "$output"
install -m 0644 "$work/image.json" "$output/.image.json.tmp"
mv -f "$output/.image.json.tmp" "$output/image.json"
log "built image '$name' (kernel $kver) in $output"
