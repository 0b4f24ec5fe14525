#pragma once

#include "gatewayprocess.h"
#include "guestclient.h"
#include "netns.h"
#include "recordingserver.h"
#include "testca.h"
#include "testdnsauthority.h"

#include <QHostAddress>
#include <QJsonObject>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace airlock::redteam {

/// Addresses and names of the red-team topology (docs/redteam.md draws it).
namespace topo {
inline const QString Sandbox = QStringLiteral("redteam");
inline const QString HostIf = QStringLiteral("al-redteam"); ///< host end of the sandbox link
inline const QString GuestIf = QStringLiteral("eth0");
inline const QString UplinkIf = QStringLiteral("up0"); ///< host ↔ upstream veth, both ends
inline const QString GuestMac = QStringLiteral("02:61:6c:00:00:00");
inline const QHostAddress Gateway {QStringLiteral("100.96.0.1")}; ///< GW
inline const QHostAddress Guest {QStringLiteral("100.96.0.2")}; ///< GUEST
inline const QHostAddress OtherSandbox {QStringLiteral("100.96.0.6")};
inline const QHostAddress HostUplink {QStringLiteral("198.51.100.1")}; ///< host's "internet" side
inline const QHostAddress PkgServer {QStringLiteral("198.51.100.10")}; ///< pkg.test = tenant.test
inline const QHostAddress ApiServer {QStringLiteral("198.51.100.20")}; ///< api.test
inline const QHostAddress DnsServer {QStringLiteral("198.51.100.53")}; ///< test authority
inline const QHostAddress EvilServer {QStringLiteral("198.51.100.66")}; ///< evil.test
inline const QHostAddress HostV6 {QStringLiteral("2001:db8:1::1")}; ///< host end, IPv6 (F1)
inline const QHostAddress GuestV6 {QStringLiteral("2001:db8:1::2")};
constexpr quint16 GatewayTcpPort = 15001;
constexpr quint16 GatewayDnsPort = 15053;
constexpr quint16 ExplicitProxyPort = 3128;
} // namespace topo

/// One red-team topology per test binary (initTestCase/cleanupTestCase), built from real
/// parts (docs/redteam-cases.md: every case runs from a guest network namespace against real local
/// servers):
///
/// - "host" namespace (`alt-rt-h-<pid>`): lo, the sandbox link's host end `al-redteam`
///   (GW 100.96.0.1/30, 2001:db8:1::1/64, fe80::1) with the sandbox's real nftables tables
///   (NftablesTable::load), the real airlock-gateway process, an uplink veth to "upstream"
///   (198.51.100.1/24), IP forwarding on (so a missing drop would really leak), and trap
///   servers on every host port a guest must never reach (TCP 22/80/443/8443 on 0.0.0.0 and
///   ::, UDP 53/5353; metadata addresses on lo). No default route: nothing leaves the machine.
/// - "guest" namespace (`alt-rt-g-<pid>`): `eth0` with the guest's MAC and address, default
///   route via GW, plus IPv6 addresses for F1. Test clients run here (curl, openssl, raw).
/// - "upstream" namespace (`alt-rt-u-<pid>`): HTTPS/HTTP/raw recording servers for pkg.test
///   (and tenant.test, same address: a shared CDN, certificate by SNI), api.test and evil.test
///   under a test CA; the test authoritative DNS server for *.test.
///
/// Every namespace (and with it every device and table) is deleted by the destructor, also
/// when a test fails; namespaces of crashed runs are removed at the next start.
class RedteamTopology final
{
public:
    RedteamTopology() = default;
    ~RedteamTopology();

    /// Builds everything and waits for the gateway's `ready`; false with `error` on failure.
    bool setUp(QString *error);
    void tearDown();

    int hostNs() const { return m_host->fd(); }
    int guestNs() const { return m_guest->fd(); }
    int upstreamNs() const { return m_upstream->fd(); }

    RecordingServer &upstream() { return *m_upstreamServers; }
    RecordingServer &hostTraps() { return *m_hostTraps; }
    TestDnsAuthority &dns() { return *m_dns; }
    GatewayProcess &gateway() { return m_gateway; }

    /// The sandbox CA certificate (what the guest's trust store holds) and its file.
    QByteArray sandboxCaPem() const { return m_sandboxCaPem; }
    QString sandboxCaFile() const;

    /// The policy the gateway starts with: pkg.test:443, api.test:443, http.test:80,
    /// *.wild.test:443 (docs/redteam.md).
    static QJsonObject basePolicy();
    /// Sends a `policy` message; the caller checks it took effect (e.g. by a DNS answer).
    bool setPolicy(const QJsonObject &policy);

    /// Starts a test function's observation window: forgets server records, DNS queries and
    /// earlier events.
    void resetObservations();

    /// The guest's DNS answer for `name` A from GW (port 53, redirected to the gateway).
    DnsResult resolve(const QString &name, quint16 type = 1);
    /// The first address of resolve(name), null when refused or unanswered.
    QHostAddress resolveAddress(const QString &name);

    /// A TCP connection from the guest.
    std::unique_ptr<GuestConnection> connect(const QHostAddress &address, quint16 port,
                                             int timeoutMs = 3000);
    /// A TLS connection from the guest with `sni` (nullopt: none), verified against the
    /// sandbox CA for `verifyName` when given; nullptr when TCP fails. `*handshake` tells
    /// whether TLS completed (lastError() of the returned connection says why not).
    std::unique_ptr<GuestConnection> tls(const QHostAddress &address, quint16 port,
                                         const std::optional<QByteArray> &sni, bool *handshake,
                                         const QString &verifyName = QString());

    /// curl in the guest with the sandbox CA as its trust store; adds -sS, --max-time.
    CommandResult curl(const QStringList &arguments, int maxTimeSeconds = 8);

    /// Packets of one nftables counter of the sandbox (docs/network.md), read in the host
    /// namespace.
    quint64 counter(const QString &name) const;
    /// The MAC of the host end of the sandbox link (for raw frames from the guest).
    QByteArray hostMac() const { return m_hostMac; }

private:
    bool buildNamespaces(QString *error);
    bool startServers(QString *error);
    bool startGateway(QString *error);

    std::optional<test::NetworkNamespace> m_host;
    std::optional<test::NetworkNamespace> m_guest;
    std::optional<test::NetworkNamespace> m_upstream;
    QTemporaryDir m_dir;
    std::unique_ptr<TestCa> m_testCa;
    QByteArray m_sandboxCaPem;
    std::unique_ptr<RecordingServer> m_upstreamServers;
    std::unique_ptr<RecordingServer> m_hostTraps;
    std::unique_ptr<TestDnsAuthority> m_dns;
    GatewayProcess m_gateway;
    QByteArray m_hostMac;
    bool m_tableLoaded = false;
};

} // namespace airlock::redteam
