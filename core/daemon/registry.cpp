#include "core/daemon/registry.h"

#include "core/snapshot/snapshotcatalog.h"

#include <QAtomicInteger>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcRegistry, "airlock.daemon.registry")

QAtomicInteger<quint64> g_connectionCounter;

std::unexpected<Error> sqlFailure(const QString &what, const QSqlError &error)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("registry: %1: %2").arg(what, error.text()));
}

QVariant timeValue(const QDateTime &time)
{
    if (!time.isValid())
        return QVariant(QMetaType(QMetaType::QString));
    return time.toUTC().toString(Qt::ISODateWithMs);
}

QDateTime timeFrom(const QVariant &value)
{
    if (value.isNull())
        return {};
    return QDateTime::fromString(value.toString(), Qt::ISODateWithMs).toUTC();
}

/// Compact JSON of a policy, as stored in the `policy` column.
QString policyText(const EgressPolicy &policy)
{
    return QString::fromUtf8(QJsonDocument(policy.toJson()).toJson(QJsonDocument::Compact));
}

/// Reads the `policy` column. A row that does not parse (edited by hand, or written by a buggy
/// helper) falls back to deny-all, the fail-closed choice, with a warning naming the sandbox.
EgressPolicy policyFrom(const QString &sandbox, const QVariant &value)
{
    auto policy = EgressPolicy::fromJsonBytes(value.toString().toUtf8());
    if (policy)
        return *policy;
    qCWarning(lcRegistry, "%s: stored egress policy is invalid (%s); using deny-all",
              qPrintable(sandbox), qPrintable(policy.error().message));
    return EgressPolicy::denyAll();
}

void bindRecord(QSqlQuery &query, const SandboxRecord &record)
{
    const Sandbox &s = record.sandbox;
    query.bindValue(QStringLiteral(":name"), s.spec.name);
    query.bindValue(QStringLiteral(":vcpus"), s.spec.vcpus);
    query.bindValue(QStringLiteral(":memory_mib"), s.spec.memoryMib);
    query.bindValue(QStringLiteral(":image"), s.spec.image);
    query.bindValue(QStringLiteral(":created_at"), timeValue(s.createdAt));
    query.bindValue(QStringLiteral(":state"), sandboxStateName(s.state));
    query.bindValue(QStringLiteral(":state_reason"), s.stateReason);
    query.bindValue(QStringLiteral(":acceleration"), accelerationName(s.acceleration));
    query.bindValue(QStringLiteral(":acceleration_warning"), s.accelerationWarning);
    query.bindValue(QStringLiteral(":started_at"), timeValue(s.startedAt));
    query.bindValue(QStringLiteral(":vmm_pid"), record.runtime.pid);
    query.bindValue(QStringLiteral(":vmm_start_ticks"), record.runtime.startTimeTicks);
    query.bindValue(QStringLiteral(":runtime_dir"), record.runtime.runtimeDir);
    query.bindValue(QStringLiteral(":policy"), policyText(record.policy));
    query.bindValue(QStringLiteral(":link_index"), record.linkIndex);
    query.bindValue(QStringLiteral(":boot"), bootModeName(s.spec.boot));
    query.bindValue(QStringLiteral(":started_from"), startSourceName(s.startedFrom));
    query.bindValue(QStringLiteral(":identity_warning"),
                    s.identityWarning.isNull() ? QStringLiteral("") : s.identityWarning);
    query.bindValue(
        QStringLiteral(":labels"),
        QString::fromUtf8(QJsonDocument(s.spec.labelsJson()).toJson(QJsonDocument::Compact)));
    query.bindValue(QStringLiteral(":vmm"), vmmKindName(s.spec.vmm.value_or(VmmKind::Qemu)));
}

} // namespace

