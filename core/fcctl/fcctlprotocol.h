#pragma once

#include <QLatin1StringView>

// The control channel between airlockd (FirecrackerVmm, core/vmm/fcctlchannel.h) and
// airlock-fcctl (FcctlController), header-only so airlockd needs no code of airlock_fcctl.
// docs/vmm.md, "airlock-fcctl", is the reference.
//
// One UTF-8 JSON object per line, on a socketpair airlock-fcctl inherits as descriptor 3.
// airlockd sends `{"id": N, "op": OP, ...fields}`; airlock-fcctl answers every command exactly
// once, in any order, with `{"id": N, "ok": true, ...result}` or
// `{"id": N, "ok": false, "error": {"kind": ERROR_KIND_NAME, "message": TEXT}}`. airlock-fcctl
// exits when the channel closes.

namespace airlock::fcctl {

/// Longest line either side accepts. Commands are a few hundred bytes (paths, a kernel
/// command line); answers carry a version, a state or an error message.
inline constexpr qsizetype kMaxLineBytes = 16 * 1024;
/// Longest error message airlockd keeps from an answer.
inline constexpr qsizetype kMaxMessageChars = 1000;

/// Waits up to `waitMs` for the API socket, GET /version (refused below 1.4), then PUT /logger
/// `logPath`, /machine-config `vcpus` `memoryMib`, /boot-source `kernel` `initrd` `bootArgs`,
/// /drives/rootfs `rootDisk` and /drives/seed `seedDisk` (each when not empty),
/// /network-interfaces/eth0 `tap` `mac` (when `tap` is not empty), /vsock `vsockPath`, /entropy
/// when the version has it; `track_dirty_pages` when the version has Diff snapshots
/// (FirecrackerVersion::hasDiffSnapshots). Result `{version, dirtyPages}`: dirtyPages says a
/// Diff snapshot may be asked for.
inline constexpr QLatin1StringView kConfigure {"configure"};
/// Waits like configure, GET /version, PUT /logger `logPath`, PUT /snapshot/load `snapshotPath`
/// `memPath` (with `tap` and `vsockPath` as overrides and `track_dirty_pages` when the version
/// has them), PATCH /vm Resumed. Result `{version, dirtyPages}`, as for configure.
inline constexpr QLatin1StringView kLoad {"load"};
/// PUT /actions InstanceStart.
inline constexpr QLatin1StringView kStart {"start"};
/// GET /version. Result `{version}`.
inline constexpr QLatin1StringView kVersion {"version"};
/// PATCH /vm Paused, Resumed.
inline constexpr QLatin1StringView kPause {"pause"};
inline constexpr QLatin1StringView kResume {"resume"};
/// PUT /actions SendCtrlAltDel.
inline constexpr QLatin1StringView kCtrlAltDel {"ctrlAltDel"};
/// GET /. Result `{state}`: "Not started", "Running" or "Paused".
inline constexpr QLatin1StringView kState {"state"};
/// PUT /snapshot/create, `memPath` `statePath`, `type` "Full" (the default) or "Diff" (only
/// after a configure or load that answered dirtyPages true; InvalidState otherwise).
inline constexpr QLatin1StringView kSnapshot {"snapshot"};

} // namespace airlock::fcctl
