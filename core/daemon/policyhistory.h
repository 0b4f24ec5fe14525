#pragma once

#include "core/model/egresspolicy.h"
#include "core/model/error.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <optional>
#include <sys/types.h>

namespace airlock {

/// Who changed a policy and through what, as the helper knows it: the uid comes from the
/// connection's SO_PEERCRED (never from the client), the source is what the client says it
/// is (`policy.set` `source`: "editor", "allow-prompt", "airlockctl", ...) or the helper's own
/// name for a change it made itself ("fork").
struct PolicyChangeOrigin
{
    std::optional<uid_t> uid; ///< none for a change the helper made on its own
    QString source = QStringLiteral("client");
};

/// The record of every applied egress policy change, per sandbox (issue 17: an "Allow?"
/// answer is "a reviewed policy change, applied atomically, and recorded"). One JSON object a
/// line in STATE/policy-history/NAME.jsonl (directory 0700, files 0600), appended only; when a
/// line would take the file past kFileBytes it is renamed to NAME.1.jsonl (replacing the one
/// before) and a new file begins, so a sandbox's record is at most twice kFileBytes and the
/// oldest changes go first. Not in the SQLite registry, so its schema stays as it is.
///
/// A line (docs/protocol.md, `policy.history`): `{seq, time, uid, user, source, oldRevision,
/// newRevision, rules, added: [Rule], removed: [Rule], addedCount, removedCount, policy?}`.
/// `seq` counts from 1 per sandbox; `added`/`removed` are the rules (compared whole, comment
/// included) the change added and removed, at most kMaxListedRules each (the counts are
/// complete); `policy` is the whole new policy when its compact JSON is at most
/// kMaxStoredPolicyBytes, so a client can go back to it.
class PolicyHistory
{
public:
    static constexpr qint64 kFileBytes = 256 * 1024;
    static constexpr int kMaxListedRules = 50;
    static constexpr qsizetype kMaxStoredPolicyBytes = 64 * 1024;
    static constexpr int kDefaultLimit = 50;
    static constexpr int kMaxLimit = 500;

    /// Records go under `directory` (created on the first append).
    explicit PolicyHistory(QString directory);

    /// Appends one change of `name`'s policy from `before` to `after`. Nothing is recorded when
    /// they are equal. OperationFailed when the file cannot be written (the policy change
    /// stands: the caller logs it).
    Result<void> append(const QString &name, const EgressPolicy &before, const EgressPolicy &after,
                        const PolicyChangeOrigin &origin,
                        const QDateTime &time = QDateTime::currentDateTimeUtc());
    /// The newest `limit` changes of `name`, newest first. Lines that do not parse (a line cut
    /// short by a crash) are skipped.
    QJsonArray entries(const QString &name, int limit) const;
    /// Deletes the record of a sandbox that is deleted: a later sandbox of the same name
    /// starts with none.
    void remove(const QString &name);

    /// The rules of `after` not in `before` (added) and of `before` not in `after` (removed),
    /// as multisets of whole rules.
    static std::pair<QList<EgressRule>, QList<EgressRule>> diff(const EgressPolicy &before,
                                                                const EgressPolicy &after);

    QString filePath(const QString &name) const;
    QString rotatedFilePath(const QString &name) const;

private:
    QList<QJsonObject> readAll(const QString &name) const;
    qint64 lastSeq(const QString &name) const;

    QString m_directory;
    mutable QHash<QString, qint64> m_lastSeq;
};

} // namespace airlock
