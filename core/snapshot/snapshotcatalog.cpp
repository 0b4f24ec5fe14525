#include "core/snapshot/snapshotcatalog.h"

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace airlock {

namespace {

std::unexpected<Error> sqlFailure(const QString &what, const QSqlError &error)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("registry: %1: %2").arg(what, error.text()));
}

const QString kColumns = QStringLiteral(
    "id, sandbox, parent, label, created_at, kind, logical_bytes, new_bytes, new_stored_bytes, "
    "pause_ms, pinned, image, vcpus, memory_mib, template_key, vmm");

Snapshot snapshotFrom(const QSqlQuery &query)
{
    Snapshot s;
    s.id = query.value(0).toString();
    s.sandbox = query.value(1).toString();
    s.parent = query.value(2).toString();
    s.label = query.value(3).toString();
    s.createdAt = QDateTime::fromString(query.value(4).toString(), Qt::ISODateWithMs).toUTC();
    s.kind = snapshotKindFromName(query.value(5).toString()).value_or(SnapshotKind::Manual);
    s.logicalBytes = query.value(6).toLongLong();
    s.newBytes = query.value(7).toLongLong();
    s.newStoredBytes = query.value(8).toLongLong();
    s.pauseMs = query.value(9).toLongLong();
    s.pinned = query.value(10).toBool();
    s.image = query.value(11).toString();
    s.vcpus = query.value(12).toInt();
    s.memoryMib = query.value(13).toInt();
    s.templateKey = query.value(14).toString();
    s.vmm = vmmKindFromName(query.value(15).toString()).value_or(VmmKind::Qemu);
    return s;
}

} // namespace

QStringList SnapshotCatalog::migration()
{
    return {
        // Times are ISO 8601 UTC text like the sandboxes table; parent is a plain id (a fork's
        // first snapshot names a parent of another sandbox; a deleted parent is re-linked).
        QStringLiteral("CREATE TABLE IF NOT EXISTS snapshots ("
                       " id TEXT PRIMARY KEY NOT NULL,"
                       " sandbox TEXT NOT NULL,"
                       " parent TEXT NOT NULL DEFAULT '',"
                       " label TEXT NOT NULL DEFAULT '',"
                       " created_at TEXT NOT NULL,"
                       " kind TEXT NOT NULL,"
                       " logical_bytes INTEGER NOT NULL DEFAULT 0,"
                       " new_bytes INTEGER NOT NULL DEFAULT 0,"
                       " new_stored_bytes INTEGER NOT NULL DEFAULT 0,"
                       " pause_ms INTEGER NOT NULL DEFAULT 0,"
                       " pinned INTEGER NOT NULL DEFAULT 0,"
                       " image TEXT NOT NULL DEFAULT '',"
                       " vcpus INTEGER NOT NULL DEFAULT 1,"
                       " memory_mib INTEGER NOT NULL DEFAULT 256)"),
        QStringLiteral("CREATE INDEX IF NOT EXISTS snapshots_by_sandbox ON snapshots (sandbox)"),
        QStringLiteral("CREATE TABLE IF NOT EXISTS snapshot_heads ("
                       " sandbox TEXT PRIMARY KEY NOT NULL, snapshot TEXT NOT NULL)"),
        QStringLiteral("CREATE TABLE IF NOT EXISTS snapshot_schedules ("
                       " sandbox TEXT PRIMARY KEY NOT NULL,"
                       " interval_minutes INTEGER NOT NULL,"
                       " hourly_hours INTEGER NOT NULL,"
                       " daily_days INTEGER NOT NULL)"),
    };
}

SnapshotCatalog::SnapshotCatalog(QString connectionName) : m_connection(std::move(connectionName))
{ }

