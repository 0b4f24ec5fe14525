#!/usr/bin/env bash
# Each process links only what it does (docs/architecture.md, "Libraries"): reads the dynamic
# section (readelf -d: NEEDED) and the symbol table of the built executables and fails when
# airlock-gateway, which parses hostile guest traffic, carries SQL, nftables, libarchive or
# zstd, or when airlockd carries a DNS wire-format or HTTP parser (Firecracker's HTTP answers are
# parsed by airlock-fcctl, as the VMM's uid), libssl or libssh, or when airlock-fcctl carries SQL,
# nftables, libarchive, zstd, libssl, ldns or libssh, or when
# either carries Qt Widgets, or when either carries libgit2 (a workspace diff is the client's).
# airlock-console (the console relay beside every Firecracker, outliving the helper) links no Qt
# and no library of the project's beyond its own: it relays bytes and parses none.
# Usage: check-links.sh AIRLOCKD AIRLOCK_GATEWAY AIRLOCKCTL AIRLOCK_FCCTL AIRLOCK_CONSOLE
set -euo pipefail
airlockd=$1 gateway=$2 airlockctl=$3 fcctl=$4 console=$5
status=0

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
symbols() { nm -C "$1" 2>/dev/null; }

# refuse BINARY WHAT REGEX: NEEDED entries matching REGEX are forbidden.
refuse_library() {
    local binary=$1 what=$2 regex=$3 hits
    hits=$(needed "$binary" | grep -E "$regex" || true)
    if [[ -n $hits ]]; then
        echo "FAIL: $(basename "$binary") links $what: $hits"
        status=1
    else
        echo "ok: $(basename "$binary") links no $what"
    fi
}
# refuse_symbols BINARY WHAT REGEX: defined or referenced symbols matching REGEX are forbidden
# (catches static and header-only code such as Boost.Beast, which NEEDED cannot show).
refuse_symbols() {
    local binary=$1 what=$2 regex=$3 count
    count=$(symbols "$binary" | grep -cE "$regex" || true)
    if [[ $count -gt 0 ]]; then
        echo "FAIL: $(basename "$binary") has $count symbols of $what, e.g.:"
        symbols "$binary" | grep -E "$regex" | head -3
        status=1
    else
        echo "ok: $(basename "$binary") has no symbols of $what"
    fi
}
# require_library BINARY WHAT REGEX: the check itself must see what it looks for.
require_library() {
    local binary=$1 what=$2 regex=$3
    if ! needed "$binary" | grep -qE "$regex"; then
        echo "FAIL: $(basename "$binary") does not link $what: the check reads the wrong thing"
        status=1
    fi
}

require_library "$airlockd" "Qt Sql" '^libQt6Sql\.so'
require_library "$airlockd" "libnftables" '^libnftables\.so'
require_library "$gateway" "libssl" '^libssl\.so'
require_library "$gateway" "ldns" '^libldns\.so'

refuse_library "$gateway" "Qt Sql" '^libQt6Sql\.so'
refuse_library "$gateway" "libnftables" '^libnftables\.so'
refuse_library "$gateway" "libarchive" '^libarchive\.so'
refuse_library "$gateway" "zstd" '^libzstd\.so'
refuse_library "$gateway" "spdlog" '^libspdlog\.so'
refuse_library "$gateway" "libssh" '^libssh\.so'
refuse_symbols "$gateway" "the registry (QSql)" 'QSql(Database|Query)'

refuse_library "$airlockd" "ldns" '^libldns\.so'
refuse_library "$airlockd" "libssl" '^libssl\.so'
refuse_library "$airlockd" "libssh" '^libssh\.so'
# No HTTP at all in root: Firecracker's API answers (which a guest that escaped into Firecracker
# controls) are parsed by airlock-fcctl, never by airlockd (docs/vmm.md).
refuse_symbols "$airlockd" "Boost.Beast" 'boost::beast'

# airlock-fcctl speaks Firecracker's HTTP API and nothing else: it must carry Beast's response
# parser (else this check reads the wrong thing) and none of the helper's or gateway's libraries.
if [[ $(symbols "$fcctl" | grep -cE 'boost::beast::http::basic_parser<false' || true) -eq 0 ]]; then
    echo "FAIL: $(basename "$fcctl") has no Boost.Beast response parser: the check reads the wrong thing"
    status=1
fi
refuse_library "$fcctl" "Qt Sql" '^libQt6Sql\.so'
refuse_library "$fcctl" "libnftables" '^libnftables\.so'
refuse_library "$fcctl" "libarchive" '^libarchive\.so'
refuse_library "$fcctl" "zstd" '^libzstd\.so'
refuse_library "$fcctl" "libssl" '^libssl\.so'
refuse_library "$fcctl" "ldns" '^libldns\.so'
refuse_library "$fcctl" "libssh" '^libssh\.so'
refuse_library "$fcctl" "libgit2" '^libgit2\.so'
refuse_symbols "$fcctl" "the registry (QSql)" 'QSql(Database|Query)'
refuse_symbols "$fcctl" "a Boost.Beast request parser or websocket" \
    'boost::beast::(websocket|http::(request_parser|basic_parser<true))'
# airlock-console: the C and C++ runtime only (and, in the sanitized build, the sanitizers'
# runtimes, which every instrumented binary links).
hits=$(needed "$console" \
    | grep -vE '^(libc|libm|libgcc_s|libstdc\+\+|ld-linux[-_a-z0-9]*|libasan|libubsan)\.so' || true)
if [[ -n $hits ]]; then
    echo "FAIL: $(basename "$console") links more than the C and C++ runtime: $hits"
    status=1
else
    echo "ok: $(basename "$console") links only the C and C++ runtime"
fi
refuse_symbols "$console" "Qt" '\bQ(Object|String|ByteArray|CoreApplication)\b'
refuse_symbols "$console" "Boost.Beast" 'boost::beast'
# Diffs of a workspace are made by the client that reviews them (core/workspace).
refuse_library "$airlockd" "libgit2" '^libgit2\.so'
refuse_library "$gateway" "libgit2" '^libgit2\.so'
require_library "$airlockctl" "libgit2" '^libgit2\.so'
refuse_symbols "$airlockd" "ldns" '\bldns_'
refuse_symbols "$airlockd" "libssl" '\bSSL_(CTX_)?(new|free|read|write|accept|connect)\b'

for binary in "$airlockd" "$gateway" "$airlockctl" "$fcctl" "$console"; do
    refuse_library "$binary" "Qt Widgets" '^libQt6(Widgets|Gui)\.so'
done
refuse_library "$airlockctl" "Qt Sql" '^libQt6Sql\.so'
exit $status
