#pragma once

#include "guest/agent/stream.h"

#include <string>
#include <unordered_map>

namespace airlock::guest {

/// Watch (docs/agent-protocol.md, "Watch"): an inotify instance on a folder (and its
/// subfolders with `recursive`, at most kMaxWatchedFolders), FileOpened once it is set, then
/// WatchRecord records in Data frames within the host's credit, until Cancel.
///
/// Bounds: records wait here at most kMaxPendingBytes (plus one record); inotify is read only
/// below it, so a host that stops granting credit leaves the events in the kernel's queue,
/// whose overflow (IN_Q_OVERFLOW, /proc/sys/fs/inotify/max_queued_events) becomes one
/// Overflow record. The watched folder itself going (deleted, moved, unmounted) ends the
/// stream with Error `not_found`.
class WatchStream : public Stream
{
public:
    /// Record bytes held here at most before inotify is read again.
    static constexpr std::size_t kMaxPendingBytes = 64 * 1024;

    WatchStream(Connection &connection, std::uint32_t id, std::uint64_t request);
    ~WatchStream() override;

    /// Sets the watch and sends FileOpened, or an Error that ends the stream.
    void open(const agentwire::WatchRequest &request);
    void pollInterest(std::vector<PollInterest> &out) override;
    void ready(int fd, short revents) override;
    bool canProduce() const override;
    void produce() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    /// Watches `path` (named `relative` in records; empty for the root) and, when recursive,
    /// the folders under it.
    void addFolder(const std::string &path, const std::string &relative);
    void readEvents();
    void push(agentwire::WatchOp op, const std::string &name);

    int m_fd = -1;
    int m_rootWatch = -1;
    std::string m_root;
    bool m_recursive = false;
    bool m_overflowSent = false; ///< the folder limit's Overflow, sent once
    std::unordered_map<int, std::string> m_folders; ///< watch descriptor → relative path
    agentwire::Bytes m_pending;
};

} // namespace airlock::guest
