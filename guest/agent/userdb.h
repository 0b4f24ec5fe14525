#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace airlock::guest {

/// A user as /etc/passwd names it, with its groups from /etc/group.
struct UserEntry
{
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
    std::string shell;
    std::vector<gid_t> groups; ///< supplementary groups (the primary one included)
};

/// Looks `name` up in `passwdPath` and its supplementary groups in `groupPath`, parsing the
/// files itself: getpwnam() in a static glibc needs NSS modules it cannot load. Lines that do
/// not have the seven (passwd) or four (group) fields are skipped.
std::optional<UserEntry> lookupUser(std::string_view name,
                                    const std::string &passwdPath = "/etc/passwd",
                                    const std::string &groupPath = "/etc/group");

} // namespace airlock::guest
