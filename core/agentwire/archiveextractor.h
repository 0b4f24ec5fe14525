#pragma once

#include "core/agentwire/archivepolicy.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace airlock::agentwire {

/// One entry an extractor did not write, and why (an archiveRefusal() name, or exists,
/// symlink_in_path, not_a_directory, io).
struct ArchiveRefusal
{
    std::string path;
    std::string reason;
};

/// Writes the entries of an archive stream under a folder, as its ArchiveSink (feed an
/// ArchiveDecoder into it). Every path is resolved one component at a time from the folder's
/// descriptor with O_NOFOLLOW and without "." or "..", so nothing is written outside the
/// folder and no symlink is followed, whatever already exists in it; an entry that would need
/// either is refused and named, and the extraction goes on. A non-directory in the way of an
/// entry is replaced (unlinked, never followed); a directory in the way of a non-directory is
/// refused (`exists`). Directory modes are applied at the end, so that a read-only folder
/// still receives its content. An I/O failure of the folder itself (ENOSPC, EIO) stops it
/// (error()).
class ArchiveExtractor : public ArchiveSink
{
public:
    /// `rootFd`: an open directory (not taken); `owner`: uid/gid for what is written, or
    /// -1 to keep the writer's.
    ArchiveExtractor(int rootFd, ArchivePolicy policy, uid_t uid = uid_t(-1),
                     gid_t gid = gid_t(-1));
    ~ArchiveExtractor() override;
    ArchiveExtractor(const ArchiveExtractor &) = delete;
    ArchiveExtractor &operator=(const ArchiveExtractor &) = delete;

    bool entry(const ArchiveEntry &entry) override;
    bool content(ByteView bytes) override;
    bool entryDone() override;
    void end() override;

    const std::vector<ArchiveRefusal> &refusals() const { return m_refusals; }
    std::uint64_t entriesWritten() const { return m_entries; }
    std::uint64_t bytesWritten() const { return m_bytes; }
    /// Why extraction stopped (a fatal error), if it did.
    const std::optional<std::string> &error() const { return m_error; }
    /// Code of the fatal error, in ErrorCode terms.
    ErrorCode errorCode() const { return m_errorCode; }

private:
    /// Opens the folder holding `path` (creating missing folders), or -1 with a refusal reason.
    int openParent(const std::string &path, std::string &name, std::string_view &reason);
    bool refuse(const std::string &path, std::string_view reason);
    bool stop(ErrorCode code, std::string why);
    void closeFile();
    /// Unlinks a non-directory named `name` in `dirFd`; false when a directory is there.
    bool clearWay(int dirFd, const std::string &name);

    int m_root;
    ArchivePolicy m_policy;
    uid_t m_uid;
    gid_t m_gid;
    std::string m_cachedParent; ///< relative path of m_cachedFd
    int m_cachedFd = -1;
    int m_file = -1; ///< the File entry being written
    bool m_skipping = false; ///< content of a refused File entry is read and dropped
    ArchiveEntry m_current;
    std::vector<std::pair<std::string, std::uint32_t>> m_dirModes;
    std::vector<ArchiveRefusal> m_refusals;
    std::uint64_t m_entries = 0;
    std::uint64_t m_bytes = 0;
    std::uint64_t m_seen = 0;
    std::optional<std::string> m_error;
    ErrorCode m_errorCode = ErrorCode::Io;
};

} // namespace airlock::agentwire
