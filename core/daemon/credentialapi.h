#pragma once

#include "core/daemon/credentialaudit.h"
#include "core/daemon/rpcserver.h"
#include "core/model/error.h"
#include "core/vault/secretvault.h"

#include <QObject>

#include <optional>

namespace airlock {

class BindingStore;
class SandboxService;
class SecretOwners;

/// The credential methods of docs/protocol.md: `secret.set|list|delete` and
/// `binding.add|list|remove` (issue 4). Write-only by construction: no method returns a secret
/// value, and the value's bytes are wiped once stored (the JSON layer's own copies are Qt's and
/// cannot be wiped; docs/credentials.md says so).
///
/// Every secret has an owner (SecretOwners: the peer uid that first stored it; root for older
/// ones). Only the owner or root may replace, delete or bind a secret or remove its bindings;
/// others get permission_denied naming the owner. Everyone in the access group lists metadata,
/// with `owner` and `ownerUid`. Every change, and every refused attempt, is a line of the
/// CredentialAudit (never a value).
///
/// The vault may be unavailable (its key lost while secret files remain, a wrong key mode): then
/// airlockd keeps serving sandboxes and every secret method answers backend_unavailable with
/// the vault's error, naming the file.
class CredentialApi : public QObject
{
    Q_OBJECT
public:
    /// `vault` is the opened vault or why it could not be opened. `bindings`, `sandboxes`,
    /// `owners` and `audit` must outlive this object.
    CredentialApi(RpcServer &server, Result<vault::SecretVault> vault, BindingStore &bindings,
                  SandboxService &sandboxes, SecretOwners &owners, CredentialAudit &audit,
                  QObject *parent = nullptr);

    /// The vault, when it opened.
    vault::SecretVault *secretVault() { return m_vault ? &*m_vault : nullptr; }

Q_SIGNALS:
    /// A binding of `sandbox` was added or removed: its gateway needs new credentials.
    void bindingsChanged(const QString &sandbox);
    /// A secret's value was replaced or it was deleted.
    void secretChanged(const QString &secret);
    /// A secret was deleted from the vault: no gateway may keep any value of it.
    void secretDeleted(const QString &secret);

private:
    Result<vault::SecretVault *> requireVault();
    Result<QJsonValue> secretSet(uid_t caller, const QJsonObject &params);
    Result<QJsonValue> secretList();
    Result<QJsonValue> secretDelete(uid_t caller, const QJsonObject &params);
    Result<QJsonValue> bindingAdd(uid_t caller, const QJsonObject &params);
    Result<QJsonValue> bindingList(const QJsonObject &params);
    Result<QJsonValue> bindingRemove(uid_t caller, const QJsonObject &params);
    /// SecretOwners::check() for `attempt` (its uid, secret and method); a refusal is written
    /// to the audit trail with its outcome.
    Result<void> permit(CredentialAudit::Entry attempt, const QString &action);

    std::optional<vault::SecretVault> m_vault;
    Error m_vaultError;
    BindingStore &m_bindings;
    SandboxService &m_sandboxes;
    SecretOwners &m_owners;
    CredentialAudit &m_audit;
};

} // namespace airlock
