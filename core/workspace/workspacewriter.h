#pragma once

#include "core/agentwire/archiveextractor.h"

#include <QByteArrayView>
#include <QString>

#include <expected>
#include <functional>
#include <memory>
#include <optional>

namespace airlock::workspace {

/// Writes an archive stream from a guest under a host folder, as the calling user: the
/// stream's ArchiveDecoder feeds an ArchiveExtractor with the host's ArchivePolicy (no
/// symlink that leaves the folder, no hard link, FIFO, socket or device, no setuid or setgid
/// bit, no absolute or ".." path; every path resolved from the folder's descriptor with
/// O_NOFOLLOW), so nothing is written outside the folder; each refusal is named
/// (refusals()). An optional filter passes only the entries a person accepted.
class WorkspaceWriter
{
public:
    using Filter = std::function<bool(const agentwire::ArchiveEntry &)>;

    /// Opens `folder` (created with its parents when missing). Errors: why it cannot be
    /// created or opened.
    static std::expected<std::unique_ptr<WorkspaceWriter>, QString> open(const QString &folder,
                                                                         Filter filter = {});
    ~WorkspaceWriter();
    WorkspaceWriter(const WorkspaceWriter &) = delete;
    WorkspaceWriter &operator=(const WorkspaceWriter &) = delete;

    /// Feeds stream bytes; false when the stream is malformed or the folder failed (error()).
    bool feed(QByteArrayView bytes);
    /// The end record came.
    bool finished() const;
    /// Why writing stopped, if it did.
    std::optional<QString> error() const;

    const std::vector<agentwire::ArchiveRefusal> &refusals() const;
    quint64 entriesWritten() const;
    quint64 bytesWritten() const;
    /// The folder's descriptor (for removeBeneath()).
    int folderFd() const { return m_fd; }

private:
    struct Filtering;
    WorkspaceWriter(int fd, Filter filter);

    int m_fd;
    std::unique_ptr<agentwire::ArchiveExtractor> m_extractor;
    std::unique_ptr<Filtering> m_filtering;
    std::unique_ptr<agentwire::ArchiveDecoder> m_decoder;
};

/// Removes `path` (relative, '/'-separated) under the folder `rootFd`, resolved with openat2
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (Linux 5.6), so that nothing outside the folder and
/// nothing through a symlink is touched; a symlink at `path` itself is removed, not followed.
/// A directory is removed only when empty. Errors: strerror text.
std::optional<QString> removeBeneath(int rootFd, const QString &path);

} // namespace airlock::workspace
