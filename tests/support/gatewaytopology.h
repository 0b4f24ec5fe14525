#pragma once

#include "gatewayprocess.h"
#include "guestclient.h"
#include "helperprocess.h"
#include "netns.h"
#include "recordingserver.h"
#include "testca.h"
#include "testdnsauthority.h"

#include <QHostAddress>
#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>
#include <utility>

namespace airlock::test {

/// Addresses and names of the gateway topology (docs/redteam.md draws it).
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
inline const QHostAddress UpstreamUplink {QStringLiteral("198.51.100.2")}; ///< its peer
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

/// The network of every test that puts the real airlock-gateway between a guest and upstream
/// servers, built from real parts (docs/redteam.md):
///
/// - "upstream" namespace (`alt-<tag>-u-<pid>`): the test's "internet" on 198.51.100.0/24
///   (TEST-NET-2, RFC 5737): the Options::servers (RecordingServer: HTTPS under a test CA
///   whose leaves follow the SNI, HTTP, raw TCP, UDP) on the addresses of Options::hosts, and
///   the test DNS authority on 198.51.100.53:53 answering Options::hosts and Options::records.
/// - the "host" side, joined to upstream by the veth `up0` (198.51.100.1/24):
///   - Side::Gateway: namespace `alt-<tag>-h-<pid>` with the sandbox link's host end
///     `al-redteam` (GW 100.96.0.1/30, 2001:db8:1::1/64, fe80::1) and the sandbox's real
///     nftables tables (NftablesTable::load), the test's own airlock-gateway (gateway()), IP
///     forwarding on (so a missing drop would really leak), and Options::hostTraps (host
///     services a guest must never reach); plus a "guest" namespace `alt-<tag>-g-<pid>`
///     (`eth0` with the guest's MAC and address, default route via GW, IPv6 for F1) where the
///     test's clients run (resolve(), connect(), tls(), curl());
///   - Side::Helper: a real airlockd (helper(), HelperProcess: a namespace of its own, its
///     taps, tables, gateways and QEMU guests) started with `--upstream-dns 198.51.100.53:53`
///     and `--upstream-ca` (the test CA).
///
/// No namespace has a default route to the machine's network: nothing leaves. Every namespace
/// (and with it every device and table) is deleted by tearDown() and the destructor, also after
/// a start() that failed half-way; namespaces of crashed runs are removed at the next start.
///
///     GatewayTopology net(GatewayTopology::Options {
///         .tag = u"e"_s, .side = GatewayTopology::Side::Helper,
///         .hosts = {{u"pkg.test"_s, topo::PkgServer}},
///         .servers = {{u"pkg"_s, topo::PkgServer, 80, ServerEndpoint::Kind::Http, {},
///                      ServerEndpoint::Answer::Hello}}});
///     QVERIFY2(net.start(), qPrintable(net.lastError()));
///     RpcTestClient client(net.helper().socketPath());
///
/// "Nothing arrived" is asserted after settle(), a barrier, never after a pause.
class GatewayTopology final
{
public:
    enum class Side {
        Gateway, ///< host and guest namespaces, the sandbox's table, the test's own gateway
        Helper, ///< a real airlockd and its guests on the host side
    };

    struct Options
    {
        /// Names the namespaces `alt-<tag>-<h|g|u>-<pid>` (leftovers of dead pids are removed
        /// first): one tag per test binary.
        QString tag = QStringLiteral("rt");
        Side side = Side::Gateway;
        /// Names the DNS authority answers with an A record; each address is assigned in the
        /// upstream namespace.
        QList<std::pair<QString, QHostAddress>> hosts;
        /// Further records of the authority (TestDnsAuthority::setRecords: wildcards, AAAA, ...).
        QList<std::pair<QString, QStringList>> records;
        /// The upstream servers (their addresses are assigned in the upstream namespace).
        QList<ServerEndpoint> servers;
        /// Side::Gateway: servers in the host namespace that nothing may reach.
        QList<ServerEndpoint> hostTraps;
        /// Side::Gateway: the gateway's first policy.
        QJsonObject policy;
        /// Side::Gateway: replaces the gateway config's `limits` when not empty.
        QJsonObject limits;
        /// Side::Helper: further airlockd arguments (e.g. {"--log-level", "trace"}).
        QStringList helperArguments;
    };