QList<Registry::Migration> Registry::migrations()
{
    return {
        // 0 → 1: the sandbox table. Times are ISO 8601 UTC text, states and accelerations
        // their protocol names, so the file is readable with the sqlite3 shell.
        {QStringLiteral("CREATE TABLE sandboxes ("
                        " name TEXT PRIMARY KEY NOT NULL,"
                        " vcpus INTEGER NOT NULL,"
                        " memory_mib INTEGER NOT NULL,"
                        " image TEXT NOT NULL,"
                        " created_at TEXT NOT NULL,"
                        " state TEXT NOT NULL DEFAULT 'stopped',"
                        " state_reason TEXT NOT NULL DEFAULT '',"
                        " acceleration TEXT NOT NULL DEFAULT 'unknown',"
                        " acceleration_warning TEXT NOT NULL DEFAULT '',"
                        " started_at TEXT,"
                        " vmm_pid INTEGER NOT NULL DEFAULT 0,"
                        " vmm_start_ticks INTEGER NOT NULL DEFAULT 0,"
                        " runtime_dir TEXT NOT NULL DEFAULT '')")},
        // 1 → 2: each sandbox's egress policy (docs/policy.md) as compact JSON. Existing and
        // new sandboxes start with deny-all; the column goes with the row when a sandbox is
        // deleted.
        {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN policy TEXT NOT NULL"
                        " DEFAULT '{\"version\":1,\"rules\":[]}'")},
        // 2 → 3: credential bindings and the guest-visible placeholders (issue 4). Both go with
        // their sandbox (ON DELETE CASCADE; open() turns foreign keys on).
        {QStringLiteral("CREATE TABLE credential_bindings ("
                        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                        " sandbox TEXT NOT NULL REFERENCES sandboxes(name) ON DELETE CASCADE,"
                        " secret TEXT NOT NULL,"
                        " host TEXT NOT NULL,"
                        " path_prefix TEXT NOT NULL DEFAULT '',"
                        " methods TEXT NOT NULL DEFAULT '',"
                        " placement TEXT NOT NULL,"
                        " created_at TEXT NOT NULL,"
                        " injections INTEGER NOT NULL DEFAULT 0,"
                        " last_used TEXT,"
                        " denied INTEGER NOT NULL DEFAULT 0)"),
         QStringLiteral("CREATE TABLE credential_placeholders ("
                        " sandbox TEXT NOT NULL REFERENCES sandboxes(name) ON DELETE CASCADE,"
                        " secret TEXT NOT NULL,"
                        " placeholder TEXT NOT NULL UNIQUE,"
                        " PRIMARY KEY (sandbox, secret))")},
        // 3 → 4: the sandbox's network link (AddressPool index) while it runs, so a restarted
        // helper reserves the same addresses for the guests it re-adopts; -1 when none.
        {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN link_index INTEGER NOT NULL"
                        " DEFAULT -1")},
        // 4 → 5: egress decisions of the gateways (docs/protocol.md egress.event), bounded
        // per sandbox by the helper; `event` is the gateway's JSON object.
        {QStringLiteral("CREATE TABLE egress_events ("
                        " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                        " sandbox TEXT NOT NULL,"
                        " event TEXT NOT NULL)"),
         QStringLiteral("CREATE INDEX egress_events_by_sandbox ON egress_events (sandbox, seq)")},
        // 5 → 6: snapshots (docs/snapshots.md): the snapshot tree, each sandbox's head and
        // schedule. Idempotent (IF NOT EXISTS): development registries that met these tables
        // at an earlier position migrate cleanly.
        SnapshotCatalog::migration(),
        // 6 → 7 (issue 5): how each sandbox boots
        // (sandbox.create `boot`), where its running state came from and whether its guest
        // confirmed a new identity (docs/snapshots.md, "Guest agent"); the image fingerprint a
        // template snapshot was made from.
        {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN boot TEXT NOT NULL DEFAULT 'template'"),
         QStringLiteral("ALTER TABLE sandboxes ADD COLUMN started_from TEXT NOT NULL DEFAULT ''"),
         QStringLiteral(
             "ALTER TABLE sandboxes ADD COLUMN identity_warning TEXT NOT NULL DEFAULT ''"),
         QStringLiteral("ALTER TABLE snapshots ADD COLUMN template_key TEXT NOT NULL DEFAULT ''")},
        // 7 → 8: who owns each secret of the vault (docs/credentials.md, "Trust model"): the
        // peer uid that first stored it. Secrets stored before have no row and belong to root,
        // so an upgrade takes nothing from root and gives nothing to anyone else.
        {QStringLiteral("CREATE TABLE secret_owners ("
                        " name TEXT PRIMARY KEY NOT NULL,"
                        " uid INTEGER NOT NULL,"
                        " since TEXT NOT NULL)")},
        // 8 → 9: the client's labels of each sandbox (sandbox.create `labels`; airlock-e2b's
        // E2B metadata), a compact JSON object of strings.
        {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN labels TEXT NOT NULL DEFAULT '{}'")},
        // 9 → 10 (issue 19): the VMM backend of each sandbox (sandbox.create `vmm`,
        // docs/vmm.md); every sandbox before it ran on QEMU.
        {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN vmm TEXT NOT NULL DEFAULT 'qemu'")},
        // 10 → 11: the VMM whose device state each snapshot holds, so a restore or fork boots
        // the same one; every snapshot before it was QEMU's.
        {QStringLiteral("ALTER TABLE snapshots ADD COLUMN vmm TEXT NOT NULL DEFAULT 'qemu'")},
    };
}

