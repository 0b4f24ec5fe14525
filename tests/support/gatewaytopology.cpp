#include "gatewaytopology.h"

#include "core/net/nftablestable.h"
#include "core/pki/sandboxca.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::test {

namespace {

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

// Runs `ip -n NS COMMAND` for each of `commands`; false (`*failed` says which) at the first
// that fails.
bool runIpIn(const QString &ns, const QStringList &commands, QString *failed)
{
    for (const QString &command : commands) {
        if (!runIp(QStringList {QStringLiteral("-n"), ns} + command.split(u' '))) {
            *failed = QStringLiteral("ip -n %1 %2 failed").arg(ns, command);
            return false;
        }
    }
    return true;
}

} // namespace

GatewayTopology::Options GatewayTopology::redteam()
{
    using Kind = ServerEndpoint::Kind;
    Options options;
    options.tag = QStringLiteral("rt");
    options.hosts = {{QStringLiteral("pkg.test"), topo::PkgServer},
                     {QStringLiteral("tenant.test"), topo::PkgServer},
                     {QStringLiteral("http.test"), topo::PkgServer},
                     {QStringLiteral("api.test"), topo::ApiServer},
                     {QStringLiteral("evil.test"), topo::EvilServer}};
    const QString pkg = QStringLiteral("A ") + topo::PkgServer.toString();
    const QString evil = QStringLiteral("A ") + topo::EvilServer.toString();
    options.records = {
        {QStringLiteral("*.pkg.test"), {pkg}},
        {QStringLiteral("*.evil.test"), {evil}},
        {QStringLiteral("*.wild.test"), {pkg}},
        // E6: names under the allowed wildcard that the authority points inside.
        {QStringLiteral("lo.wild.test"), {QStringLiteral("A 127.0.0.1")}},
        {QStringLiteral("meta.wild.test"), {QStringLiteral("A 169.254.169.254")}},
        {QStringLiteral("gw.wild.test"), {QStringLiteral("A ") + topo::Gateway.toString()}},
        {QStringLiteral("v6lo.wild.test"), {pkg, QStringLiteral("AAAA ::1")}},
        {QStringLiteral("ula.wild.test"), {pkg, QStringLiteral("AAAA fd00::1")}},
        {QStringLiteral("mapped.wild.test"), {pkg, QStringLiteral("AAAA ::ffff:127.0.0.1")}},
    };
    options.servers = {
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
    // Traps: host services the guest must never reach (F4, D2), and what the gateway must
    // never dial (E6 rebinding to loopback, GW, metadata, ULA).
    const QHostAddress any4(QHostAddress::AnyIPv4);
    const QHostAddress any6(QHostAddress::AnyIPv6);
    for (quint16 port : {quint16(22), quint16(80), quint16(443), quint16(8443)}) {
        options.hostTraps.append({QStringLiteral("host-trap"), any4, port, Kind::Raw, QString()});
        options.hostTraps.append({QStringLiteral("host-trap"), any6, port, Kind::Raw, QString()});
    }
    for (quint16 port : {quint16(53), quint16(5353)}) {
        options.hostTraps.append({QStringLiteral("host-trap"), any4, port, Kind::Udp, QString()});
        options.hostTraps.append({QStringLiteral("host-trap"), any6, port, Kind::Udp, QString()});
    }
    options.hostTraps.append({QStringLiteral("host-trap"), any4, 53, Kind::Raw, QString()});
    options.policy = redteamPolicy();
    return options;
}

QJsonObject GatewayTopology::redteamPolicy()
{
    return {{QStringLiteral("version"), 1},
            {QStringLiteral("rules"),
             QJsonArray {rule(QStringLiteral("pkg.test"), {443}),
                         rule(QStringLiteral("api.test"), {443}),
                         rule(QStringLiteral("http.test"), {80}),
                         rule(QStringLiteral("*.wild.test"), {443})}}};
}

GatewayTopology::GatewayTopology(Options options)
    : m_options(std::move(options))
    , m_dir(QDir::tempPath() + QStringLiteral("/airlock-topology-XXXXXX"))
{
    // The unprivileged gateways of a helper read the trust store: the path must be traversable.
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    if (m_options.side == Side::Helper)
        m_helper = std::make_unique<HelperProcess>(
            QStringList {QStringLiteral("--upstream-dns"),
                         topo::DnsServer.toString() + QStringLiteral(":53"),
                         QStringLiteral("--upstream-ca"),
                         m_dir.filePath(QStringLiteral("upstream-ca.pem"))}
            + m_options.helperArguments);
}

GatewayTopology::~GatewayTopology()
{
    tearDown();
}

bool GatewayTopology::fail(const QString &error)
{
    m_lastError = error;
    return false;
}

int GatewayTopology::hostNs() const
{
    return m_host ? m_host->fd() : m_helperNsFd;
}

QString GatewayTopology::sandboxCaFile() const
{
    return m_dir.filePath(QStringLiteral("sandbox-ca.pem"));
}

bool GatewayTopology::start()
{
    if (::geteuid() != 0)
        return fail(QStringLiteral("needs root (network namespaces, nftables)"));
    if (!m_dir.isValid())
        return fail(QStringLiteral("no temporary directory"));
    m_testCa = TestCa::generate(QStringLiteral("Upstream test CA"));
    if (!m_testCa)
        return fail(QStringLiteral("cannot generate the test CA"));
    const QString trustFile = m_dir.filePath(QStringLiteral("upstream-ca.pem"));
    if (!writeFile(trustFile, m_testCa->certificatePem())
        || ::chmod(QFile::encodeName(trustFile).constData(), 0644) != 0)
        return fail(QStringLiteral("cannot write the upstream trust store"));
    // Leftovers of crashed runs, and of a crashed run with our pid (pid reuse), which no stale
    // check removes.
    const QString prefix = QStringLiteral("alt-") + m_options.tag + u'-';
    removeStaleNamespaces(prefix);
    for (const QString &side : {QStringLiteral("h-"), QStringLiteral("g-"), QStringLiteral("u-")}) {
        const QString name = prefix + side + QString::number(QCoreApplication::applicationPid());
        if (QFileInfo::exists(QStringLiteral("/run/netns/") + name))
            runIp({QStringLiteral("netns"), QStringLiteral("delete"), name});
    }
    if (m_options.side == Side::Helper) {
        if (!m_helper->start())
            return fail(m_helper->lastError());
        m_helperNsFd =
            ::open(QFile::encodeName(QStringLiteral("/run/netns/") + m_helper->networkNamespace())
                       .constData(),
                   O_RDONLY | O_CLOEXEC);
        if (m_helperNsFd < 0)
            return fail(QStringLiteral("cannot open the helper's network namespace"));
    } else if (!buildGatewaySide()) {
        return false;
    }
    return buildUpstream() && startServers() && (m_options.side == Side::Helper || startGateway());
}

bool GatewayTopology::buildGatewaySide()
{
    const QString prefix = QStringLiteral("alt-") + m_options.tag + u'-';
    const QString pid = QString::number(QCoreApplication::applicationPid());
    m_host = NetworkNamespace::create(prefix + QStringLiteral("h-") + pid);
    m_guest = NetworkNamespace::create(prefix + QStringLiteral("g-") + pid);
    if (!m_host || !m_guest)
        return fail(QStringLiteral("cannot create the network namespaces"));
    const QString h = m_host->name();
    const QString g = m_guest->name();
    QString failed;
    if (!runIpIn(
            h,
            {
                // The sandbox link: host end named like a tap, guest end eth0.
                QStringLiteral("link add %1 type veth peer name %2 netns %3")
                    .arg(topo::HostIf, topo::GuestIf, g),
                QStringLiteral("addr add %1/30 dev %2").arg(topo::Gateway.toString(), topo::HostIf),
                QStringLiteral("addr add %1/64 dev %2 nodad")
                    .arg(topo::HostV6.toString(), topo::HostIf),
                QStringLiteral("addr add fe80::1/64 dev %1 nodad").arg(topo::HostIf),
                QStringLiteral("link set %1 up").arg(topo::HostIf),
                // Metadata addresses and a ULA on the host's lo: a dial to them would hit
                // a trap.
                QStringLiteral("addr add 169.254.169.254/32 dev lo"),
                QStringLiteral("addr add 169.254.170.2/32 dev lo"),
                QStringLiteral("addr add 100.100.100.200/32 dev lo"),
                QStringLiteral("addr add fd00:ec2::254/128 dev lo"),
                QStringLiteral("addr add fd00::1/128 dev lo"),
            },
            &failed)
        || !runIpIn(
            g,
            {
                // Guest: MAC, address, default route via GW, IPv6 for F1.
                QStringLiteral("link set %1 address %2").arg(topo::GuestIf, topo::GuestMac),
                QStringLiteral("addr add %1/30 dev %2").arg(topo::Guest.toString(), topo::GuestIf),
                QStringLiteral("addr add %1/64 dev %2 nodad")
                    .arg(topo::GuestV6.toString(), topo::GuestIf),
                QStringLiteral("link set %1 up").arg(topo::GuestIf),
                QStringLiteral("route add default via %1").arg(topo::Gateway.toString()),
                QStringLiteral("-6 route add default via fe80::1 dev %1").arg(topo::GuestIf),
            },
            &failed))
        return fail(failed);
    // A host that routes (many do: containers, VPNs): forwarding on, so only the table stands
    // between the guest and the upstream namespace.
    for (const QString &sysctl : {QStringLiteral("net.ipv4.ip_forward=1"),
                                  QStringLiteral("net.ipv6.conf.all.forwarding=1")}) {
        QProcess process;
        process.start(QStringLiteral("ip"),
                      {QStringLiteral("netns"), QStringLiteral("exec"), h, QStringLiteral("sysctl"),
                       QStringLiteral("-qw"), sysctl});
        if (!process.waitForFinished(10000) || process.exitCode() != 0)
            return fail(QStringLiteral("sysctl %1 failed").arg(sysctl));
    }
    m_hostMac = interfaceMac(m_host->fd(), topo::HostIf);

    NftablesSpec spec;
    spec.sandbox = topo::Sandbox;
    spec.ifname = topo::HostIf;
    spec.guestMac = topo::GuestMac;
    spec.guest = topo::Guest;
    spec.gateway = topo::Gateway;
    spec.gatewayTcpPort = topo::GatewayTcpPort;
    spec.gatewayDnsPort = topo::GatewayDnsPort;
    spec.explicitProxyPort = topo::ExplicitProxyPort;
    const auto loaded = inNamespace(m_host->fd(), [&] {
        auto result = NftablesTable::load(spec);
        return result ? QString() : result.error().message + QStringLiteral(" ");
    });
    if (!loaded.isEmpty())
        return fail(QStringLiteral("nftables: ") + loaded);
    return true;
}

bool GatewayTopology::buildUpstream()
{
    const QString prefix = QStringLiteral("alt-") + m_options.tag + u'-';
    const QString name =
        prefix + QStringLiteral("u-") + QString::number(QCoreApplication::applicationPid());
    m_upstream = NetworkNamespace::create(name);
    if (!m_upstream)
        return fail(QStringLiteral("cannot create network namespace %1").arg(name));
    const QString host = m_host ? m_host->name() : m_helper->networkNamespace();
    const QString u = m_upstream->name();
    QStringList upstream {QStringLiteral("addr add %1/24 dev %2")
                              .arg(topo::UpstreamUplink.toString(), topo::UplinkIf)};
    QList<QHostAddress> addresses {topo::DnsServer};
    for (const auto &[hostName, address] : std::as_const(m_options.hosts))
        addresses.append(address);
    for (const ServerEndpoint &server : std::as_const(m_options.servers))
        addresses.append(server.address);
    QStringList assigned;
    for (const QHostAddress &address : std::as_const(addresses)) {
        if (address.isNull() || address == topo::UpstreamUplink
            || assigned.contains(address.toString()))
            continue;
        assigned.append(address.toString());
        upstream.append(
            QStringLiteral("addr add %1/32 dev %2").arg(address.toString(), topo::UplinkIf));
    }
    // A route back to the sandbox pool, so anything the host forwarded would get an answer (a
    // leak must be visible, not masked by routing).
    upstream << QStringLiteral("link set %1 up").arg(topo::UplinkIf)
             << QStringLiteral("route add 100.96.0.0/16 via %1").arg(topo::HostUplink.toString());
    QString failed;
    if (!runIpIn(
            host,
            {// The uplink to the upstream namespace ("the internet").
             QStringLiteral("link add %1 type veth peer name %1 netns %2").arg(topo::UplinkIf, u),
             QStringLiteral("addr add %1/24 dev %2")
                 .arg(topo::HostUplink.toString(), topo::UplinkIf),
             QStringLiteral("link set %1 up").arg(topo::UplinkIf)},
            &failed)
        || !runIpIn(u, upstream, &failed))
        return fail(failed);
    return true;
}

bool GatewayTopology::startServers()
{
    m_upstreamServers = std::make_unique<RecordingServer>(m_upstream->fd(), m_testCa.get());
    if (!m_upstreamServers->start(m_options.servers, {hostNs(), topo::UpstreamUplink}))
        return fail(QStringLiteral("cannot start the upstream servers"));
    if (!m_options.hostTraps.isEmpty()) {
        m_hostTraps = std::make_unique<RecordingServer>(hostNs(), nullptr);
        if (!m_hostTraps->start(m_options.hostTraps,
                                {hostNs(), QHostAddress(QHostAddress::LocalHost)}))
            return fail(QStringLiteral("cannot start the host traps"));
    }
    m_dns = std::make_unique<TestDnsAuthority>(m_upstream->fd());
    for (const auto &[name, address] : std::as_const(m_options.hosts)) {
        const QString type = address.protocol() == QAbstractSocket::IPv6Protocol
            ? QStringLiteral("AAAA ")
            : QStringLiteral("A ");
        m_dns->setRecords(name, {type + address.toString()});
    }
    for (const auto &[name, records] : std::as_const(m_options.records))
        m_dns->setRecords(name, records);
    if (!m_dns->start(topo::DnsServer, 53, hostNs()))
        return fail(QStringLiteral("cannot start the test DNS authority"));
    return true;
}

bool GatewayTopology::startGateway()
{
    auto sandboxCa = airlock::pki::SandboxCa::generate(topo::Sandbox);
    if (!sandboxCa)
        return fail(sandboxCa.error().message);
    const QString certificatePath = sandboxCaFile();
    const QString keyPath = m_dir.filePath(QStringLiteral("sandbox-ca.key"));
    if (auto saved = sandboxCa->save(certificatePath, keyPath); !saved)
        return fail(saved.error().message);
    m_sandboxCaPem = sandboxCa->certificatePem();
    QFile keyFile(keyPath);
    if (!keyFile.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read the sandbox CA key"));
    const QByteArray keyPem = keyFile.readAll();

    const QString gw = topo::Gateway.toString();
    m_gatewayConfig = QJsonObject {
        {QStringLiteral("type"), QStringLiteral("config")},
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
        {QStringLiteral("trustStore"),
         QJsonObject {
             {QStringLiteral("caFile"), m_dir.filePath(QStringLiteral("upstream-ca.pem"))}}},
        {QStringLiteral("ca"),
         QJsonObject {{QStringLiteral("certificatePem"), QString::fromLatin1(m_sandboxCaPem)},
                      {QStringLiteral("keyPem"), QString::fromLatin1(keyPem)}}},
        {QStringLiteral("policy"), m_options.policy},
        {QStringLiteral("limits"),
         m_options.limits.isEmpty() ? QJsonObject {{QStringLiteral("maxConnections"), 1024},
                                                   {QStringLiteral("idleTimeoutMs"), 30000},
                                                   {QStringLiteral("maxHeaderBytes"), 65536}}
                                    : m_options.limits},
    };
    QString error;
    if (!m_gateway.start(m_host->fd(), m_dir.filePath(QStringLiteral("gateway.log")),
                         m_gatewayConfig, &error))
        return fail(error);
    if (!m_gateway.waitReady(10000, &error))
        return fail(error + QStringLiteral("\n") + m_gateway.logTail());
    return true;
}

void GatewayTopology::tearDown()
{
    m_gateway.stop();
    m_helper.reset(); // stops airlockd and kills its QEMUs; its namespace takes one veth end
    if (m_helperNsFd >= 0)
        ::close(m_helperNsFd);
    m_helperNsFd = -1;
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

bool GatewayTopology::setPolicy(const QJsonObject &policy)
{
    return m_gateway.send(
        {{QStringLiteral("type"), QStringLiteral("policy")}, {QStringLiteral("policy"), policy}});
}

bool GatewayTopology::applyPolicy(const QJsonObject &policy)
{
    while (m_gateway.waitForMessage(QStringLiteral("applied"), 0)) { }
    return setPolicy(policy) && m_gateway.waitForMessage(QStringLiteral("applied"), 3000);
}

void GatewayTopology::resetObservations()
{
    m_upstreamServers->clear();
    if (m_hostTraps)
        m_hostTraps->clear();
    m_dns->clear();
    m_gateway.mark();
}

bool GatewayTopology::settle()
{
    return m_upstreamServers && m_upstreamServers->settle() && m_dns && m_dns->settle()
        && (!m_hostTraps || m_hostTraps->settle());
}

DnsResult GatewayTopology::resolve(const QString &name, quint16 type)
{
    return guestDnsQuery(m_guest->fd(), topo::Gateway, name, type);
}

QHostAddress GatewayTopology::resolveAddress(const QString &name)
{
    const DnsResult result = resolve(name);
    return result.rcode == 0 && !result.addresses.isEmpty() ? result.addresses.first()
                                                            : QHostAddress();
}

std::unique_ptr<GuestConnection> GatewayTopology::connect(const QHostAddress &address, quint16 port,
                                                          int timeoutMs)
{
    return GuestConnection::connect(m_guest->fd(), address, port, timeoutMs);
}

std::unique_ptr<GuestConnection> GatewayTopology::tls(const QHostAddress &address, quint16 port,
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

CommandResult GatewayTopology::curl(const QStringList &arguments, int maxTimeSeconds)
{
    return runInNamespace(m_guest->fd(), QStringLiteral("curl"),
                          QStringList {QStringLiteral("-sS"), QStringLiteral("--max-time"),
                                       QString::number(maxTimeSeconds), QStringLiteral("--cacert"),
                                       sandboxCaFile()}
                              + arguments,
                          (maxTimeSeconds + 5) * 1000);
}

quint64 GatewayTopology::counter(const QString &name) const
{
    return inNamespace(m_host->fd(), [&] {
        const auto counters = NftablesTable::counters(topo::Sandbox);
        return counters ? counters->value(name).packets : quint64(0);
    });
}

int GatewayTopology::pendingAccepts(quint16 port) const
{
    return inNamespace(hostNs(), [&] {
        // This thread's namespace, not the process's: /proc/thread-self.
        QFile table(QStringLiteral("/proc/thread-self/net/tcp"));
        if (!table.open(QIODevice::ReadOnly))
            return -1;
        // "sl local_address rem_address st tx_queue:rx_queue ...", hex; st 0A = LISTEN.
        const QByteArray local =
            ':' + QByteArray::number(port, 16).toUpper().rightJustified(4, '0');
        for (const QByteArray &line : table.readAll().split('\n')) {
            const QList<QByteArray> fields = line.simplified().split(' ');
            if (fields.size() > 4 && fields[1].endsWith(local) && fields[3] == "0A")
                return fields[4].split(':').value(1).toInt(nullptr, 16);
        }
        return -1;
    });
}

} // namespace airlock::test
