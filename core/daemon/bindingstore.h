#pragma once

#include "core/model/credentialbinding.h"
#include "core/model/error.h"

#include <QHash>
#include <QList>
#include <QString>

namespace airlock {

class Registry;

/// Credential bindings and per-sandbox placeholders in the registry's SQLite file (tables
/// credential_bindings and credential_placeholders, migration 3). Rows go with their sandbox
/// (ON DELETE CASCADE). Stores no secret values: those live in the vault.
class BindingStore
{
public:
    /// `registry` must outlive the store.
    explicit BindingStore(const Registry &registry);

    /// Stores a validated binding and returns it with id and createdAt set. AlreadyExists when
    /// the sandbox already binds the same secret to the same host, path prefix and methods.
    Result<CredentialBinding> add(const CredentialBinding &binding);
    /// Bindings of `sandbox`, or of every sandbox when empty, ordered by id.
    Result<QList<CredentialBinding>> list(const QString &sandbox = {}) const;
    /// Bindings that use `secret`, in any sandbox.
    Result<QList<CredentialBinding>> usingSecret(const QString &secret) const;
    /// The binding with that id; NotFound when there is none.
    Result<CredentialBinding> get(qint64 id) const;
    /// NotFound when there is no binding with that id.
    Result<CredentialBinding> remove(qint64 id);

    /// The placeholder of (sandbox, secret), created with newPlaceholder() on first use.
    Result<QString> placeholder(const QString &sandbox, const QString &secret);
    /// Every placeholder of `sandbox` by secret name.
    Result<QHash<QString, QString>> placeholders(const QString &sandbox) const;
    /// Forgets the placeholders of `sandbox` whose secret no binding of it uses any more.
    Result<void> prunePlaceholders(const QString &sandbox);
    /// New random placeholders for every secret of `sandbox` (a fork must not share them).
    Result<void> regeneratePlaceholders(const QString &sandbox);

    /// Counts `count` injections (an event summary stands for several), the last at `when`
    /// (UTC). NotFound for an unknown id.
    Result<void> recordInjection(qint64 id, const QDateTime &when, qint64 count = 1);
    /// Counts `count` refused requests that carried the binding's placeholder.
    Result<void> recordDenied(qint64 id, qint64 count = 1);

private:
    QString m_connection;
};

} // namespace airlock