Registry::Registry(QString connectionName) : m_connectionName(std::move(connectionName)) { }

Registry::~Registry()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

Result<std::unique_ptr<Registry>> Registry::open(const QString &path,
                                                 const QList<Migration> &migrations)
{
    const QString name = QStringLiteral("airlock-registry-%1").arg(++g_connectionCounter);
    std::unique_ptr<Registry> registry(new Registry(name));
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    if (!db.open())
        return sqlFailure(QStringLiteral("cannot open %1").arg(path), db.lastError());

    QSqlQuery query(db);
    // WAL keeps readers and the writer apart; NORMAL sync is durable across a helper crash,
    // which is what the registry must survive.
    for (const auto &pragma :
         {QStringLiteral("PRAGMA journal_mode=WAL"), QStringLiteral("PRAGMA synchronous=NORMAL"),
          QStringLiteral("PRAGMA busy_timeout=5000"), QStringLiteral("PRAGMA foreign_keys=ON")}) {
        if (!query.exec(pragma))
            return sqlFailure(pragma, query.lastError());
    }

    const int version = registry->schemaVersion();
    if (version < 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("registry: cannot read the schema version of %1").arg(path));
    if (version > migrations.size())
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("registry %1 has schema version %2, newer than this airlockd "
                                   "understands (%3); use a newer airlockd")
                        .arg(path)
                        .arg(version)
                        .arg(migrations.size()));
    if (version == migrations.size())
        return registry;

    if (!db.transaction())
        return sqlFailure(QStringLiteral("begin migration"), db.lastError());
    for (int step = version; step < migrations.size(); ++step) {
        for (const QString &statement : migrations.at(step)) {
            if (!query.exec(statement)) {
                const QSqlError error = query.lastError();
                db.rollback();
                return sqlFailure(QStringLiteral("migration %1 → %2").arg(step).arg(step + 1),
                                  error);
            }
        }
    }
    // PRAGMA takes no bound parameters; the value is our own integer.
    if (!query.exec(QStringLiteral("PRAGMA user_version=%1").arg(migrations.size()))) {
        const QSqlError error = query.lastError();
        db.rollback();
        return sqlFailure(QStringLiteral("set schema version"), error);
    }
    if (!db.commit())
        return sqlFailure(QStringLiteral("commit migration"), db.lastError());
    qCInfo(lcRegistry, "migrated %s from schema %d to %d", qPrintable(path), version,
           int(migrations.size()));
    return registry;
}

int Registry::schemaVersion() const
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    if (!query.exec(QStringLiteral("PRAGMA user_version")) || !query.next())
        return -1;
    return query.value(0).toInt();
}