Result<void> SnapshotCatalog::insert(const Snapshot &s)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("INSERT INTO snapshots (%1) VALUES (:id, :sandbox, :parent, "
                                 ":label, :created_at, :kind, :logical, :new, :stored, :pause, "
                                 ":pinned, :image, :vcpus, :memory, :template_key, :vmm)")
                      .arg(kColumns));
    query.bindValue(QStringLiteral(":id"), s.id);
    query.bindValue(QStringLiteral(":sandbox"), s.sandbox);
    query.bindValue(QStringLiteral(":parent"), s.parent);
    query.bindValue(QStringLiteral(":label"), s.label);
    query.bindValue(QStringLiteral(":created_at"), s.createdAt.toUTC().toString(Qt::ISODateWithMs));
    query.bindValue(QStringLiteral(":kind"), snapshotKindName(s.kind));
    query.bindValue(QStringLiteral(":logical"), s.logicalBytes);
    query.bindValue(QStringLiteral(":new"), s.newBytes);
    query.bindValue(QStringLiteral(":stored"), s.newStoredBytes);
    query.bindValue(QStringLiteral(":pause"), s.pauseMs);
    query.bindValue(QStringLiteral(":pinned"), s.pinned ? 1 : 0);
    query.bindValue(QStringLiteral(":image"), s.image);
    query.bindValue(QStringLiteral(":vcpus"), s.vcpus);
    query.bindValue(QStringLiteral(":memory"), s.memoryMib);
    query.bindValue(QStringLiteral(":template_key"), s.templateKey);
    query.bindValue(QStringLiteral(":vmm"), vmmKindName(s.vmm));
    // COALESCE-free: every text is non-null (QString() binds NULL, so make them empty).
    for (const QString &key :
         {QStringLiteral(":sandbox"), QStringLiteral(":parent"), QStringLiteral(":label"),
          QStringLiteral(":image"), QStringLiteral(":template_key")}) {
        if (query.boundValue(key).toString().isEmpty())
            query.bindValue(key, QStringLiteral(""));
    }
    if (!query.exec())
        return sqlFailure(QStringLiteral("insert snapshot %1").arg(s.id), query.lastError());
    return {};
}

Result<void> SnapshotCatalog::update(const Snapshot &s)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral(
        "UPDATE snapshots SET label = :label, pinned = :pinned, parent = :parent WHERE id = :id"));
    query.bindValue(QStringLiteral(":label"), s.label.isNull() ? QStringLiteral("") : s.label);
    query.bindValue(QStringLiteral(":pinned"), s.pinned ? 1 : 0);
    query.bindValue(QStringLiteral(":parent"), s.parent.isNull() ? QStringLiteral("") : s.parent);
    query.bindValue(QStringLiteral(":id"), s.id);
    if (!query.exec())
        return sqlFailure(QStringLiteral("update snapshot %1").arg(s.id), query.lastError());
    if (query.numRowsAffected() != 1)
        return fail(ErrorKind::NotFound, QStringLiteral("no snapshot '%1'").arg(s.id));
    return {};
}

Result<void> SnapshotCatalog::remove(const QString &id)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    auto existing = get(id);
    AIRLOCK_TRY(existing);
    if (!db.transaction())
        return sqlFailure(QStringLiteral("begin"), db.lastError());
    QSqlQuery query(db);
    const auto run = [&](const QString &sql) {
        query.prepare(sql);
        query.bindValue(QStringLiteral(":id"), id);
        query.bindValue(QStringLiteral(":parent"), existing->parent);
        return query.exec();
    };
    if (!run(QStringLiteral("UPDATE snapshots SET parent = :parent WHERE parent = :id"))
        || !run(QStringLiteral("UPDATE snapshot_heads SET snapshot = :parent WHERE snapshot = :id"))
        || !run(QStringLiteral("DELETE FROM snapshot_heads WHERE snapshot = ''"))
        || !run(QStringLiteral("DELETE FROM snapshots WHERE id = :id"))) {
        const QSqlError error = query.lastError();
        db.rollback();
        return sqlFailure(QStringLiteral("delete snapshot %1").arg(id), error);
    }
    if (!db.commit())
        return sqlFailure(QStringLiteral("commit"), db.lastError());
    return {};
}

