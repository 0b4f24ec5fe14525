#pragma once

#include "core/model/error.h"

#include <QString>

#include <optional>

#include <sys/types.h>

namespace airlock {

/// Merges a Firecracker Diff memory file onto its base, into a new full memory file. A diff is
/// a sparse file as large as the guest's memory whose data extents are the pages dirtied since
/// the last snapshot or load; it is merged "by copying its content over the base"
/// (Firecracker's docs/snapshotting/snapshot-support.md, "Creating diff snapshots").
///
/// The base is copied, never written: the memory file a VM was loaded from "must be considered
/// immutable" (the same document, "Loading snapshots"), and a merge that fails half-way must
/// leave the base whole (docs/vmm.md). The copy keeps both files' holes.
///
/// The diff was written by the VMM user and is hostile input: it is opened without following a
/// link and without blocking (a FIFO), it must be a regular file, the very inode the helper
/// created for it (no hard link, no replacement), and at most `maxBytes` large; only its data
/// extents below the size it had when opened are read. Blocking: run it off the event loop.
class MemoryDiffMerge
{
public:
    /// The file the helper created for Firecracker to write the diff into. The helper keeps it
    /// open until the merge ends: an inode number is only unique while the inode lives.
    struct Identity
    {
        dev_t device = 0;
        ino_t inode = 0;
    };
    /// What was merged.
    struct Stats
    {
        qint64 sizeBytes = 0; ///< of the merged file
        qint64 baseBytes = 0; ///< data copied from the base
        qint64 diffBytes = 0; ///< data copied from the diff (the dirty pages)
    };

    /// The identity of the open file `fd`; nullopt with errno when fstat fails.
    static std::optional<Identity> identityOf(int fd);

    /// Writes `basePath`'s data and then `diffPath`'s data extents over it into `outFd` (an
    /// empty file open for writing), which ends as large as the larger of the two. `maxBytes`
    /// bounds both files (the guest's memory size). Errors: OperationFailed naming the file and
    /// the reason (a link, not a regular file, not the file created for the diff, larger than
    /// `maxBytes`, a file that shrank while read, a read or write error). On error `outFd`
    /// holds an unusable partial copy; the base and the diff are never written.
    static Result<Stats> merge(const QString &basePath, const QString &diffPath,
                               const Identity &diffIdentity, int outFd, qint64 maxBytes);
};

} // namespace airlock