Result<QList<SandboxRecord>> Registry::load() const
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    if (!query.exec(QStringLiteral(
            "SELECT name, vcpus, memory_mib, image, created_at, state, state_reason, "
            "acceleration, acceleration_warning, started_at, vmm_pid, vmm_start_ticks, "
            "runtime_dir, policy, link_index, boot, started_from, identity_warning, labels, "
            "vmm FROM sandboxes ORDER BY name")))
        return sqlFailure(QStringLiteral("load"), query.lastError());
    QList<SandboxRecord> records;
    while (query.next()) {
        SandboxRecord record;
        Sandbox &s = record.sandbox;
        s.spec.name = query.value(0).toString();
        s.spec.vcpus = query.value(1).toInt();
        s.spec.memoryMib = query.value(2).toInt();
        s.spec.image = query.value(3).toString();
        s.createdAt = timeFrom(query.value(4));
        s.state = sandboxStateFromName(query.value(5).toString()).value_or(SandboxState::Stopped);
        s.stateReason = query.value(6).toString();
        s.acceleration = accelerationFromName(query.value(7).toString());
        s.accelerationWarning = query.value(8).toString();
        s.startedAt = timeFrom(query.value(9));
        record.runtime.pid = query.value(10).toLongLong();
        record.runtime.startTimeTicks = query.value(11).toLongLong();
        record.runtime.runtimeDir = query.value(12).toString();
        s.vmmPid = record.runtime.pid;
        record.policy = policyFrom(s.spec.name, query.value(13));
        record.linkIndex = query.value(14).toLongLong();
        s.spec.boot = bootModeFromName(query.value(15).toString()).value_or(BootMode::Template);
        s.startedFrom = startSourceFromName(query.value(16).toString());
        s.identityWarning = query.value(17).toString();
        // Labels are the client's notes: a row that does not parse loses them, nothing more.
        const auto labels = SandboxSpec::labelsFromJson(
            QJsonDocument::fromJson(query.value(18).toString().toUtf8()).object());
        s.spec.labels = labels ? *labels : QMap<QString, QString>();
        s.spec.vmm = vmmKindFromName(query.value(19).toString()).value_or(VmmKind::Qemu);
        records.append(record);
    }
    return records;
}

Result<void> Registry::insert(const SandboxRecord &record)
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    query.prepare(QStringLiteral(
        "INSERT INTO sandboxes (name, vcpus, memory_mib, image, created_at, state, "
        "state_reason, acceleration, acceleration_warning, started_at, vmm_pid, "
        "vmm_start_ticks, runtime_dir, policy, link_index, boot, started_from, identity_warning, "
        "labels, vmm) "
        "VALUES (:name, :vcpus, :memory_mib, "
        ":image, :created_at, :state, COALESCE(:state_reason, ''), :acceleration, "
        "COALESCE(:acceleration_warning, ''), :started_at, :vmm_pid, :vmm_start_ticks, "
        "COALESCE(:runtime_dir, ''), :policy, :link_index, :boot, :started_from, "
        ":identity_warning, :labels, :vmm)"));
    bindRecord(query, record);
    if (query.exec())
        return {};
    const QSqlError error = query.lastError();
    query.finish();
    // Told apart after the fact: SQLite's constraint codes are not portable across Qt drivers.
    QSqlQuery exists(QSqlDatabase::database(m_connectionName));
    exists.prepare(QStringLiteral("SELECT 1 FROM sandboxes WHERE name = :name"));
    exists.bindValue(QStringLiteral(":name"), record.sandbox.spec.name);
    if (exists.exec() && exists.next())
        return fail(
            ErrorKind::AlreadyExists,
            QStringLiteral("a sandbox named '%1' already exists").arg(record.sandbox.spec.name));
    return sqlFailure(QStringLiteral("insert %1").arg(record.sandbox.spec.name), error);
}

Result<void> Registry::update(const SandboxRecord &record)
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    query.prepare(QStringLiteral(
        "UPDATE sandboxes SET vcpus = :vcpus, memory_mib = :memory_mib, image = :image, "
        "created_at = :created_at, state = :state, state_reason = COALESCE(:state_reason, ''), "
        "acceleration = :acceleration, "
        "acceleration_warning = COALESCE(:acceleration_warning, ''), started_at = :started_at, "
        "vmm_pid = :vmm_pid, vmm_start_ticks = :vmm_start_ticks, "
        "runtime_dir = COALESCE(:runtime_dir, ''), policy = :policy, link_index = :link_index, "
        "boot = :boot, started_from = :started_from, identity_warning = :identity_warning, "
        "labels = :labels, vmm = :vmm WHERE name = :name"));
    bindRecord(query, record);
    if (!query.exec())
        return sqlFailure(QStringLiteral("update %1").arg(record.sandbox.spec.name),
                          query.lastError());
    if (query.numRowsAffected() != 1)
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no sandbox named '%1'").arg(record.sandbox.spec.name));
    return {};
}

