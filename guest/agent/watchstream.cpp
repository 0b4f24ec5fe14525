#include "guest/agent/watchstream.h"

#include "guest/agent/fileops.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

namespace {

constexpr std::uint32_t kMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO
    | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

} // namespace

WatchStream::WatchStream(Connection &connection, std::uint32_t id, std::uint64_t request)
    : Stream(connection, id, request)
{ }

WatchStream::~WatchStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void WatchStream::open(const WatchRequest &request)
{
    m_root = request.path;
    m_recursive = request.recursive;
    struct stat st
    {
    };
    if (::lstat(request.path.c_str(), &st) != 0) {
        const auto failure = fileops::failure(errno, "cannot watch", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        failWith(ErrorCode::NotADirectory, request.path + " is not a folder");
        return;
    }
    m_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (m_fd < 0) {
        failWith(ErrorCode::Limit,
                 "cannot make an inotify instance (fs.inotify.max_user_instances)");
        return;
    }
    m_rootWatch = ::inotify_add_watch(m_fd, request.path.c_str(), kMask);
    if (m_rootWatch < 0) {
        const auto failure = fileops::failure(errno, "cannot watch", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    m_folders.emplace(m_rootWatch, std::string());
    if (m_recursive)
        addFolder(request.path, std::string());
    if (auto payload = FileOpened {0, st.st_mode}.encode())
        send(MessageType::FileOpened, *payload);
}

void WatchStream::addFolder(const std::string &path, const std::string &relative)
{
    // The folder itself is watched by the caller; this adds its subfolders, depth first.
    DIR *dir = ::opendir(path.c_str());
    if (!dir)
        return;
    while (const dirent *entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..")
            continue;
        const std::string child = path + "/" + name;
        struct stat st
        {
        };
        if (::lstat(child.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        const std::string childRelative = relative.empty() ? name : relative + "/" + name;
        if (childRelative.size() > kMaxPathBytes)
            continue;
        if (m_folders.size() >= kMaxWatchedFolders) {
            if (!m_overflowSent) {
                m_overflowSent = true;
                push(WatchOp::Overflow, std::string());
            }
            break;
        }
        const int wd = ::inotify_add_watch(m_fd, child.c_str(), kMask);
        if (wd < 0)
            continue;
        m_folders[wd] = childRelative;
        addFolder(child, childRelative);
    }
    ::closedir(dir);
}

void WatchStream::push(WatchOp op, const std::string &name)
{
    WatchRecord {op, name}.appendTo(m_pending);
}

void WatchStream::pollInterest(std::vector<PollInterest> &out)
{
    if (finished() || m_fd < 0 || m_pending.size() >= kMaxPendingBytes)
        return;
    out.push_back({m_fd, POLLIN, this, id()});
}

void WatchStream::ready(int fd, short revents)
{
    if (finished() || fd != m_fd || !(revents & POLLIN))
        return;
    readEvents();
    produce();
}

void WatchStream::readEvents()
{
    // One event per read at most (a buffer of one event with the longest name), so that what
    // waits here stays within kMaxPendingBytes plus one record.
    alignas(inotify_event) char buffer[sizeof(inotify_event) + NAME_MAX + 1];
    while (!finished() && m_pending.size() < kMaxPendingBytes) {
        const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (ssize_t at = 0; at + ssize_t(sizeof(inotify_event)) <= n;) {
            const auto *event = reinterpret_cast<const inotify_event *>(buffer + at);
            at += ssize_t(sizeof(inotify_event) + event->len);
            if (event->mask & IN_Q_OVERFLOW) {
                push(WatchOp::Overflow, std::string());
                continue;
            }
            if (event->wd == m_rootWatch
                && (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT))) {
                produce();
                failWith(ErrorCode::NotFound, "the watched folder " + m_root + " went");
                return;
            }
            const auto folder = m_folders.find(event->wd);
            if (folder == m_folders.end())
                continue;
            if (event->mask & IN_IGNORED) {
                m_folders.erase(folder);
                continue;
            }
            if (event->len == 0 || event->name[0] == '\0')
                continue; // the subfolder's own events: its parent reports them by name
            const std::string name = folder->second.empty() ? std::string(event->name)
                                                            : folder->second + "/" + event->name;
            if (name.size() > kMaxPathBytes)
                continue;
            if (event->mask & (IN_CREATE | IN_MOVED_TO)) {
                push(WatchOp::Create, name);
                if (m_recursive && (event->mask & IN_ISDIR)) {
                    const std::string path = m_root + "/" + name;
                    if (m_folders.size() < kMaxWatchedFolders) {
                        const int wd = ::inotify_add_watch(m_fd, path.c_str(), kMask);
                        if (wd >= 0) {
                            m_folders[wd] = name;
                            addFolder(path, name);
                        }
                    } else if (!m_overflowSent) {
                        m_overflowSent = true;
                        push(WatchOp::Overflow, std::string());
                    }
                }
            } else if (event->mask & IN_DELETE) {
                push(WatchOp::Remove, name);
            } else if (event->mask & IN_MOVED_FROM) {
                push(WatchOp::Rename, name);
            } else if (event->mask & IN_MODIFY) {
                push(WatchOp::Write, name);
            } else if (event->mask & IN_ATTRIB) {
                push(WatchOp::Chmod, name);
            }
        }
    }
}

bool WatchStream::canProduce() const
{
    return !finished() && !m_pending.empty() && sendable() > 0;
}

void WatchStream::produce()
{
    while (canProduce()) {
        const std::size_t n = std::min(sendable(), m_pending.size());
        m_sendCredit.spend(n);
        send(MessageType::Data, ByteView(m_pending.data(), n));
        m_pending.erase(m_pending.begin(), m_pending.begin() + std::ptrdiff_t(n));
    }
}

std::optional<ProtocolError> WatchStream::onFrame(const Frame &)
{
    return ProtocolError::Unexpected;
}

} // namespace airlock::guest
