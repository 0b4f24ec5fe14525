#include "core/gateway/egressgateway.h"

#include <algorithm>

#include "core/gateway/dns/dnsserver.h"
#include "core/gateway/dns/dnsupstreamresolver.h"
#include "core/gateway/transparentlistener.h"

#include <openssl/crypto.h>

#include <sys/socket.h>
#include <unistd.h>

#include <QTimer>
#include <malloc.h>

namespace airlock::gateway {

QString dnsTypeName(quint16 type)
{
    switch (type) {
    case 1:
        return QStringLiteral("A");
    case 2:
        return QStringLiteral("NS");
    case 5:
        return QStringLiteral("CNAME");
    case 6:
        return QStringLiteral("SOA");
    case 12:
        return QStringLiteral("PTR");
    case 15:
        return QStringLiteral("MX");
    case 16:
        return QStringLiteral("TXT");
    case 28:
        return QStringLiteral("AAAA");
    case 33:
        return QStringLiteral("SRV");
    case 64:
        return QStringLiteral("SVCB");
    case 65:
        return QStringLiteral("HTTPS");
    case 255:
        return QStringLiteral("ANY");
    default:
        return QStringLiteral("TYPE%1").arg(type);
    }
}

Result<std::unique_ptr<EgressGateway>> EgressGateway::create(const GatewayConfig &config)
{
    QByteArray keyPem = config.caKeyPem;
    auto ca = pki::SandboxCa::fromPem(config.caCertificatePem, keyPem);
    OPENSSL_cleanse(keyPem.data(), size_t(keyPem.size()));
    if (!ca)
        return fail(ca.error().kind, QStringLiteral("ca: %1").arg(ca.error().message));
    auto policy = policy::PolicyMatcher::create(config.policy);
    if (!policy)
        return fail(policy.error().kind, QStringLiteral("policy: %1").arg(policy.error().message));
    auto mapping = DnsNameMapping::create(config.syntheticPool);
    if (!mapping)
        return fail(mapping.error().kind,
                    QStringLiteral("syntheticPool: %1").arg(mapping.error().message));
    if (config.syntheticPool.contains(config.link.gateway))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("syntheticPool: overlaps the sandbox link"));
    auto upstream = TlsUpstreamContext::create(config.trustStore);
    if (!upstream)
        return fail(upstream.error().kind,
                    QStringLiteral("trustStore: %1").arg(upstream.error().message));
    std::unique_ptr<EgressGateway> gateway(new EgressGateway(
        config, std::move(*ca), std::move(*policy), std::move(*mapping), std::move(*upstream)));
    EgressGateway *self = gateway.get();
    auto server =
        TlsServerContext::create(&gateway->m_ca, [self](const QString &host, quint16 port) {
            return self->m_policy.checkConnection(host, port);
        });
    if (!server)
        return fail(server.error().kind,
                    QStringLiteral("TLS server: %1").arg(server.error().message));
    gateway->m_tlsServer.emplace(std::move(*server));
    gateway->m_env.tlsServer = &*gateway->m_tlsServer;
    return gateway;
}

EgressGateway::EgressGateway(const GatewayConfig &config, pki::SandboxCa ca,
                             policy::PolicyMatcher policy, DnsNameMapping mapping,
                             TlsUpstreamContext upstream)
    : m_config(config)
    , m_ca(std::move(ca))
    , m_policy(std::move(policy))
    , m_mapping(std::move(mapping))
    , m_tlsUpstream(std::move(upstream))
    , m_responder(m_policy, &m_mapping)
{
    OPENSSL_cleanse(m_config.caKeyPem.data(), size_t(m_config.caKeyPem.size()));
    m_config.caKeyPem.clear();

    RefusedRanges refused = config.refusedRanges;
    refused.add(config.linkRange());
    refused.setRefuseHostAddresses(config.refuseHostAddresses);
    DnsUpstreamConfig dns;
    dns.address = config.upstreamDnsAddress;
    dns.port = config.upstreamDnsPort;
    dns.timeoutMs = config.upstreamDnsTimeoutMs;
    dns.refused = refused;
    m_resolver = new DnsUpstreamResolver(dns, this);
    m_dns = new DnsServer(&m_responder, m_resolver, this);
    connect(m_dns, &DnsServer::decided, this, &EgressGateway::onDnsDecided);
    m_listener = new TransparentListener(this);
    connect(m_listener, &TransparentListener::accepted, this, &EgressGateway::onAccepted);

    m_env.sandbox = config.sandbox;
    m_env.linkGateway = config.link.gateway;
    m_env.explicitProxyPort = config.explicitProxyPort;
    m_env.limits = config.limits;
    m_env.tlsUpstream = &m_tlsUpstream;
    m_env.resolver = m_resolver;
    m_env.mapping = &m_mapping;
    m_env.refused = refused;
    m_env.emitEvent = [this](const EgressEvent &event) { Q_EMIT egress(event); };
}

EgressGateway::~EgressGateway()
{
    // Connections reference the environment and the TLS contexts: delete them first.
    const auto connections = m_connections;
    for (GatewayConnection *connection : connections)
        delete connection;
    m_connections.clear();
}

