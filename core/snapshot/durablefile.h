#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QString>

#include <span>

namespace airlock {

/// The file operations the snapshot store's commit protocol is built from (docs/snapshots.md):
/// a file reaches its final name only by rename(2) of a complete temporary file, so a reader
/// (or a process restarted after kill -9) sees either nothing or the whole file. Errors are
/// OperationFailed naming the path and errno's text.
class DurableFile
{
public:
    /// Writes `data` to `tempPath` (created exclusively, mode 0600), optionally fsyncs it, and
    /// renames it to `finalPath` (same filesystem). `sync` false is for callers that batch the
    /// flush with syncFilesystem() before renaming (see SnapshotStore). The temporary file is
    /// removed on failure.
    static Result<void> write(const QString &tempPath, const QString &finalPath,
                              std::span<const char> data, bool sync);
    /// Writes a complete temporary file without renaming it (for batched commits).
    static Result<void> writeTemporary(const QString &tempPath, std::span<const char> data);
    /// rename(2).
    static Result<void> rename(const QString &from, const QString &to);
    /// fsync(2) of a directory, which makes renames and unlinks inside it durable.
    static Result<void> syncDirectory(const QString &dir);
    /// syncfs(2) of the filesystem holding `path`: one flush for a batch of files, instead of
    /// thousands of fsyncs (each a journal commit on ext4).
    static Result<void> syncFilesystem(const QString &path);
    /// Reads a whole regular file, refusing files over `maxBytes` and symlinks.
    static Result<QByteArray> read(const QString &path, qint64 maxBytes);
    /// unlink(2); a file that is already gone is success.
    static Result<void> remove(const QString &path);
};

} // namespace airlock