Result<void> Registry::remove(const QString &name)
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    query.prepare(QStringLiteral("DELETE FROM sandboxes WHERE name = :name"));
    query.bindValue(QStringLiteral(":name"), name);
    if (!query.exec())
        return sqlFailure(QStringLiteral("delete %1").arg(name), query.lastError());
    if (query.numRowsAffected() != 1)
        return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
    QSqlQuery events(QSqlDatabase::database(m_connectionName));
    events.prepare(QStringLiteral("DELETE FROM egress_events WHERE sandbox = :name"));
    events.bindValue(QStringLiteral(":name"), name);
    if (!events.exec())
        return sqlFailure(QStringLiteral("delete egress events of %1").arg(name),
                          events.lastError());
    return {};
}

Result<qint64> Registry::appendEgress(const QString &sandbox, const QJsonObject &event, int keep)
{
    auto seqs = appendEgressBatch({{sandbox, event}}, keep);
    AIRLOCK_TRY(seqs);
    return seqs->first();
}

Result<QList<qint64>>
Registry::appendEgressBatch(const QList<std::pair<QString, QJsonObject>> &events, int keep)
{
    QList<qint64> seqs;
    if (events.isEmpty())
        return seqs;
    QSqlDatabase db = QSqlDatabase::database(m_connectionName);
    if (!db.transaction())
        return sqlFailure(QStringLiteral("begin storing egress events"), db.lastError());
    QSqlQuery query(db);
    query.prepare(
        QStringLiteral("INSERT INTO egress_events (sandbox, event) VALUES (:sandbox, :event)"));
    QStringList sandboxes;
    for (const auto &[sandbox, event] : events) {
        query.bindValue(QStringLiteral(":sandbox"), sandbox);
        query.bindValue(QStringLiteral(":event"),
                        QString::fromUtf8(QJsonDocument(event).toJson(QJsonDocument::Compact)));
        if (!query.exec()) {
            const QSqlError error = query.lastError();
            db.rollback();
            return sqlFailure(QStringLiteral("store egress event of %1").arg(sandbox), error);
        }
        seqs.append(query.lastInsertId().toLongLong());
        if (!sandboxes.contains(sandbox))
            sandboxes.append(sandbox);
    }
    // Seqs are shared by all sandboxes, so the bound is this sandbox's keep-th newest row.
    QSqlQuery trim(db);
    trim.prepare(QStringLiteral(
        "DELETE FROM egress_events WHERE sandbox = :sandbox AND seq < (SELECT seq FROM "
        "egress_events WHERE sandbox = :sandbox2 ORDER BY seq DESC LIMIT 1 OFFSET :offset)"));
    for (const QString &sandbox : std::as_const(sandboxes)) {
        trim.bindValue(QStringLiteral(":sandbox"), sandbox);
        trim.bindValue(QStringLiteral(":sandbox2"), sandbox);
        trim.bindValue(QStringLiteral(":offset"), qMax(0, keep - 1));
        if (!trim.exec())
            qCWarning(lcRegistry, "trimming egress events of %s: %s", qPrintable(sandbox),
                      qPrintable(trim.lastError().text()));
    }
    if (!db.commit()) {
        const QSqlError error = db.lastError();
        db.rollback();
        return sqlFailure(QStringLiteral("commit egress events"), error);
    }
    return seqs;
}

Result<QList<EgressRecord>> Registry::egressHistory(const QString &sandbox,
                                                    std::optional<qint64> since, int limit) const
{
    QSqlQuery query(QSqlDatabase::database(m_connectionName));
    if (since) {
        query.prepare(QStringLiteral("SELECT seq, event FROM egress_events WHERE sandbox = "
                                     ":sandbox AND seq > :since ORDER BY seq ASC LIMIT :limit"));
        query.bindValue(QStringLiteral(":since"), *since);
    } else {
        query.prepare(QStringLiteral("SELECT seq, event FROM (SELECT seq, event FROM "
                                     "egress_events WHERE sandbox = :sandbox ORDER BY seq DESC "
                                     "LIMIT :limit) ORDER BY seq ASC"));
    }
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    query.bindValue(QStringLiteral(":limit"), limit);
    if (!query.exec())
        return sqlFailure(QStringLiteral("egress history of %1").arg(sandbox), query.lastError());
    QList<EgressRecord> records;
    while (query.next()) {
        EgressRecord record;
        record.seq = query.value(0).toLongLong();
        record.sandbox = sandbox;
        record.event = QJsonDocument::fromJson(query.value(1).toString().toUtf8()).object();
        records.append(record);
    }
    return records;
}

} // namespace airlock
