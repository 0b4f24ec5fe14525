#pragma once

#include "core/model/error.h"
#include "core/model/snapshot.h"

#include <QList>
#include <QString>

#include <optional>

namespace airlock {

/// The snapshot tables of the helper's registry (SQLite; created by the registry migration
/// "snapshots"): one row per committed snapshot, the head of each sandbox (the snapshot its
/// current state descends from, the parent of its next snapshot) and each sandbox's schedule.
/// Uses the registry's Qt Sql connection by name; never opens a file itself.
class SnapshotCatalog
{
public:
    /// The statements of the registry migration that creates these tables. Idempotent
    /// (IF NOT EXISTS), so the migration may sit at any index of the registry's history.
    static QStringList migration();

    explicit SnapshotCatalog(QString connectionName);

    Result<void> insert(const Snapshot &snapshot);
    /// Replaces label, pinned and parent of an existing row; NotFound otherwise.
    Result<void> update(const Snapshot &snapshot);
    /// Deletes a row; its children take its parent, and a head pointing at it moves to its
    /// parent, all in one transaction. NotFound when there is no such row.
    Result<void> remove(const QString &id);
    Result<Snapshot> get(const QString &id) const;
    /// Snapshots of `sandbox` (every snapshot when empty), oldest first.
    Result<QList<Snapshot>> list(const QString &sandbox = {}) const;

    /// The sandbox's head snapshot id; empty when it has none.
    QString head(const QString &sandbox) const;
    Result<void> setHead(const QString &sandbox, const QString &id);

    /// The sandbox's schedule (defaults when none was stored).
    SnapshotSchedule schedule(const QString &sandbox) const;
    Result<void> setSchedule(const QString &sandbox, const SnapshotSchedule &schedule);
    /// Forgets a deleted sandbox's head and schedule (its snapshot rows go one by one).
    Result<void> forgetSandbox(const QString &sandbox);

private:
    QString m_connection;
};

} // namespace airlock
