#include "core/agentwire/archivewalker.h"

#include "core/agentwire/errnocode.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::agentwire {

namespace {

std::int64_t mtimeOf(const struct stat &st)
{
    return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

ArchiveWalker::Failure failure(int error, const std::string &what)
{
    return {errorCodeOfErrno(error), what + ": " + std::strerror(error)};
}

} // namespace

std::expected<std::unique_ptr<ArchiveWalker>, ArchiveWalker::Failure>
ArchiveWalker::open(const std::string &folder)
{
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno == ELOOP ? ENOTDIR : errno;
        return std::unexpected(failure(error, "cannot open folder " + folder));
    }
    struct stat st
    {
    };
    ::fstat(fd, &st);
    std::unique_ptr<ArchiveWalker> walker(new ArchiveWalker(st.st_dev));
    if (auto pushed = walker->pushLevel(fd, std::string()); !pushed)
        return std::unexpected(pushed.error());
    return walker;
}

ArchiveWalker::ArchiveWalker(dev_t device) : m_device(device) { }

ArchiveWalker::~ArchiveWalker()
{
    for (Level &level : m_levels)
        ::close(level.fd);
    if (m_file >= 0)
        ::close(m_file);
}

std::expected<void, ArchiveWalker::Failure> ArchiveWalker::pushLevel(int fd, std::string prefix)
{
    const int listFd = ::dup(fd);
    DIR *dir = listFd >= 0 ? ::fdopendir(listFd) : nullptr;
    if (!dir) {
        const int error = errno;
        if (listFd >= 0)
            ::close(listFd);
        ::close(fd);
        return std::unexpected(failure(error, "cannot list " + (prefix.empty() ? "." : prefix)));
    }
    Level level;
    level.fd = fd;
    level.prefix = std::move(prefix);
    while (const dirent *entry = ::readdir(dir)) {
        const std::string_view name(entry->d_name);
        if (name != "." && name != "..")
            level.names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(level.names.begin(), level.names.end());
    m_levels.push_back(std::move(level));
    return {};
}

std::expected<bool, ArchiveWalker::Failure> ArchiveWalker::nextRecord()
{
    while (!m_levels.empty()) {
        Level &level = m_levels.back();
        if (level.next == level.names.size()) {
            ::close(level.fd);
            m_levels.pop_back();
            continue;
        }
        const std::string name = level.names[level.next++];
        const std::string path = level.prefix + name;
        struct stat st
        {
        };
        if (::fstatat(level.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue; // removed since the folder was listed
            return std::unexpected(failure(errno, "cannot stat " + path));
        }
        ArchiveEntry entry;
        entry.path = path;
        entry.mode = st.st_mode;
        entry.mtimeNs = mtimeOf(st);
        if (path.size() > kMaxPathBytes)
            return std::unexpected(
                Failure {ErrorCode::TooLarge, "a path over 4096 bytes: " + path});
        switch (st.st_mode & S_IFMT) {
        case S_IFDIR: {
            entry.kind = ArchiveKind::Directory;
            appendArchiveRecord(m_pending, entry);
            ++m_entries;
            if (st.st_dev != m_device)
                return true; // a mount point: the folder, not its content
            const int fd =
                ::openat(level.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                return std::unexpected(failure(errno, "cannot open folder " + path));
            if (auto pushed = pushLevel(fd, path + "/"); !pushed)
                return std::unexpected(pushed.error());
            return true;
        }
        case S_IFLNK: {
            entry.kind = ArchiveKind::Symlink;
            std::string target(kMaxPathBytes + 1, '\0');
            const ssize_t n = ::readlinkat(level.fd, name.c_str(), target.data(), target.size());
            if (n < 0)
                return std::unexpected(failure(errno, "cannot read link " + path));
            if (n == 0 || std::size_t(n) > kMaxPathBytes)
                return std::unexpected(
                    Failure {ErrorCode::TooLarge, "a link target over 4096 bytes: " + path});
            target.resize(std::size_t(n));
            entry.link = std::move(target);
            appendArchiveRecord(m_pending, entry);
            ++m_entries;
            return true;
        }
        case S_IFREG: {
            const auto key = std::make_pair(st.st_dev, st.st_ino);
            if (st.st_nlink > 1) {
                if (auto it = m_inodes.find(key); it != m_inodes.end()) {
                    entry.kind = ArchiveKind::Hardlink;
                    entry.link = it->second;
                    appendArchiveRecord(m_pending, entry);
                    ++m_entries;
                    return true;
                }
                m_inodes.emplace(key, path);
            }
            // O_NONBLOCK: a file swapped for a FIFO since the stat does not block the walk.
            const int fd =
                ::openat(level.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0)
                return std::unexpected(failure(errno, "cannot open " + path));
            struct stat opened
            {
            };
            if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)
                || opened.st_ino != st.st_ino) {
                ::close(fd);
                return std::unexpected(
                    Failure {ErrorCode::Io, "the file changed while it was archived: " + path});
            }
            entry.kind = ArchiveKind::File;
            entry.size = std::uint64_t(opened.st_size);
            entry.mode = opened.st_mode;
            appendArchiveRecord(m_pending, entry);
            ++m_entries;
            m_file = fd;
            m_fileLeft = entry.size;
            m_filePath = path;
            return true;
        }
        default:
            entry.kind = ArchiveKind::Other;
            appendArchiveRecord(m_pending, entry);
            ++m_entries;
            return true;
        }
    }
    return false;
}

std::expected<bool, ArchiveWalker::Failure> ArchiveWalker::produce(Bytes &out, std::size_t maxBytes)
{
    if (!m_started) {
        appendArchiveStart(m_pending);
        m_started = true;
    }
    while (maxBytes > 0 && !m_done) {
        if (m_pendingAt < m_pending.size()) {
            const std::size_t n = std::min(maxBytes, m_pending.size() - m_pendingAt);
            out.insert(out.end(), m_pending.begin() + std::ptrdiff_t(m_pendingAt),
                       m_pending.begin() + std::ptrdiff_t(m_pendingAt + n));
            m_pendingAt += n;
            maxBytes -= n;
            if (m_pendingAt == m_pending.size()) {
                m_pending.clear();
                m_pendingAt = 0;
                if (m_ended)
                    m_done = true;
            }
            continue;
        }
        if (m_file >= 0) {
            if (m_fileLeft == 0) {
                ::close(m_file);
                m_file = -1;
                continue;
            }
            const std::size_t want =
                std::size_t(std::min<std::uint64_t>({maxBytes, m_fileLeft, 64 * 1024}));
            const std::size_t at = out.size();
            out.resize(at + want);
            ssize_t n;
            do {
                n = ::read(m_file, out.data() + at, want);
            } while (n < 0 && errno == EINTR);
            if (n <= 0) {
                out.resize(at);
                return std::unexpected(
                    n == 0 ? Failure {ErrorCode::Io,
                                      "the file shrank while it was archived: " + m_filePath}
                           : failure(errno, "cannot read " + m_filePath));
            }
            out.resize(at + std::size_t(n));
            m_fileLeft -= std::uint64_t(n);
            maxBytes -= std::size_t(n);
            continue;
        }
        auto more = nextRecord();
        if (!more)
            return std::unexpected(more.error());
        if (!*more) {
            appendArchiveEnd(m_pending);
            m_ended = true;
        }
    }
    return !m_done;
}

} // namespace airlock::agentwire
