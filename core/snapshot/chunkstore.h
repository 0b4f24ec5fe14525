#pragma once

#include "core/model/error.h"
#include "core/snapshot/chunkdigest.h"

#include <QByteArray>
#include <QString>

#include <functional>
#include <span>

namespace airlock {

/// Content-addressed chunk files: ROOT/ab/<64 hex digits of SHA-256> holding one zstd frame of
/// the chunk's bytes. A chunk file is complete or absent (it appears by rename); its name is
/// the hash of its decompressed content, which read() and verify() check every time, so a
/// damaged file is reported, never returned. Chunks of all snapshots of all sandboxes share the
/// one directory, which is what deduplicates them.
class ChunkStore
{
public:
    /// Largest chunk accepted (decompressed), 4 MiB: a bound for a hostile or damaged file.
    static constexpr qint64 kMaxChunkBytes = 4 * 1024 * 1024;

    /// `root` must exist; `tempDir` on the same filesystem receives files before their rename.
    ChunkStore(QString root, QString tempDir);

    /// Compresses `data` and writes it under `digest` (which must be SHA-256 of `data`) as a
    /// temporary file, without fsync or rename: publish() does that once the batch is flushed.
    /// Returns the compressed size.
    Result<qint64> stage(const ChunkDigest &digest, std::span<const char> data,
                         const QString &stagedName) const;
    /// Renames a staged file to the chunk's final name.
    Result<void> publish(const ChunkDigest &digest, const QString &stagedName) const;
    /// Whether a chunk file with this name exists (its content is checked by read/verify).
    bool contains(const ChunkDigest &digest) const;
    /// Decompressed bytes of a chunk, checked against its name. NotFound when absent;
    /// OperationFailed when damaged.
    Result<QByteArray> read(const ChunkDigest &digest) const;
    /// Size on disk of a chunk file (its compressed size), 0 when absent.
    qint64 storedSize(const ChunkDigest &digest) const;
    /// Deletes a chunk file (absent is fine).
    Result<void> remove(const ChunkDigest &digest) const;
    /// Calls `visit` for every chunk file name that parses as a digest; files with other names
    /// are reported to `stray`.
    void forEach(const std::function<void(const ChunkDigest &)> &visit,
                 const std::function<void(const QString &path)> &stray = {}) const;
    /// The directory a chunk's file lives in (ROOT/ab).
    QString directoryOf(const ChunkDigest &digest) const;
    QString pathOf(const ChunkDigest &digest) const;

private:
    QString m_root;
    QString m_tempDir;
};

} // namespace airlock
