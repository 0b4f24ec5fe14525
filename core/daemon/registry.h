#pragma once

#include "core/model/egresspolicy.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/vmm/vmm.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace airlock {

/// One row of the registry: what a later helper needs to list a sandbox and re-adopt its VMM.
struct SandboxRecord
{
    Sandbox sandbox;
    VmmRuntimeInfo runtime;
    EgressPolicy policy; ///< the sandbox's egress allowlist; deny-all for a new sandbox
    /// AddressPool index of the sandbox's link while it runs; -1 when it holds none.
    qint64 linkIndex = -1;
};

/// One stored egress decision (docs/protocol.md, `egress.event`).
struct EgressRecord
{
    qint64 seq = 0; ///< increases with every event the helper stores, across sandboxes
    QString sandbox;
    QJsonObject event; ///< the gateway's event object, as received
};

/// The helper's persistent sandbox registry: one SQLite file (Qt Sql, QSQLITE driver) in the
/// state dir. The schema version lives in `PRAGMA user_version`; open() applies every missing
/// migration from migrations() in order, all in one transaction, so a failure leaves the file
/// at its old version. A file written by a newer helper (higher version) is refused rather than
/// guessed at. Each instance uses its own Qt Sql connection name, so several may be open.
class Registry
{
public:
    /// One migration: SQL statements taking the schema from version N to N+1 (N = index).
    using Migration = QStringList;

    /// Opens (creating if needed) and migrates. Errors: OperationFailed with the SQLite message.
    static Result<std::unique_ptr<Registry>>
    open(const QString &path, const QList<Migration> &migrations = Registry::migrations());
    /// The schema history of Airlock's registry, oldest first.
    static QList<Migration> migrations();

    ~Registry();
    Registry(const Registry &) = delete;
    Registry &operator=(const Registry &) = delete;

    /// The Qt Sql connection name of this registry, for tables kept by other classes
    /// (SnapshotCatalog, BindingStore).
    QString connectionName() const { return m_connectionName; }
    /// The file's `user_version`.
    int schemaVersion() const;
    /// Every sandbox, ordered by name.
    Result<QList<SandboxRecord>> load() const;
    /// AlreadyExists when the name is taken.
    Result<void> insert(const SandboxRecord &record);
    /// Replaces the row of record.sandbox.spec.name; NotFound when there is none.
    Result<void> update(const SandboxRecord &record);
    /// NotFound when there is no such row. Also deletes the sandbox's egress history; its
    /// credential bindings and placeholders go with it (foreign keys, ON DELETE CASCADE).
    Result<void> remove(const QString &name);

    /// Default bound of the egress history per sandbox.
    static constexpr int kDefaultEgressHistory = 10000;
    /// Stores one egress event and drops the sandbox's oldest beyond `keep`. Returns its seq.
    Result<qint64> appendEgress(const QString &sandbox, const QJsonObject &event,
                                int keep = kDefaultEgressHistory);
    /// Stores `events` ((sandbox, event) pairs, in order) in one transaction and trims each
    /// sandbox once: what airlockd does per event-loop turn
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f6: one transaction, INSERT and trim per
    /// event ran at ~5.6k events/s). Returns the seqs in the same order; OperationFailed (nothing
    /// stored) when the transaction fails.
    Result<QList<qint64>> appendEgressBatch(const QList<std::pair<QString, QJsonObject>> &events,
                                            int keep = kDefaultEgressHistory);
    /// The sandbox's stored events in order of seq. With `since`, those after it (oldest
    /// first, at most `limit`); without, the newest `limit`.
    Result<QList<EgressRecord>> egressHistory(const QString &sandbox, std::optional<qint64> since,
                                              int limit) const;

private:
    explicit Registry(QString connectionName);

    QString m_connectionName;
};

} // namespace airlock
