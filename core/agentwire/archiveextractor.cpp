#include "core/agentwire/archiveextractor.h"

#include "core/agentwire/errnocode.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::agentwire {

namespace {

int openDirNoFollow(int dirFd, const char *name)
{
    int fd;
    do {
        fd = ::openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

std::string_view reasonOfErrno(int error)
{
    switch (error) {
    case ELOOP:
        return "symlink_in_path";
    case ENOTDIR:
        return "not_a_directory";
    case EEXIST:
    case EISDIR:
        return "exists";
    case ENOENT:
        return "not_found";
    case EACCES:
    case EPERM:
        return "permission";
    default:
        return "io";
    }
}

/// Ownership and modes are best effort (a non-root host user cannot chown).
void ignoreResult(int) { }

/// Errors of the folder as a whole rather than of one entry: extraction cannot go on.
bool isFatal(int error)
{
    return error == ENOSPC || error == EDQUOT || error == EIO || error == EROFS || error == EMFILE
        || error == ENFILE || error == ENOMEM;
}

} // namespace

ArchiveExtractor::ArchiveExtractor(int rootFd, ArchivePolicy policy, uid_t uid, gid_t gid)
    : m_root(rootFd), m_policy(policy), m_uid(uid), m_gid(gid)
{ }

ArchiveExtractor::~ArchiveExtractor()
{
    closeFile();
    if (m_cachedFd >= 0)
        ::close(m_cachedFd);
}

bool ArchiveExtractor::refuse(const std::string &path, std::string_view reason)
{
    m_refusals.push_back({path, std::string(reason)});
    return true;
}

bool ArchiveExtractor::stop(ErrorCode code, std::string why)
{
    if (!m_error) {
        m_error = std::move(why);
        m_errorCode = code;
    }
    closeFile();
    return false;
}

void ArchiveExtractor::closeFile()
{
    if (m_file >= 0)
        ::close(m_file);
    m_file = -1;
}

int ArchiveExtractor::openParent(const std::string &path, std::string &name,
                                 std::string_view &reason)
{
    const std::size_t slash = path.rfind('/');
    const std::string parent = slash == std::string::npos ? std::string() : path.substr(0, slash);
    name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (parent.empty())
        return m_root;
    if (m_cachedFd >= 0 && parent == m_cachedParent)
        return m_cachedFd;
    int fd = m_root;
    std::size_t start = 0;
    while (start <= parent.size()) {
        const std::size_t end = std::min(parent.find('/', start), parent.size());
        const std::string part = parent.substr(start, end - start);
        int next = openDirNoFollow(fd, part.c_str());
        if (next < 0 && errno == ENOENT) {
            if (::mkdirat(fd, part.c_str(), 0755) == 0 || errno == EEXIST) {
                if (m_uid != uid_t(-1))
                    ignoreResult(::fchownat(fd, part.c_str(), m_uid, m_gid, AT_SYMLINK_NOFOLLOW));
                next = openDirNoFollow(fd, part.c_str());
            }
        }
        const int error = errno;
        // O_DIRECTORY comes first: a symlink is ENOTDIR, not ELOOP. Say which it was.
        struct stat st
        {
        };
        const bool symlink = next < 0 && (error == ENOTDIR || error == ELOOP)
            && ::fstatat(fd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        if (fd != m_root)
            ::close(fd);
        if (next < 0) {
            reason = symlink ? std::string_view("symlink_in_path") : reasonOfErrno(error);
            if (isFatal(error))
                stop(errorCodeOfErrno(error),
                     "cannot create folder " + parent + ": " + std::strerror(error));
            return -1;
        }
        fd = next;
        start = end + 1;
    }
    if (m_cachedFd >= 0)
        ::close(m_cachedFd);
    m_cachedFd = fd;
    m_cachedParent = parent;
    return fd;
}

bool ArchiveExtractor::clearWay(int dirFd, const std::string &name)
{
    struct stat st
    {
    };
    if (::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return true; // nothing there
    if (S_ISDIR(st.st_mode))
        return false;
    // unlinkat never follows: a symlink in the way goes, not what it points at.
    return ::unlinkat(dirFd, name.c_str(), 0) == 0 || errno == ENOENT;
}

bool ArchiveExtractor::entry(const ArchiveEntry &entry)
{
    if (m_error)
        return false;
    if (++m_seen > m_policy.maxEntries)
        return stop(ErrorCode::TooLarge,
                    "the archive holds over " + std::to_string(m_policy.maxEntries) + " entries");
    m_current = entry;
    m_skipping = false;
    if (auto reason = archiveRefusal(entry, m_policy)) {
        m_skipping = true;
        return refuse(entry.path, *reason);
    }
    std::string name;
    std::string_view reason;
    const int parent = openParent(entry.path, name, reason);
    if (parent < 0) {
        m_skipping = true;
        return m_error ? false : refuse(entry.path, reason);
    }
    const std::uint32_t permMask = m_policy.allowSetid ? 07777 : 01777;
    const auto owned = [&] {
        if (m_uid != uid_t(-1))
            ignoreResult(::fchownat(parent, name.c_str(), m_uid, m_gid, AT_SYMLINK_NOFOLLOW));
    };
    switch (entry.kind) {
    case ArchiveKind::Directory: {
        if (::mkdirat(parent, name.c_str(), 0700) != 0) {
            const int error = errno;
            struct stat st
            {
            };
            const bool isDir = ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                && S_ISDIR(st.st_mode);
            if (error != EEXIST || (!isDir && !clearWay(parent, name))) {
                m_skipping = true;
                return isFatal(error) ? stop(errorCodeOfErrno(error), std::strerror(error))
                                      : refuse(entry.path, reasonOfErrno(error));
            }
            if (!isDir && ::mkdirat(parent, name.c_str(), 0700) != 0)
                return refuse(entry.path, reasonOfErrno(errno));
        }
        owned();
        m_dirModes.emplace_back(entry.path, entry.mode & permMask);
        ++m_entries;
        return true;
    }
    case ArchiveKind::File: {
        if (!clearWay(parent, name)) {
            m_skipping = true;
            return refuse(entry.path, "exists");
        }
        do {
            m_file = ::openat(parent, name.c_str(),
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        } while (m_file < 0 && errno == EINTR);
        if (m_file < 0) {
            const int error = errno;
            m_skipping = true;
            return isFatal(error)
                ? stop(errorCodeOfErrno(error),
                       "cannot create " + entry.path + ": " + std::strerror(error))
                : refuse(entry.path, reasonOfErrno(error));
        }
        owned();
        return true;
    }
    case ArchiveKind::Symlink:
        if (!clearWay(parent, name))
            return refuse(entry.path, "exists");
        if (::symlinkat(entry.link.c_str(), parent, name.c_str()) != 0)
            return refuse(entry.path, reasonOfErrno(errno));
        owned();
        ++m_entries;
        return true;
    case ArchiveKind::Hardlink: {
        std::string targetName;
        std::string_view targetReason;
        // The target's folder is cached in place of the link's: reopen the link's after.
        const int targetParent = openParent(entry.link, targetName, targetReason);
        if (targetParent < 0)
            return m_error ? false : refuse(entry.path, targetReason);
        const int dupTarget = targetParent == m_root ? m_root : ::dup(targetParent);
        const int linkParent = openParent(entry.path, name, reason);
        bool ok = linkParent >= 0 && dupTarget >= 0 && clearWay(linkParent, name)
            && ::linkat(dupTarget, targetName.c_str(), linkParent, name.c_str(), 0) == 0;
        const int error = errno;
        if (dupTarget >= 0 && dupTarget != m_root)
            ::close(dupTarget);
        if (!ok)
            return m_error ? false : refuse(entry.path, reasonOfErrno(error));
        ++m_entries;
        return true;
    }
    case ArchiveKind::Other:
    case ArchiveKind::End:
        break;
    }
    m_skipping = true;
    return refuse(entry.path, "device");
}

bool ArchiveExtractor::content(ByteView bytes)
{
    if (m_error)
        return false;
    if (m_skipping || m_file < 0)
        return true;
    m_bytes += bytes.size();
    if (m_bytes > m_policy.maxBytes)
        return stop(ErrorCode::TooLarge,
                    "the archive holds over " + std::to_string(m_policy.maxBytes) + " bytes");
    while (!bytes.empty()) {
        const ssize_t n = ::write(m_file, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : EIO;
            return stop(errorCodeOfErrno(error),
                        "cannot write " + m_current.path + ": " + std::strerror(error));
        }
        bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return true;
}

bool ArchiveExtractor::entryDone()
{
    if (m_error)
        return false;
    if (m_skipping || m_file < 0) {
        m_skipping = false;
        return true;
    }
    const std::uint32_t permMask = m_policy.allowSetid ? 07777 : 01777;
    // Ownership first: chown clears setuid bits, so the mode comes after it.
    if (m_uid != uid_t(-1))
        ignoreResult(::fchown(m_file, m_uid, m_gid));
    ::fchmod(m_file, m_current.mode & permMask);
    const timespec times[2] = {{0, UTIME_OMIT},
                               {static_cast<time_t>(m_current.mtimeNs / 1000000000),
                                static_cast<long>(m_current.mtimeNs % 1000000000)}};
    if (m_current.mtimeNs > 0)
        ::futimens(m_file, times);
    closeFile();
    ++m_entries;
    return true;
}

void ArchiveExtractor::end()
{
    // Deepest first, so that a read-only folder is closed after its content.
    for (auto it = m_dirModes.rbegin(); it != m_dirModes.rend(); ++it) {
        std::string name;
        std::string_view reason;
        const int parent = openParent(it->first, name, reason);
        if (parent < 0)
            continue;
        const int fd = openDirNoFollow(parent, name.c_str());
        if (fd < 0)
            continue;
        ::fchmod(fd, it->second);
        ::close(fd);
    }
    m_dirModes.clear();
}

} // namespace airlock::agentwire
