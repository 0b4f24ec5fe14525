#pragma once

#include "core/gateway/dns/addressrange.h"
#include "core/gateway/tls/tlsupstreamcontext.h"
#include "core/model/egresspolicy.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QHostAddress>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace airlock::gateway {

/// An IPv4 address and port written "a.b.c.d:port" (listen addresses in the config message).
struct SocketAddress
{
    QHostAddress address;
    quint16 port = 0;

    /// Parses "a.b.c.d:port" (port 0..65535; 0 lets the kernel choose). InvalidParams naming
    /// `field` otherwise.
    static Result<SocketAddress> parse(const QString &text, const QString &field);
    QString toString() const;
};

/// Where the gateway listens: sockets inherited from airlockd (fd numbers) or addresses it
/// binds itself (tests without airlockd). docs/gateway.md, "Process".
struct GatewayListen
{
    // Inherited: all three fds, already bound (the TCP ones may already listen).
    std::optional<int> tcpFd;
    std::optional<int> dnsUdpFd;
    std::optional<int> dnsTcpFd;
    // Or bound by the gateway: the transparent TCP listener, and DNS UDP + TCP on one port.
    std::optional<SocketAddress> tcp;
    std::optional<SocketAddress> dns;
};

/// The sandbox link (a /30 or so between the host's tap and the guest).
struct GatewayLink
{
    QHostAddress gateway;
    QHostAddress guest;
    int prefixLength = 30;
};

/// Resource limits per gateway.
struct GatewayLimits
{
    int maxConnections = 1024; ///< guest TCP connections at once; more are closed on accept
    int idleTimeoutMs = 60000; ///< a connection with no traffic either way this long is closed
    int maxHeaderBytes = 64 * 1024; ///< request line and fields (HttpRequestGuard, 431 above)
};

/// The first control message, `{"type":"config",...}`, validated (docs/gateway.md).
struct GatewayConfig
{
    static constexpr int kVersion = 1;

    QString sandbox;
    GatewayListen listen;
    GatewayLink link;
    quint16 explicitProxyPort = 3128;
    AddressRange syntheticPool;
    QHostAddress upstreamDnsAddress;
    quint16 upstreamDnsPort = 53;
    int upstreamDnsTimeoutMs = 2000;
    RefusedRanges refusedRanges = RefusedRanges::defaults(); ///< without the link (added later)
    /// Refuse the addresses of the host's own interfaces too (HostAddresses); false only for
    /// tests whose upstream servers listen on the gateway's own host.
    bool refuseHostAddresses = true;
    TlsTrustStore trustStore; ///< empty: the system store
    QByteArray caCertificatePem;
    QByteArray caKeyPem; ///< secret: never logged, cleansed after use
    EgressPolicy policy;
    GatewayLimits limits;

    /// The link prefix (gateway address / prefixLength), refused as an upstream destination.
    AddressRange linkRange() const;

    /// Reads and validates a config message (the "type" key is checked by the caller and
    /// skipped here). Unknown keys anywhere are errors. Errors are InvalidParams
    /// "field 'a.b': why" naming the dotted path of the offending field.
    static Result<GatewayConfig> fromJson(const QJsonObject &object);

    GatewayConfig() : syntheticPool(*AddressRange::parse(u"100.112.0.0/16")) { }
};

} // namespace airlock::gateway