Result<void> EgressGateway::start()
{
    const GatewayListen &where = m_config.listen;
    if (where.tcpFd) {
        if (auto adopted = m_listener->adopt(*where.tcpFd); !adopted)
            return fail(adopted.error().kind,
                        QStringLiteral("listen.tcpFd: %1").arg(adopted.error().message));
        if (auto udp = m_dns->adoptUdpSocket(*where.dnsUdpFd); !udp)
            return fail(udp.error().kind,
                        QStringLiteral("listen.dnsUdpFd: %1").arg(udp.error().message));
        // QTcpServer takes a listening socket; an inherited one may only be bound.
        ::listen(*where.dnsTcpFd, 64);
        if (auto tcp = m_dns->adoptTcpSocket(*where.dnsTcpFd); !tcp)
            return fail(tcp.error().kind,
                        QStringLiteral("listen.dnsTcpFd: %1").arg(tcp.error().message));
        return {};
    }
    if (auto bound = m_listener->bind(*where.tcp); !bound)
        return fail(bound.error().kind,
                    QStringLiteral("listen.tcp: %1").arg(bound.error().message));
    if (auto dns = m_dns->listen(where.dns->address, where.dns->port); !dns)
        return fail(dns.error().kind, QStringLiteral("listen.dns: %1").arg(dns.error().message));
    return {};
}

quint16 EgressGateway::tcpPort() const
{
    return m_listener->port();
}

quint16 EgressGateway::dnsPort() const
{
    return m_dns->udpPort();
}

Result<void> EgressGateway::setPolicy(const EgressPolicy &policy)
{
    auto matcher = policy::PolicyMatcher::create(policy);
    AIRLOCK_TRY(matcher);
    m_policy = *matcher;
    m_responder.setPolicy(*matcher);
    // Open connections too: taking access away must reach an agent that keeps one open.
    const QSet<GatewayConnection *> open = m_connections;
    for (GatewayConnection *connection : open)
        connection->applyPolicy(m_policy);
    return {};
}

void EgressGateway::setCredentials(QList<GatewayCredential> credentials)
{
    auto current = [&](const GatewayCredential &old) {
        return std::any_of(credentials.cbegin(), credentials.cend(),
                           [&](const GatewayCredential &c) {
                               return c.value && c.value->equals(old.value->reveal());
                           });
    };
    // Values that leave (rotated, or their binding removed) stay scrub-only, newest last.
    QList<GatewayCredential> retired;
    if (m_env.credentials) {
        retired = m_env.credentials->retired();
        for (const GatewayCredential &old : m_env.credentials->credentials()) {
            if (old.value && !old.value->isEmpty())
                retired.append(old);
        }
    }
    QList<GatewayCredential> kept;
    for (auto it = retired.crbegin(); it != retired.crend(); ++it) {
        const bool duplicate = std::any_of(kept.cbegin(), kept.cend(), [&](const auto &k) {
            return k.value->equals(it->value->reveal());
        });
        if (!duplicate && !current(*it) && kept.size() < kMaxRetiredValues)
            kept.prepend(*it);
    }
    m_env.credentials = credentials.isEmpty() && kept.isEmpty()
        ? nullptr
        : std::make_shared<const CredentialInjector>(std::move(credentials), std::move(kept));
}

qsizetype EgressGateway::forgetSecret(const QString &secret)
{
    if (!m_env.credentials)
        return 0;
    auto others = [&](const QList<GatewayCredential> &from) {
        QList<GatewayCredential> kept;
        for (const GatewayCredential &credential : from) {
            if (credential.secret != secret)
                kept.append(credential);
        }
        return kept;
    };
    QList<GatewayCredential> current = others(m_env.credentials->credentials());
    QList<GatewayCredential> retired = others(m_env.credentials->retired());
    const qsizetype dropped = m_env.credentials->credentials().size() - current.size()
        + m_env.credentials->retired().size() - retired.size();
    if (dropped == 0)
        return 0;
    m_env.credentials = current.isEmpty() && retired.isEmpty()
        ? nullptr
        : std::make_shared<const CredentialInjector>(std::move(current), std::move(retired));
    return dropped;
}

qsizetype EgressGateway::credentialCount() const
{
    return m_env.credentials ? m_env.credentials->credentials().size() : 0;
}

void EgressGateway::onAccepted(int fd, const OriginalDestination &destination)
{
    if (m_connections.size() >= m_config.limits.maxConnections) {
        ::close(fd);
        EgressEvent event;
        event.time = QDateTime::currentDateTimeUtc();
        event.sandbox = m_config.sandbox;
        event.layer = EgressLayer::Tcp;
        event.reason = wireName(EgressReason::TooManyConnections);
        event.detail =
            QStringLiteral("%1 connections are open already").arg(m_config.limits.maxConnections);
        event.destination = destination.address.toString();
        event.port = destination.port;
        Q_EMIT egress(event);
        return;
    }
    auto connection = new GatewayConnection(&m_env, m_policy, fd, destination, this);
    m_connections.insert(connection);
    connect(connection, &GatewayConnection::finished, this, [this, connection] {
        m_connections.remove(connection);
        connection->deleteLater();
        // The last connection gone: hand the heap's free pages back to the kernel. glibc keeps
        // what a burst of connections freed (TLS state, 64 KiB read buffers) fragmented in the
        // heap, so without this the gateway stays at its peak RSS for good (bench_gateway: 110
        // MiB after 512 connections closed, 21 MiB with it). Deferred past the deleteLater()s.
        if (m_connections.isEmpty())
            QTimer::singleShot(100, this, [this] {
                if (m_connections.isEmpty())
                    ::malloc_trim(0);
            });
    });
    connection->start();
}

void EgressGateway::onDnsDecided(const DnsEvent &dns)
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.sandbox = m_config.sandbox;
    event.layer = EgressLayer::Dns;
    event.allowed = dns.verdict == DnsVerdict::Answer || dns.verdict == DnsVerdict::NoData;
    event.reason = wireName(dns.reason);
    event.detail = dns.detail;
    event.name = dns.name;
    if (dns.type != 0)
        event.dnsType = dnsTypeName(dns.type);
    Q_EMIT egress(event);
}

} // namespace airlock::gateway