Result<Snapshot> SnapshotCatalog::get(const QString &id) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("SELECT %1 FROM snapshots WHERE id = :id").arg(kColumns));
    query.bindValue(QStringLiteral(":id"), id);
    if (!query.exec())
        return sqlFailure(QStringLiteral("read snapshot %1").arg(id), query.lastError());
    if (!query.next())
        return fail(ErrorKind::NotFound, QStringLiteral("no snapshot '%1'").arg(id));
    return snapshotFrom(query);
}

Result<QList<Snapshot>> SnapshotCatalog::list(const QString &sandbox) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    if (sandbox.isEmpty()) {
        query.prepare(
            QStringLiteral("SELECT %1 FROM snapshots ORDER BY created_at, id").arg(kColumns));
    } else {
        query.prepare(QStringLiteral("SELECT %1 FROM snapshots WHERE sandbox = :sandbox "
                                     "ORDER BY created_at, id")
                          .arg(kColumns));
        query.bindValue(QStringLiteral(":sandbox"), sandbox);
    }
    if (!query.exec())
        return sqlFailure(QStringLiteral("list snapshots"), query.lastError());
    QList<Snapshot> snapshots;
    while (query.next())
        snapshots.append(snapshotFrom(query));
    return snapshots;
}

QString SnapshotCatalog::head(const QString &sandbox) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("SELECT snapshot FROM snapshot_heads WHERE sandbox = :sandbox"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    if (!query.exec() || !query.next())
        return {};
    return query.value(0).toString();
}

Result<void> SnapshotCatalog::setHead(const QString &sandbox, const QString &id)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    if (id.isEmpty()) {
        query.prepare(QStringLiteral("DELETE FROM snapshot_heads WHERE sandbox = :sandbox"));
    } else {
        query.prepare(QStringLiteral("INSERT OR REPLACE INTO snapshot_heads (sandbox, snapshot) "
                                     "VALUES (:sandbox, :snapshot)"));
        query.bindValue(QStringLiteral(":snapshot"), id);
    }
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    if (!query.exec())
        return sqlFailure(QStringLiteral("set head of %1").arg(sandbox), query.lastError());
    return {};
}

SnapshotSchedule SnapshotCatalog::schedule(const QString &sandbox) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("SELECT interval_minutes, hourly_hours, daily_days FROM "
                                 "snapshot_schedules WHERE sandbox = :sandbox"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    SnapshotSchedule schedule;
    if (query.exec() && query.next()) {
        schedule.intervalMinutes = query.value(0).toInt();
        schedule.hourlyHours = query.value(1).toInt();
        schedule.dailyDays = query.value(2).toInt();
    }
    return schedule;
}

Result<void> SnapshotCatalog::setSchedule(const QString &sandbox, const SnapshotSchedule &schedule)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral(
        "INSERT OR REPLACE INTO snapshot_schedules (sandbox, interval_minutes, hourly_hours, "
        "daily_days) VALUES (:sandbox, :interval, :hourly, :daily)"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    query.bindValue(QStringLiteral(":interval"), schedule.intervalMinutes);
    query.bindValue(QStringLiteral(":hourly"), schedule.hourlyHours);
    query.bindValue(QStringLiteral(":daily"), schedule.dailyDays);
    if (!query.exec())
        return sqlFailure(QStringLiteral("set schedule of %1").arg(sandbox), query.lastError());
    return {};
}

Result<void> SnapshotCatalog::forgetSandbox(const QString &sandbox)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    for (const QString &sql :
         {QStringLiteral("DELETE FROM snapshot_heads WHERE sandbox = :sandbox"),
          QStringLiteral("DELETE FROM snapshot_schedules WHERE sandbox = :sandbox")}) {
        query.prepare(sql);
        query.bindValue(QStringLiteral(":sandbox"), sandbox);
        if (!query.exec())
            return sqlFailure(QStringLiteral("forget %1").arg(sandbox), query.lastError());
    }
    return {};
}

} // namespace airlock
