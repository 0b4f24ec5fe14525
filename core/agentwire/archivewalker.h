#pragma once

#include "core/agentwire/archiveformat.h"

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace airlock::agentwire {

/// Writes a folder as an archive stream (archiveformat.h), incrementally: produce() appends
/// at most the bytes asked for, so that a sender produces only within its credits. Entries
/// come in a stable order (each folder's names sorted, a folder before its content). Nothing
/// is followed: symlinks are Symlink entries with their target as stored, further names of an
/// inode already written are Hardlink entries, FIFOs, sockets and devices are Other entries
/// (their mode says which), and setuid/setgid bits are kept in the mode, so that the
/// receiver sees each and decides. Mount points inside the folder are not entered.
class ArchiveWalker
{
public:
    struct Failure
    {
        ErrorCode code;
        std::string message;
    };

    /// Opens `folder` (an absolute path, not followed when it is a symlink) or fails with
    /// not_found, not_a_directory, permission.
    static std::expected<std::unique_ptr<ArchiveWalker>, Failure> open(const std::string &folder);
    ~ArchiveWalker();
    ArchiveWalker(const ArchiveWalker &) = delete;
    ArchiveWalker &operator=(const ArchiveWalker &) = delete;

    /// Appends up to `maxBytes` (at least 1) bytes of the stream to `out`. Returns whether
    /// bytes remain after these, or the failure that ends the stream (a file that changed
    /// size while it was read, an unreadable folder).
    std::expected<bool, Failure> produce(Bytes &out, std::size_t maxBytes);
    bool done() const { return m_done; }
    std::uint64_t entries() const { return m_entries; }

private:
    struct Level
    {
        int fd = -1;
        std::string prefix; ///< "" for the root, else "a/b/"
        std::vector<std::string> names;
        std::size_t next = 0;
    };

    explicit ArchiveWalker(dev_t device);
    /// Queues the next record (and opens its content) into m_pending; false at the end.
    std::expected<bool, Failure> nextRecord();
    std::expected<void, Failure> pushLevel(int fd, std::string prefix);

    std::vector<Level> m_levels;
    dev_t m_device;
    Bytes m_pending; ///< encoded bytes not yet handed out
    std::size_t m_pendingAt = 0;
    int m_file = -1; ///< content being streamed
    std::uint64_t m_fileLeft = 0;
    std::string m_filePath;
    std::map<std::pair<dev_t, ino_t>, std::string> m_inodes; ///< hard link targets
    bool m_started = false;
    bool m_ended = false; ///< the end record is queued
    bool m_done = false;
    std::uint64_t m_entries = 0;
};

} // namespace airlock::agentwire
