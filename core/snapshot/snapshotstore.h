#pragma once

#include "core/model/error.h"
#include "core/snapshot/chunkstore.h"
#include "core/snapshot/manifest.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>
#include <span>

namespace airlock {

/// The incremental snapshot store (docs/snapshots.md): one directory holding
///   chunks/ab/<sha256>   zstd-compressed chunks shared by every snapshot of every sandbox
///   manifests/<id>       one Manifest per committed snapshot
///   pending/<id>         marker of a snapshot being written (removed when it commits)
///   tmp/                 files not yet renamed into place
///   lock                 flock(2): writers shared, garbage collection exclusive
///
/// Commit protocol (crash safe under kill -9 at any point, and across power loss): new chunks
/// are written as temporary files, flushed with one syncfs(2), renamed to their names, flushed
/// again; only then is the manifest written, fsynced and renamed into manifests/, and the
/// directory fsynced. A manifest therefore only ever names chunks that are on disk. Garbage
/// collection takes the lock exclusively, so it never runs while a writer has chunks that no
/// manifest names yet; whatever a killed writer left (pending markers, temporary files,
/// unreferenced chunks) is removed by the next collection.
class SnapshotStore
{
public:
    /// 16 KiB: guest memory changes in 4 KiB pages scattered by the guest's allocator; larger
    /// chunks multiply what a few dirty pages cost (measured: 8 MiB dirtied in a guest changed
    /// 10.8 MiB of 16 KiB chunks but 13.6 MiB of 64 KiB ones), smaller ones multiply files.
    static constexpr quint32 kDefaultChunkSize = 16 * 1024;
    /// A writer stages no chunk that would leave its file system with less free space than
    /// this (docs/reviews/2026-12-01-guest-channels-round4.md#f3: the store shares the state file
    /// system with every sandbox's overlay and the registry, and a guest decides how much new data
    /// a snapshot holds).
    static constexpr qint64 kDefaultMinimumFreeBytes = 256LL * 1024 * 1024;

    /// Points of the commit protocol, reported to the step hook (crash tests kill the writer
    /// at each of them; a progress display could count them).
    enum class Step {
        ChunkStaged,
        ChunksFlushed,
        ChunkPublished,
        ChunkDirectoriesSynced,
        ManifestWritten,
        MarkerRemoved,
        ChunkCollected,
        ManifestRemoved,
    };
    using StepHook = std::function<void(Step)>;

    /// What adding one object cost.
    struct ObjectStats
    {
        qint64 logicalBytes = 0; ///< the object's size
        qint64 zeroBytes = 0; ///< bytes in all-zero chunks (stored as holes)
        qint64 newBytes = 0; ///< uncompressed bytes of chunks the store did not have
        qint64 newStoredBytes = 0; ///< the same chunks compressed, as written
    };

    struct GarbageReport
    {
        qint64 chunksRemoved = 0;
        qint64 bytesFreed = 0; ///< compressed bytes
        qint64 leftoversRemoved = 0; ///< temporary files and markers of interrupted writers
    };

    struct VerifyReport
    {
        qint64 manifests = 0;
        qint64 chunks = 0; ///< chunk files checked
        qint64 unreferencedChunks = 0; ///< garbage, not damage
        QStringList problems; ///< empty when the store is sound
        bool ok() const { return problems.isEmpty(); }
    };

    class Writer;

    /// Opens (creating the layout, mode 0700) the store at `root`.
    static Result<std::unique_ptr<SnapshotStore>> open(const QString &root);
    ~SnapshotStore();
    SnapshotStore(const SnapshotStore &) = delete;
    SnapshotStore &operator=(const SnapshotStore &) = delete;

    void setStepHook(StepHook hook) { m_hook = std::move(hook); }
    /// Free bytes (statvfs f_bavail) a writer leaves on the store's file system; a chunk that
    /// would take it below fails addObject() with BackendUnavailable. kDefaultMinimumFreeBytes.
    void setMinimumFreeBytes(qint64 bytes) { m_minimumFreeBytes = bytes; }
    qint64 minimumFreeBytes() const { return m_minimumFreeBytes; }
    QString root() const { return m_root; }

