#include "core/agentwire/archivepolicy.h"

#include <sys/stat.h>
#include <vector>

namespace airlock::agentwire {

namespace {

std::vector<std::string_view> components(std::string_view path)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t slash = path.find('/', start);
        const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
        out.push_back(path.substr(start, end - start));
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return out;
}

} // namespace

bool symlinkStaysInside(std::string_view linkPath, std::string_view target)
{
    // Sound without knowing the other entries: the leading ".." climb real directories (the
    // link's own parents, which the extractor created without following anything) and stay
    // within the folder; what follows only descends, through entries that are each either real
    // or themselves symlinks under this rule.
    if (target.empty() || target.front() == '/')
        return false;
    const std::size_t depth = components(linkPath).size() - 1; // folders above the link
    std::size_t climbs = 0;
    bool descending = false;
    for (std::string_view part : components(target)) {
        if (part == "..") {
            if (descending)
                return false;
            ++climbs;
        } else if (part.empty() || part == ".") {
            return false;
        } else {
            descending = true;
        }
    }
    return climbs <= depth;
}

std::optional<std::string_view> archiveRefusal(const ArchiveEntry &entry,
                                               const ArchivePolicy &policy)
{
    if (entry.path.front() == '/')
        return "absolute_path";
    for (std::string_view part : components(entry.path)) {
        if (part == "..")
            return "parent_path";
        if (part.empty() || part == ".")
            return "bad_path";
    }
    switch (entry.kind) {
    case ArchiveKind::Symlink:
        if (policy.allowEscapingSymlinks)
            break;
        if (!policy.allowSymlinks)
            return "symlink";
        if (!symlinkStaysInside(entry.path, entry.link))
            return "symlink_escapes";
        break;
    case ArchiveKind::Hardlink: {
        if (!policy.allowHardlinks)
            return "hardlink";
        if (entry.link.front() == '/')
            return "absolute_path";
        for (std::string_view part : components(entry.link)) {
            if (part == ".." || part.empty() || part == ".")
                return "parent_path";
        }
        break;
    }
    case ArchiveKind::Other: {
        const std::uint32_t type = entry.mode & S_IFMT;
        if (type == S_IFIFO)
            return "fifo";
        if (type == S_IFSOCK)
            return "socket";
        return "device";
    }
    case ArchiveKind::File:
    case ArchiveKind::Directory:
    case ArchiveKind::End:
        break;
    }
    if (!policy.allowSetid && (entry.mode & S_ISUID))
        return "setuid";
    if (!policy.allowSetid && (entry.mode & S_ISGID))
        return "setgid";
    return std::nullopt;
}

} // namespace airlock::agentwire
