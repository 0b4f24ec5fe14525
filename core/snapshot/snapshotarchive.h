#pragma once

#include "core/model/error.h"
#include "core/model/snapshot.h"
#include "core/snapshot/snapshotcatalog.h"
#include "core/snapshot/snapshotstore.h"

#include <functional>
#include <span>
#include <vector>

namespace airlock {

/// Keeps the snapshot store and the registry's snapshot rows in agreement
/// (docs/snapshots.md): a snapshot is committed to the store (chunks, then manifest) before its
/// row is inserted, and its row is deleted before its manifest. After a kill -9 at any point the
/// only possible disagreement is a manifest without a row, which reconcile() (run when the
/// helper starts) deletes; every row always has its manifest.
class SnapshotArchive
{
public:
    /// One object of a snapshot: a name and its bytes (e.g. guest memory mapped from its
    /// file), or, when `fd` is set, the whole regular file it names, read in bounded windows
    /// (SnapshotStore::Writer::addObjectFromFile; the caller keeps it open).
    struct Object
    {
        QString name;
        std::span<const char> data;
        int fd = -1;
    };

    struct ReconcileReport
    {
        QStringList manifestsRemoved; ///< ids of manifests no row named (uncommitted)
        QStringList rowsRemoved; ///< ids of rows whose manifest was missing (never expected)
        SnapshotStore::GarbageReport garbage;
    };

    SnapshotArchive(SnapshotStore &store, SnapshotCatalog &catalog);

    SnapshotStore &store() { return m_store; }
    SnapshotCatalog &catalog() { return m_catalog; }

    /// Called at every step of commit, remove and garbage collection (the crash tests kill the
    /// process at the k-th call).
    void setStepHook(std::function<void()> hook);

    /// Stores `objects` as a new snapshot described by `meta` (id, sandbox, parent, label,
    /// kind, pause time, guest shape; a missing id or time is filled in), fills in the sizes,
    /// inserts its row and makes it the head of its sandbox. Returns the stored row.
    Result<Snapshot> commit(Snapshot meta, const std::vector<Object> &objects);
    /// commit() in two halves, for callers that store on a worker thread: stage() writes the
    /// chunks and the manifest (store only: safe on any thread, concurrently with other
    /// writers and readers) and returns the row to be; record() inserts it and moves the head
    /// (the registry's thread only), or removes the manifest again when that fails. A crash
    /// between the two leaves a manifest without a row, which reconcile() removes.
    Result<Snapshot> stage(Snapshot meta, const std::vector<Object> &objects);
    Result<Snapshot> record(const Snapshot &meta);
    /// Deletes a snapshot: row first (children re-linked to its parent), then its manifest.
    /// Chunks are freed by collectGarbage().
    Result<void> remove(const QString &id);
    /// Brings store and registry into agreement after a crash, then collects garbage.
    Result<ReconcileReport> reconcile();
    /// SnapshotStore::collectGarbage.
    Result<SnapshotStore::GarbageReport> collectGarbage() { return m_store.collectGarbage(); }

private:
    void step() const
    {
        if (m_hook)
            m_hook();
    }

    SnapshotStore &m_store;
    SnapshotCatalog &m_catalog;
    std::function<void()> m_hook;
};

} // namespace airlock
