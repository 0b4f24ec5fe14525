#pragma once

#include "core/model/error.h"

#include <QString>

namespace airlock {

/// A private copy of a (sparse) file kept on disk, not in memory: e.g. a guest's root-disk
/// overlay taken while the guest is paused, so that it can run on while the copy is chunked
/// and stored (docs/snapshots.md). The guest decides how much of its disk holds data
/// (docs/reviews/2026-12-01-guest-channels-round4.md#f3: a copy in the helper's memory grew with
/// it, up to the disk's size).
///
/// The copy is an unnamed file (open(2) O_TMPFILE) in the given directory: it has no name to
/// leave behind, and its blocks are freed when the object goes, also when the process is
/// killed. On file systems without O_TMPFILE it is a file `airlock-copy-XXXXXX.tmp`, unlinked
/// as soon as it is open (the directory's owner removes `*.tmp` leftovers of a crash inside
/// that window at start-up). Where the file system can share extents (FICLONE: btrfs, XFS),
/// the copy is a reflink and costs neither time nor space; otherwise only the source's data
/// extents (SEEK_DATA/SEEK_HOLE) are copied in the kernel with copy_file_range(2).
class DiskCopy
{
public:
    /// Free space (statvfs f_bavail) a copy leaves in its directory's file system.
    static constexpr qint64 kDefaultFreeMarginBytes = 256LL * 1024 * 1024;

    /// Copies the regular file at `path` (never through a symlink) into `directory`, which
    /// should be on the same file system (for reflinks and in-kernel copies). Before writing
    /// anything: BackendUnavailable when the file system has less free space than the
    /// source's allocated bytes (st_blocks) plus `freeMarginBytes`. OperationFailed on other
    /// errors; nothing is left behind on any error.
    static Result<DiskCopy> of(const QString &path, const QString &directory,
                               qint64 freeMarginBytes = kDefaultFreeMarginBytes);
    ~DiskCopy();
    DiskCopy(DiskCopy &&other) noexcept;
    DiskCopy &operator=(DiskCopy &&) = delete;
    DiskCopy(const DiskCopy &) = delete;

    /// The copy, open read-write, positioned anywhere (read it with pread).
    int fd() const { return m_fd; }
    /// The copy's size in bytes (the source's st_size).
    qint64 size() const { return m_size; }
    /// Bytes of the source's data extents (copied, or shared by a reflink).
    qint64 dataBytes() const { return m_dataBytes; }
    /// True when the copy shares the source's extents (FICLONE) instead of copying them.
    bool cloned() const { return m_cloned; }

private:
    DiskCopy() = default;
    int m_fd = -1;
    qint64 m_size = 0;
    qint64 m_dataBytes = 0;
    bool m_cloned = false;
};

} // namespace airlock