    /// Starts snapshot `id` ([a-z0-9-]{1,64}): takes the lock shared and writes the pending
    /// marker. AlreadyExists when a manifest or marker of that id exists.
    Result<std::unique_ptr<Writer>> begin(const QString &id);

    bool hasManifest(const QString &id) const;
    /// Ids of every committed manifest, sorted.
    QStringList manifestIds() const;
    Result<Manifest> manifest(const QString &id) const;
    /// Deletes a manifest (its chunks become garbage unless another manifest names them).
    Result<void> removeManifest(const QString &id);

    /// Writes `object` into `fd` from offset 0, truncating it to the object's size first;
    /// all-zero chunks stay holes.
    Result<void> writeObjectTo(const Manifest::Object &object, int fd) const;
    /// The object's bytes in memory; InvalidParams when it is larger than `maxBytes`.
    Result<QByteArray> readObject(const Manifest::Object &object, qint64 maxBytes) const;

    /// Deletes every chunk no manifest names, and leftovers of interrupted writers. Busy while
    /// a writer is active. Never deletes anything when a manifest cannot be read.
    Result<GarbageReport> collectGarbage();
    /// Reads every manifest and every chunk file, recomputing each SHA-256.
    VerifyReport verify() const;
    /// Compressed bytes of all chunk files.
    qint64 storedBytes() const;

private:
    friend class Writer;
    explicit SnapshotStore(QString root);
    void step(Step s) const
    {
        if (m_hook)
            m_hook(s);
    }
    QString manifestPath(const QString &id) const;
    QString markerPath(const QString &id) const;

    QString m_root;
    ChunkStore m_chunks;
    StepHook m_hook;
    qint64 m_minimumFreeBytes = kDefaultMinimumFreeBytes;
};

/// One snapshot being written. Destroying it without commit() removes what it staged and its
/// marker (chunks already published stay until garbage collection).
class SnapshotStore::Writer
{
public:
    ~Writer();
    Writer(const Writer &) = delete;
    Writer &operator=(const Writer &) = delete;

    /// Cuts `data` into `chunkSize` chunks; stages those the store does not hold yet.
    /// BackendUnavailable when the file system would keep less than minimumFreeBytes().
    Result<ObjectStats> addObject(const QString &name, std::span<const char> data,
                                  quint32 chunkSize = kDefaultChunkSize);
    /// addObject() of the whole regular file `fd` (from offset 0 to its size), read with
    /// pread(2) in windows of kReadWindowBytes: the writer's memory stays bounded whatever the
    /// file's size (a guest's disk overlay: docs/snapshots.md).
    Result<ObjectStats> addObjectFromFile(const QString &name, int fd,
                                          quint32 chunkSize = kDefaultChunkSize);
    static constexpr qint64 kReadWindowBytes = 4LL * 1024 * 1024;
    /// New chunk bytes staged between two free-space checks (statvfs(3) per chunk would cost).
    static constexpr qint64 kFreeSpaceCheckBytes = 32LL * 1024 * 1024;
    /// Publishes the staged chunks, then the manifest (see the class comment of the store).
    Result<Manifest> commit();

private:
    friend class SnapshotStore;
    Writer(SnapshotStore &store, QString id, int lockFd);
    void discard();
    Result<void> addChunk(std::span<const char> chunk, Manifest::Object &object,
                          ObjectStats &stats);
    Result<void> checkFreeSpace();
    Result<ObjectStats> finishObject(Manifest::Object object, const ObjectStats &stats);

    SnapshotStore &m_store;
    QString m_id;
    int m_lockFd;
    Manifest m_manifest;
    std::map<ChunkDigest, QString> m_staged; ///< digest → temporary file name
    bool m_done = false;
    qint64 m_stagedSinceCheck = 0; ///< new chunk bytes since the last free-space check
    bool m_checkedOnce = false;
};

} // namespace airlock
