#pragma once

#include "core/model/error.h"

#include <QDateTime>
#include <QHash>
#include <QString>

#include <sys/types.h>

namespace airlock {

class Registry;

/// Who owns each secret of the vault (docs/credentials.md, "Trust model"): the peer uid
/// (SO_PEERCRED) of the client that first stored it, in the registry table `secret_owners`
/// (migration 8). A secret without a row (stored before owners existed, or by hand) belongs to
/// root. Only the owner or root may replace, delete or bind a secret, or remove its bindings;
/// everyone in the access group may list its metadata. This closes docs/architecture.md boundary 4
/// between users of one helper: binding a secret is how its value is used, so a user who could
/// bind another's secret to a host of their own could read it back through the gateway.
class SecretOwners
{
public:
    /// `registry` must outlive the object.
    explicit SecretOwners(const Registry &registry);

    /// The owner of `name`: its row, else root (0). Errors: OperationFailed (SQLite).
    Result<uid_t> ownerOf(const QString &name) const;
    /// Every row, by secret name (secrets without one belong to root). Errors: OperationFailed.
    Result<QHash<QString, uid_t>> all() const;
    /// Records `uid` as the owner of a newly stored `name`, replacing a stale row (a secret
    /// deleted behind the helper's back). Errors: OperationFailed.
    Result<void> setOwner(const QString &name, uid_t uid,
                          const QDateTime &when = QDateTime::currentDateTimeUtc());
    /// Forgets the owner of a deleted secret. Errors: OperationFailed.
    Result<void> forget(const QString &name);

    /// Empty when `caller` may `action` secret `name` (root, or its owner); otherwise the
    /// PermissionDenied error naming the owner, e.g. "secret 'ci-token' belongs to alice
    /// (uid 1001): only its owner or root may bind it". `action` is a verb phrase ("replace
    /// it", "bind it", "delete it", "remove its bindings"). Errors: OperationFailed (SQLite).
    Result<void> check(uid_t caller, const QString &name, const QString &action) const;

    /// "alice" for a uid with a passwd entry, "uid 1234" otherwise (messages, the CLI).
    static QString describe(uid_t uid);

private:
    QString m_connection;
};

} // namespace airlock
