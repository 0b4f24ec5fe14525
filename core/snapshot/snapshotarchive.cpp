#include "core/snapshot/snapshotarchive.h"

#include <QLoggingCategory>
#include <QSet>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcArchive, "airlock.snapshot.archive")
} // namespace

SnapshotArchive::SnapshotArchive(SnapshotStore &store, SnapshotCatalog &catalog)
    : m_store(store), m_catalog(catalog)
{ }

void SnapshotArchive::setStepHook(std::function<void()> hook)
{
    m_hook = std::move(hook);
    if (m_hook)
        m_store.setStepHook([this](SnapshotStore::Step) { step(); });
    else
        m_store.setStepHook({});
}

Result<Snapshot> SnapshotArchive::commit(Snapshot meta, const std::vector<Object> &objects)
{
    auto staged = stage(std::move(meta), objects);
    if (!staged)
        return staged;
    return record(*staged);
}

Result<Snapshot> SnapshotArchive::stage(Snapshot meta, const std::vector<Object> &objects)
{
    if (meta.id.isEmpty())
        meta.id = Snapshot::newId();
    AIRLOCK_TRY(Snapshot::validateId(meta.id));
    AIRLOCK_TRY(Snapshot::validateLabel(meta.label));
    if (!meta.createdAt.isValid())
        meta.createdAt = QDateTime::currentDateTimeUtc();
    auto writer = m_store.begin(meta.id);
    AIRLOCK_TRY(writer);
    meta.logicalBytes = meta.newBytes = meta.newStoredBytes = 0;
    QStringList perObject;
    for (const Object &object : objects) {
        auto stats = object.fd >= 0 ? (*writer)->addObjectFromFile(object.name, object.fd)
                                    : (*writer)->addObject(object.name, object.data);
        AIRLOCK_TRY(stats);
        perObject.append(QStringLiteral("%1 %2 new").arg(object.name).arg(stats->newBytes));
        meta.logicalBytes += stats->logicalBytes;
        meta.newBytes += stats->newBytes;
        meta.newStoredBytes += stats->newStoredBytes;
    }
    AIRLOCK_TRY((*writer)->commit());
    qCDebug(lcArchive, "snapshot %s staged: %s", qPrintable(meta.id),
            qPrintable(perObject.join(QStringLiteral(", "))));
    return meta;
}

Result<Snapshot> SnapshotArchive::record(const Snapshot &meta)
{
    // The manifest exists; from here a crash leaves a manifest without a row, which
    // reconcile() removes. A failed insert does the same now.
    if (auto inserted = m_catalog.insert(meta); !inserted) {
        m_store.removeManifest(meta.id);
        return std::unexpected(inserted.error());
    }
    step();
    if (!meta.sandbox.isEmpty() && meta.kind != SnapshotKind::Template) {
        if (auto head = m_catalog.setHead(meta.sandbox, meta.id); !head)
            qCWarning(lcArchive, "%s", qPrintable(head.error().message));
        step();
    }
    qCInfo(lcArchive, "snapshot %s of %s: %lld bytes, %lld new (%lld stored), paused %lld ms",
           qPrintable(meta.id), qPrintable(meta.sandbox), static_cast<long long>(meta.logicalBytes),
           static_cast<long long>(meta.newBytes), static_cast<long long>(meta.newStoredBytes),
           static_cast<long long>(meta.pauseMs));
    return meta;
}

Result<void> SnapshotArchive::remove(const QString &id)
{
    AIRLOCK_TRY(Snapshot::validateId(id));
    if (auto removed = m_catalog.remove(id); !removed)
        return removed;
    step();
    return m_store.removeManifest(id);
}

Result<SnapshotArchive::ReconcileReport> SnapshotArchive::reconcile()
{
    ReconcileReport report;
    auto rows = m_catalog.list();
    AIRLOCK_TRY(rows);
    QSet<QString> rowIds;
    for (const Snapshot &row : *rows)
        rowIds.insert(row.id);
    const QStringList manifests = m_store.manifestIds();
    const QSet<QString> manifestIds(manifests.begin(), manifests.end());
    for (const QString &id : manifests) {
        if (rowIds.contains(id))
            continue;
        AIRLOCK_TRY(m_store.removeManifest(id));
        report.manifestsRemoved.append(id);
        qCInfo(lcArchive, "removed manifest %s of a snapshot that never committed", qPrintable(id));
    }
    for (const Snapshot &row : *rows) {
        if (manifestIds.contains(row.id))
            continue;
        AIRLOCK_TRY(m_catalog.remove(row.id));
        report.rowsRemoved.append(row.id);
        qCWarning(lcArchive, "snapshot %s of %s had no manifest; its row was removed",
                  qPrintable(row.id), qPrintable(row.sandbox));
    }
    auto garbage = m_store.collectGarbage();
    AIRLOCK_TRY(garbage);
    report.garbage = *garbage;
    return report;
}

} // namespace airlock
