#include "redteamtopology.h"

#include "core/net/nftablestable.h"
#include "core/pki/sandboxca.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>

#include <unistd.h>

namespace airlock::redteam {

namespace {

const QString NsPrefix = QStringLiteral("alt-rt-");

QJsonObject rule(const QString &host, const QList<int> &ports)
{
    QJsonArray portArray;
    for (int port : ports)
        portArray.append(port);
    return {{QStringLiteral("host"), host}, {QStringLiteral("ports"), portArray}};
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(bytes) == bytes.size();
}

} // namespace

RedteamTopology::~RedteamTopology()
{
    tearDown();
}

QString RedteamTopology::sandboxCaFile() const
{
    return m_dir.filePath(QStringLiteral("sandbox-ca.pem"));
}

QJsonObject RedteamTopology::basePolicy()
{
    return {{QStringLiteral("version"), 1},
            {QStringLiteral("rules"),
             QJsonArray {rule(QStringLiteral("pkg.test"), {443}),
                         rule(QStringLiteral("api.test"), {443}),
                         rule(QStringLiteral("http.test"), {80}),
                         rule(QStringLiteral("*.wild.test"), {443})}}};
}

bool RedteamTopology::setUp(QString *error)
{
    if (::geteuid() != 0) {
        *error = QStringLiteral("needs root (network namespaces, nftables)");
        return false;
    }
    if (!m_dir.isValid()) {
        *error = QStringLiteral("no temporary directory");
        return false;
    }
    return buildNamespaces(error) && startServers(error) && startGateway(error);
}

bool RedteamTopology::buildNamespaces(QString *error)
{
    test::removeStaleNamespaces(NsPrefix);
    const QString suffix = QString::number(::getpid());
    m_host = test::NetworkNamespace::create(NsPrefix + QStringLiteral("h-") + suffix);
    m_guest = test::NetworkNamespace::create(NsPrefix + QStringLiteral("g-") + suffix);
    m_upstream = test::NetworkNamespace::create(NsPrefix + QStringLiteral("u-") + suffix);
    if (!m_host || !m_guest || !m_upstream) {
        *error = QStringLiteral("cannot create the network namespaces");
        return false;
    }
    const QString h = m_host->name();
    const QString g = m_guest->name();
    const QString u = m_upstream->name();
    const QStringList commands = {
        // The sandbox link: host end named like a tap, guest end eth0.
        QStringLiteral("%1 link add %2 type veth peer name %3 netns %4")
            .arg(h, topo::HostIf, topo::GuestIf, g),
        QStringLiteral("%1 addr add %2/30 dev %3").arg(h, topo::Gateway.toString(), topo::HostIf),
        QStringLiteral("%1 addr add %2/64 dev %3 nodad")
            .arg(h, topo::HostV6.toString(), topo::HostIf),
        QStringLiteral("%1 addr add fe80::1/64 dev %2 nodad").arg(h, topo::HostIf),
        QStringLiteral("%1 link set %2 up").arg(h, topo::HostIf),
        // Metadata addresses and a ULA on the host's lo: a dial to them would hit a trap.
        QStringLiteral("%1 addr add 169.254.169.254/32 dev lo").arg(h),
        QStringLiteral("%1 addr add 169.254.170.2/32 dev lo").arg(h),
        QStringLiteral("%1 addr add 100.100.100.200/32 dev lo").arg(h),
        QStringLiteral("%1 addr add fd00:ec2::254/128 dev lo").arg(h),
        QStringLiteral("%1 addr add fd00::1/128 dev lo").arg(h),
        // The uplink to the upstream namespace ("the internet").
        QStringLiteral("%1 link add %2 type veth peer name %2 netns %3").arg(h, topo::UplinkIf, u),
        QStringLiteral("%1 addr add %2/24 dev %3")
            .arg(h, topo::HostUplink.toString(), topo::UplinkIf),
        QStringLiteral("%1 link set %2 up").arg(h, topo::UplinkIf),
        // Guest: MAC, address, default route via GW, IPv6 for F1.
        QStringLiteral("%1 link set %2 address %3").arg(g, topo::GuestIf, topo::GuestMac),
        QStringLiteral("%1 addr add %2/30 dev %3").arg(g, topo::Guest.toString(), topo::GuestIf),
        QStringLiteral("%1 addr add %2/64 dev %3 nodad")
            .arg(g, topo::GuestV6.toString(), topo::GuestIf),
        QStringLiteral("%1 link set %2 up").arg(g, topo::GuestIf),
        QStringLiteral("%1 route add default via %2").arg(g, topo::Gateway.toString()),
        QStringLiteral("%1 -6 route add default via fe80::1 dev %2").arg(g, topo::GuestIf),
        // Upstream: every server address, and a route back to the sandbox pool, so anything the
        // host forwarded would get an answer (a leak must be visible, not masked by routing).
        QStringLiteral("%1 addr add 198.51.100.2/24 dev %2").arg(u, topo::UplinkIf),
        QStringLiteral("%1 addr add %2/32 dev %3")
            .arg(u, topo::PkgServer.toString(), topo::UplinkIf),
        QStringLiteral("%1 addr add %2/32 dev %3")
            .arg(u, topo::ApiServer.toString(), topo::UplinkIf),
        QStringLiteral("%1 addr add %2/32 dev %3")
            .arg(u, topo::DnsServer.toString(), topo::UplinkIf),
        QStringLiteral("%1 addr add %2/32 dev %3")
            .arg(u, topo::EvilServer.toString(), topo::UplinkIf),
        QStringLiteral("%1 link set %2 up").arg(u, topo::UplinkIf),
        QStringLiteral("%1 route add 100.96.0.0/16 via %2").arg(u, topo::HostUplink.toString()),
    };
    for (const QString &command : commands) {
        if (!test::runIp(QStringList {QStringLiteral("-n")} + command.split(u' '))) {
            *error = QStringLiteral("ip -n %1 failed").arg(command);
            return false;
        }
    }
    // A host that routes (many do: containers, VPNs): forwarding on, so only the table stands
    // between the guest and the upstream namespace.
    for (const QString &sysctl : {QStringLiteral("net.ipv4.ip_forward=1"),
                                  QStringLiteral("net.ipv6.conf.all.forwarding=1")}) {
        QProcess process;
        process.start(QStringLiteral("ip"),
                      {QStringLiteral("netns"), QStringLiteral("exec"), h, QStringLiteral("sysctl"),
                       QStringLiteral("-qw"), sysctl});
        if (!process.waitForFinished(10000) || process.exitCode() != 0) {
            *error = QStringLiteral("sysctl %1 failed").arg(sysctl);
            return false;
        }
    }
    m_hostMac = test::interfaceMac(m_host->fd(), topo::HostIf);

    NftablesSpec spec;
    spec.sandbox = topo::Sandbox;
    spec.ifname = topo::HostIf;
    spec.guestMac = topo::GuestMac;
    spec.guest = topo::Guest;
    spec.gateway = topo::Gateway;
    spec.gatewayTcpPort = topo::GatewayTcpPort;
    spec.gatewayDnsPort = topo::GatewayDnsPort;
    spec.explicitProxyPort = topo::ExplicitProxyPort;
    const auto loaded = test::inNamespace(m_host->fd(), [&] {
        auto result = NftablesTable::load(spec);
        return result ? QString() : result.error().message + QStringLiteral(" ");
    });
    if (!loaded.isEmpty()) {
        *error = QStringLiteral("nftables: ") + loaded;
        return false;
    }
    m_tableLoaded = true;
    return true;
}

bool RedteamTopology::startServers(QString *error)
{
    m_testCa = TestCa::generate(QStringLiteral("Redteam upstream test CA"));
    if (!m_testCa) {
        *error = QStringLiteral("cannot generate the test CA");
        return false;
    }
    using Kind = ServerEndpoint::Kind;
    const QList<ServerEndpoint> upstream = {
        {QStringLiteral("pkg"), topo::PkgServer, 443, Kind::Https, QStringLiteral("pkg.test")},
        {QStringLiteral("pkg"), topo::PkgServer, 80, Kind::Http, QString()},
        {QStringLiteral("pkg"), topo::PkgServer, 8443, Kind::Https, QStringLiteral("pkg.test")},
        {QStringLiteral("pkg"), topo::PkgServer, 22, Kind::Raw, QString()},
        {QStringLiteral("pkg"), topo::PkgServer, 6379, Kind::Raw, QString()},
        {QStringLiteral("api"), topo::ApiServer, 443, Kind::Https, QStringLiteral("api.test")},
        {QStringLiteral("api"), topo::ApiServer, 80, Kind::Http, QString()},
        {QStringLiteral("api"), topo::ApiServer, 8443, Kind::Https, QStringLiteral("api.test")},
        {QStringLiteral("evil"), topo::EvilServer, 443, Kind::Https, QStringLiteral("evil.test")},
        {QStringLiteral("evil"), topo::EvilServer, 80, Kind::Http, QString()},
        {QStringLiteral("evil"), topo::EvilServer, 8443, Kind::Https, QStringLiteral("evil.test")},
        {QStringLiteral("evil"), topo::EvilServer, 22, Kind::Raw, QString()},
        {QStringLiteral("evil"), topo::EvilServer, 853, Kind::Raw, QString()},
        {QStringLiteral("dns-other"), topo::DnsServer, 853, Kind::Raw, QString()},
        {QStringLiteral("dns-other"), topo::DnsServer, 853, Kind::Udp, QString()},
        {QStringLiteral("evil"), topo::EvilServer, 53, Kind::Udp, QString()},
        {QStringLiteral("evil"), topo::EvilServer, 53, Kind::Raw, QString()},
    };
    m_upstreamServers = std::make_unique<RecordingServer>(m_upstream->fd(), m_testCa.get());
    if (!m_upstreamServers->start(upstream)) {
        *error = QStringLiteral("cannot start the upstream servers");
        return false;
    }
    // Traps: host services the guest must never reach (F4, D2), and what the gateway must
    // never dial (E6 rebinding to loopback, GW, metadata, ULA).
    QList<ServerEndpoint> traps;
    const QHostAddress any4(QHostAddress::AnyIPv4);
    const QHostAddress any6(QHostAddress::AnyIPv6);
    for (quint16 port : {quint16(22), quint16(80), quint16(443), quint16(8443)}) {
        traps.append({QStringLiteral("host-trap"), any4, port, Kind::Raw, QString()});
        traps.append({QStringLiteral("host-trap"), any6, port, Kind::Raw, QString()});
    }
    for (quint16 port : {quint16(53), quint16(5353)}) {
        traps.append({QStringLiteral("host-trap"), any4, port, Kind::Udp, QString()});
        traps.append({QStringLiteral("host-trap"), any6, port, Kind::Udp, QString()});
    }
    traps.append({QStringLiteral("host-trap"), any4, 53, Kind::Raw, QString()});
    m_hostTraps = std::make_unique<RecordingServer>(m_host->fd(), nullptr);
    if (!m_hostTraps->start(traps)) {
        *error = QStringLiteral("cannot start the host traps");
        return false;
    }

    m_dns = std::make_unique<TestDnsAuthority>(m_upstream->fd());
    const QString pkg = QStringLiteral("A ") + topo::PkgServer.toString();
    const QString evil = QStringLiteral("A ") + topo::EvilServer.toString();
    m_dns->setRecords(QStringLiteral("pkg.test"), {pkg});
    m_dns->setRecords(QStringLiteral("*.pkg.test"), {pkg});
    m_dns->setRecords(QStringLiteral("tenant.test"), {pkg});
    m_dns->setRecords(QStringLiteral("http.test"), {pkg});
    m_dns->setRecords(QStringLiteral("api.test"),
                      {QStringLiteral("A ") + topo::ApiServer.toString()});
    m_dns->setRecords(QStringLiteral("evil.test"), {evil});
    m_dns->setRecords(QStringLiteral("*.evil.test"), {evil});
    m_dns->setRecords(QStringLiteral("*.wild.test"), {pkg});
    // E6: names under the allowed wildcard that the authority points inside.
    m_dns->setRecords(QStringLiteral("lo.wild.test"), {QStringLiteral("A 127.0.0.1")});
    m_dns->setRecords(QStringLiteral("meta.wild.test"), {QStringLiteral("A 169.254.169.254")});
    m_dns->setRecords(QStringLiteral("gw.wild.test"),
                      {QStringLiteral("A ") + topo::Gateway.toString()});
    m_dns->setRecords(QStringLiteral("v6lo.wild.test"), {pkg, QStringLiteral("AAAA ::1")});
    m_dns->setRecords(QStringLiteral("ula.wild.test"), {pkg, QStringLiteral("AAAA fd00::1")});
    m_dns->setRecords(QStringLiteral("mapped.wild.test"),
                      {pkg, QStringLiteral("AAAA ::ffff:127.0.0.1")});
    if (!m_dns->start(topo::DnsServer, 53)) {
        *error = QStringLiteral("cannot start the test DNS authority");
        return false;
    }
    return true;
}

bool RedteamTopology::startGateway(QString *error)
{
    auto sandboxCa = airlock::pki::SandboxCa::generate(topo::Sandbox);
    if (!sandboxCa) {
        *error = sandboxCa.error().message;
        return false;
    }
    const QString certificatePath = sandboxCaFile();
    const QString keyPath = m_dir.filePath(QStringLiteral("sandbox-ca.key"));
    if (auto saved = sandboxCa->save(certificatePath, keyPath); !saved) {
        *error = saved.error().message;
        return false;
    }
    m_sandboxCaPem = sandboxCa->certificatePem();
    QFile keyFile(keyPath);
    if (!keyFile.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read the sandbox CA key");
        return false;
    }
    const QByteArray keyPem = keyFile.readAll();
    const QString trustFile = m_dir.filePath(QStringLiteral("upstream-ca.pem"));
    if (!writeFile(trustFile, m_testCa->certificatePem())) {
        *error = QStringLiteral("cannot write the upstream trust store");
        return false;
    }

    const QString gw = topo::Gateway.toString();
    QJsonObject config {
        {QStringLiteral("version"), 1},
        {QStringLiteral("sandbox"), topo::Sandbox},
        {QStringLiteral("listen"),
         QJsonObject {{QStringLiteral("tcp"), gw + u':' + QString::number(topo::GatewayTcpPort)},
                      {QStringLiteral("dns"), gw + u':' + QString::number(topo::GatewayDnsPort)}}},
        {QStringLiteral("link"),
         QJsonObject {{QStringLiteral("gateway"), gw},
                      {QStringLiteral("guest"), topo::Guest.toString()},
                      {QStringLiteral("prefixLength"), 30}}},
        {QStringLiteral("explicitProxyPort"), topo::ExplicitProxyPort},
        {QStringLiteral("syntheticPool"), QStringLiteral("100.112.0.0/16")},
        {QStringLiteral("upstreamDns"),
         QJsonObject {{QStringLiteral("address"), topo::DnsServer.toString()},
                      {QStringLiteral("port"), 53},
                      {QStringLiteral("timeoutMs"), 2000}}},
        {QStringLiteral("trustStore"), QJsonObject {{QStringLiteral("caFile"), trustFile}}},
        {QStringLiteral("ca"),
         QJsonObject {{QStringLiteral("certificatePem"), QString::fromLatin1(m_sandboxCaPem)},
                      {QStringLiteral("keyPem"), QString::fromLatin1(keyPem)}}},
        {QStringLiteral("policy"), basePolicy()},
        {QStringLiteral("limits"),
         QJsonObject {{QStringLiteral("maxConnections"), 1024},
                      {QStringLiteral("idleTimeoutMs"), 30000},
                      {QStringLiteral("maxHeaderBytes"), 65536}}},
    };
    if (!m_gateway.start(m_host->fd(), m_dir.filePath(QStringLiteral("gateway.log")), config,
                         error))
        return false;
    if (!m_gateway.waitReady(10000, error)) {
        *error += QStringLiteral("\n") + m_gateway.logTail();
        return false;
    }
    return true;
}

void RedteamTopology::tearDown()
{
    m_gateway.stop();
    if (m_upstreamServers)
        m_upstreamServers->stop();
    if (m_hostTraps)
        m_hostTraps->stop();
    if (m_dns)
        m_dns->stop();
    // Deleting the namespaces removes the veths and the nftables tables with them.
    m_guest.reset();
    m_upstream.reset();
    m_host.reset();
}

bool RedteamTopology::setPolicy(const QJsonObject &policy)
{
    return m_gateway.send(
        {{QStringLiteral("type"), QStringLiteral("policy")}, {QStringLiteral("policy"), policy}});
}

void RedteamTopology::resetObservations()
{
    m_upstreamServers->clear();
    m_hostTraps->clear();
    m_dns->clear();
    m_gateway.mark();
}

DnsResult RedteamTopology::resolve(const QString &name, quint16 type)
{
    return guestDnsQuery(m_guest->fd(), topo::Gateway, name, type);
}

QHostAddress RedteamTopology::resolveAddress(const QString &name)
{
    const DnsResult result = resolve(name);
    return result.rcode == 0 && !result.addresses.isEmpty() ? result.addresses.first()
                                                            : QHostAddress();
}

std::unique_ptr<GuestConnection> RedteamTopology::connect(const QHostAddress &address, quint16 port,
                                                          int timeoutMs)
{
    return GuestConnection::connect(m_guest->fd(), address, port, timeoutMs);
}

std::unique_ptr<GuestConnection> RedteamTopology::tls(const QHostAddress &address, quint16 port,
                                                      const std::optional<QByteArray> &sni,
                                                      bool *handshake, const QString &verifyName)
{
    auto connection = connect(address, port);
    *handshake = false;
    if (!connection)
        return nullptr;
    *handshake =
        connection->startTls(sni, verifyName.isEmpty() ? QByteArray() : m_sandboxCaPem, verifyName);
    return connection;
}

CommandResult RedteamTopology::curl(const QStringList &arguments, int maxTimeSeconds)
{
    return runInNamespace(m_guest->fd(), QStringLiteral("curl"),
                          QStringList {QStringLiteral("-sS"), QStringLiteral("--max-time"),
                                       QString::number(maxTimeSeconds), QStringLiteral("--cacert"),
                                       sandboxCaFile()}
                              + arguments,
                          (maxTimeSeconds + 5) * 1000);
}

quint64 RedteamTopology::counter(const QString &name) const
{
    return test::inNamespace(m_host->fd(), [&] {
        const auto counters = NftablesTable::counters(topo::Sandbox);
        return counters ? counters->value(name).packets : quint64(0);
    });
}

} // namespace airlock::redteam
