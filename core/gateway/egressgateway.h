#pragma once

#include "core/gateway/dns/dnsnamemapping.h"
#include "core/gateway/dns/dnsresponder.h"
#include "core/gateway/gatewayconfig.h"
#include "core/gateway/gatewayconnection.h"
#include "core/gateway/tls/tlsservercontext.h"
#include "core/gateway/tls/tlsupstreamcontext.h"
#include "core/model/egressevent.h"
#include "core/model/error.h"
#include "core/pki/sandboxca.h"
#include "core/policy/policymatcher.h"

#include <QObject>
#include <QSet>

#include <memory>
#include <optional>

namespace airlock::gateway {

class DnsServer;
class DnsUpstreamResolver;
class TransparentListener;

/// One sandbox's egress gateway (docs/gateway.md): the DNS server, the transparent TCP
/// listener and its connections, built from a GatewayConfig. Every decision is emitted as
/// egress(). Single-threaded on the Qt event loop.
class EgressGateway final : public QObject
{
    Q_OBJECT
public:
    /// Builds every part (CA, TLS contexts, policy, name mapping, resolver) without touching a
    /// socket. Errors name the part: an invalid CA, trust store or policy.
    static Result<std::unique_ptr<EgressGateway>> create(const GatewayConfig &config);
    ~EgressGateway() override;

    /// Binds or adopts the listeners of the config and starts serving.
    Result<void> start();
    /// The transparent listener's port and the DNS port (after start()).
    quint16 tcpPort() const;
    quint16 dnsPort() const;

    /// Replaces the policy atomically: new connections, the next DNS query and the next request
    /// of every open connection use it; an open connection whose name, port or tunnel it no
    /// longer allows is closed before this returns (GatewayConnection::applyPolicy, event
    /// `policy_revoked`). The error is the validation error; the old policy then stays.
    Result<void> setPolicy(const EgressPolicy &policy);
    const policy::PolicyMatcher &policy() const { return m_policy; }
    /// Values a gateway keeps scrubbing after they left its credentials.
    static constexpr int kMaxRetiredValues = 32;

    /// Replaces the sandbox's credentials whole (docs/credentials.md): the next request of any
    /// connection is decided with the new set; requests already decided keep theirs until
    /// their response ends. An empty list removes every credential. Values that were in the
    /// previous set and are not in the new one (rotated, binding removed) are kept scrub-only
    /// for the gateway's lifetime, the newest kMaxRetiredValues
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f7: an upstream may still return them, and
    /// the provider may still accept them).
    void setCredentials(QList<GatewayCredential> credentials);
    /// Drops every value of `secret` the gateway holds, current or scrub-only (the secret was
    /// deleted from the vault: issue 16 asks that its value leave the gateway's memory). The
    /// SecretValues wipe themselves once the last request that used them has ended. Returns how
    /// many values were dropped.
    qsizetype forgetSecret(const QString &secret);
    qsizetype credentialCount() const;
    const QString &sandbox() const { return m_config.sandbox; }
    /// Guest connections open now.
    qsizetype connectionCount() const { return m_connections.size(); }

Q_SIGNALS:
    void egress(const airlock::EgressEvent &event);

private:
    EgressGateway(const GatewayConfig &config, pki::SandboxCa ca, policy::PolicyMatcher policy,
                  DnsNameMapping mapping, TlsUpstreamContext upstream);
    void onAccepted(int fd, const OriginalDestination &destination);
    void onDnsDecided(const DnsEvent &event);

    GatewayConfig m_config;
    pki::SandboxCa m_ca;
    policy::PolicyMatcher m_policy;
    DnsNameMapping m_mapping;
    TlsUpstreamContext m_tlsUpstream;
    std::optional<TlsServerContext> m_tlsServer;
    DnsResponder m_responder;
    DnsUpstreamResolver *m_resolver = nullptr;
    DnsServer *m_dns = nullptr;
    TransparentListener *m_listener = nullptr;
    GatewayEnvironment m_env;
    QSet<GatewayConnection *> m_connections;
};

/// The conventional mnemonic of a DNS RR type (RFC 1035, 3596, 9460), or "TYPE<n>" (RFC 3597).
QString dnsTypeName(quint16 type);

} // namespace airlock::gateway
