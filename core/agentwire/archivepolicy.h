#pragma once

#include "core/agentwire/archiveformat.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace airlock::agentwire {

/// What a receiver of an archive stream accepts (docs/agent-protocol.md, "Archive stream").
/// The defaults are the host's, where a hostile guest wrote the archive: nothing may leave or
/// alias the target folder or carry privilege.
struct ArchivePolicy
{
    /// A symlink that stays inside (relative; any leading ".." stay within the folder; no
    /// "." or ".." after the first other component) is created; others are refused.
    bool allowSymlinks = true;
    /// Symlinks anywhere (the guest, extracting what the host sent into its own disk).
    bool allowEscapingSymlinks = false;
    bool allowHardlinks = false;
    /// Keep setuid and setgid bits (otherwise such an entry is refused).
    bool allowSetid = false;
    /// Totals beyond which the receiver stops with too_large.
    std::uint64_t maxEntries = 1000000;
    std::uint64_t maxBytes = 64ull * 1024 * 1024 * 1024;
};

/// The name of the rule `entry` breaks under `policy`, or std::nullopt when it may be
/// written. Names (stable, in answers to clients): absolute_path, parent_path (a ".."
/// component), bad_path (an empty or "." component), symlink, symlink_escapes, hardlink,
/// fifo, socket, device, setuid, setgid.
std::optional<std::string_view> archiveRefusal(const ArchiveEntry &entry,
                                               const ArchivePolicy &policy);

/// True when `target`, the target of a symlink at relative path `linkPath`, resolves inside
/// the folder whatever the other entries are (the rule of ArchivePolicy::allowSymlinks).
bool symlinkStaysInside(std::string_view linkPath, std::string_view target);

} // namespace airlock::agentwire
