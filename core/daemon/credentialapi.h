#pragma once

#include "core/daemon/rpcserver.h"
#include "core/model/error.h"
#include "core/vault/secretvault.h"

#include <QObject>

#include <optional>

namespace airlock {

class BindingStore;
class SandboxService;

/// The credential methods of docs/protocol.md: `secret.set|list|delete` and
/// `binding.add|list|remove` (issue 4). Write-only by construction: no method returns a secret
/// value, and the value's bytes are wiped once stored (the JSON layer's own copies are Qt's and
/// cannot be wiped; docs/credentials.md says so).
///
/// The vault may be unavailable (its key lost while secret files remain, a wrong key mode): then
/// airlockd keeps serving sandboxes and every secret method answers backend_unavailable with
/// the vault's error, naming the file.
class CredentialApi : public QObject
{
    Q_OBJECT
public:
    /// `vault` is the opened vault or why it could not be opened. `bindings` and `sandboxes`
    /// must outlive this object.
    CredentialApi(RpcServer &server, Result<vault::SecretVault> vault, BindingStore &bindings,
                  SandboxService &sandboxes, QObject *parent = nullptr);

    /// The vault, when it opened.
    vault::SecretVault *secretVault() { return m_vault ? &*m_vault : nullptr; }

Q_SIGNALS:
    /// A binding of `sandbox` was added or removed: its gateway needs new credentials.
    void bindingsChanged(const QString &sandbox);
    /// A secret's value was replaced or it was deleted.
    void secretChanged(const QString &secret);

private:
    Result<vault::SecretVault *> requireVault();
    Result<QJsonValue> secretSet(const QJsonObject &params);
    Result<QJsonValue> secretList();
    Result<QJsonValue> secretDelete(const QJsonObject &params);
    Result<QJsonValue> bindingAdd(const QJsonObject &params);
    Result<QJsonValue> bindingList(const QJsonObject &params);
    Result<QJsonValue> bindingRemove(const QJsonObject &params);

    std::optional<vault::SecretVault> m_vault;
    Error m_vaultError;
    BindingStore &m_bindings;
    SandboxService &m_sandboxes;
};

} // namespace airlock
