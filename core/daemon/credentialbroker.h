#pragma once

#include "core/daemon/gatewayprocess.h"

#include <QJsonObject>
#include <QObject>

#include <functional>

namespace airlock {

class BindingStore;
class CredentialApi;
class SandboxService;
namespace vault {
class SecretVault;
}

/// Hands each sandbox's gateway exactly the secrets its bindings need (issue 4;
/// docs/architecture.md boundary 4) and keeps the per-binding counters from what the gateways
/// report:
///  - grants(): the sandbox's bindings, their placeholders and the values, read from the vault
///    at that moment (nothing is cached: airlockd holds a value only while it is sent);
///  - a binding added or removed, or a secret replaced or deleted → the running gateways
///    concerned get their new set at once (SandboxService::refreshCredentials);
///  - an egress event with a `binding` → injection count and last use (verdict allowed) or
///    denied attempts (denied), only when the binding belongs to the sandbox that reported it
///    (a gateway is parsing hostile traffic and is not trusted to name another's binding).
class CredentialBroker : public QObject
{
    Q_OBJECT
public:
    /// `vault` returns the opened vault or null (unavailable: bindings are still handed over,
    /// without values). All references must outlive the broker.
    CredentialBroker(std::function<vault::SecretVault *()> vault, BindingStore &bindings,
                     SandboxService &sandboxes, QObject *parent = nullptr);

    /// Connects the API's change signals (bindingsChanged, secretChanged) to the gateways.
    void watch(CredentialApi &api);

    /// The credentials of `sandbox`'s gateway, ordered by binding id. A secret the vault
    /// cannot read is handed over without a value (logged, never its value).
    QList<GatewayCredentialGrant> grants(const QString &sandbox) const;

    /// Counts what one egress event of `sandbox` says about a binding (see the class comment).
    void recordEvent(const QString &sandbox, const QJsonObject &event);

    /// Pushes new credentials to `sandbox`'s running gateway.
    void refreshSandbox(const QString &sandbox);
    /// Pushes new credentials to every running gateway whose sandbox binds `secret`.
    void refreshSecret(const QString &secret);

private:
    std::function<vault::SecretVault *()> m_vault;
    BindingStore &m_bindings;
    SandboxService &m_sandboxes;
};

} // namespace airlock