    /// The red-team topology: every server, trap, record and the policy docs/redteam.md lists.
    static Options redteam();
    /// The red-team policy: pkg.test:443, api.test:443, http.test:80, *.wild.test:443.
    static QJsonObject redteamPolicy();

    /// Nothing is built yet; with Side::Helper the helper exists (not started), so the test may
    /// still configure helper() (setImageStore(), setOutputFile()...).
    explicit GatewayTopology(Options options = redteam());
    ~GatewayTopology();
    GatewayTopology(const GatewayTopology &) = delete;
    GatewayTopology &operator=(const GatewayTopology &) = delete;

    /// Builds everything and, with Side::Gateway, waits for the gateway's `ready`. False, with
    /// lastError() set, at the first step that fails. Needs root.
    bool start();
    QString lastError() const { return m_lastError; }
    /// Stops the gateway or airlockd, the servers, and deletes the namespaces (idempotent).
    void tearDown();

    int hostNs() const;
    int guestNs() const { return m_guest ? m_guest->fd() : -1; }
    int upstreamNs() const { return m_upstream ? m_upstream->fd() : -1; }

    RecordingServer &upstream() { return *m_upstreamServers; }
    RecordingServer &hostTraps() { return *m_hostTraps; }
    TestDnsAuthority &dns() { return *m_dns; }
    GatewayProcess &gateway() { return m_gateway; }
    HelperProcess &helper() { return *m_helper; }
    /// The test CA that signs the upstream servers' leaves (the gateway's trust store).
    TestCa &upstreamCa() { return *m_testCa; }

    /// The sandbox CA certificate (what the guest's trust store holds) and its file
    /// (Side::Gateway).
    QByteArray sandboxCaPem() const { return m_sandboxCaPem; }
    QString sandboxCaFile() const;
    /// The config the topology's gateway started with (type "config"), for further gateways
    /// of a test (Side::Gateway).
    QJsonObject gatewayConfig() const { return m_gatewayConfig; }
    /// A path in the topology's temporary directory (logs of a test's own gateways).
    QString filePath(const QString &name) const { return m_dir.filePath(name); }

    /// Sends a `policy` message; the caller checks it took effect (e.g. by a DNS answer).
    bool setPolicy(const QJsonObject &policy);
    /// Sends a `policy` message and waits for the gateway's `applied` answer to it (the
    /// gateway answers its control messages in order; answers that arrived before are
    /// skipped first). False when it is refused or unanswered within 3 s.
    bool applyPolicy(const QJsonObject &policy);

    /// Starts a test function's observation window: forgets server records, DNS queries and
    /// earlier events.
    void resetObservations();
    /// The barrier before "nothing arrived": settle() of the upstream servers, the DNS
    /// authority and the host traps. Whatever the host side sent them before is recorded when
    /// it returns true (see RecordingServer::settle()).
    bool settle();

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
    /// Connections the kernel completed on the TCP listener of `port` in the host namespace
    /// that its owner (the gateway) has not accepted yet (/proc/net/tcp, a listener's rx
    /// queue); -1 when no such listener exists.
    int pendingAccepts(quint16 port) const;
    /// The MAC of the host end of the sandbox link (for raw frames from the guest).
    QByteArray hostMac() const { return m_hostMac; }

private:
    bool fail(const QString &error);
    bool buildGatewaySide();
    bool buildUpstream();
    bool startServers();
    bool startGateway();

    Options m_options;
    QTemporaryDir m_dir; ///< CA files and logs; outlives the helper (declared before it)
    std::unique_ptr<TestCa> m_testCa;
    std::unique_ptr<HelperProcess> m_helper;
    int m_helperNsFd = -1;
    std::optional<NetworkNamespace> m_host;
    std::optional<NetworkNamespace> m_guest;
    std::optional<NetworkNamespace> m_upstream;
    QByteArray m_sandboxCaPem;
    QJsonObject m_gatewayConfig;
    std::unique_ptr<RecordingServer> m_upstreamServers;
    std::unique_ptr<RecordingServer> m_hostTraps;
    std::unique_ptr<TestDnsAuthority> m_dns;
    GatewayProcess m_gateway;
    QByteArray m_hostMac;
    QString m_lastError;
};

} // namespace airlock::test
