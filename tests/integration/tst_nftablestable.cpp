#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "netns.h"
#include "rawpackets.h"
#include "resultcheck.h"

#include <QDir>
#include <QProcess>
#include <QTest>

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::NftablesSpec;
using airlock::NftablesTable;
using airlock::TapDevice;
using namespace airlock::test;

// NETWORK SAFETY (docs/architecture.md): everything below happens inside two network namespaces
// this test creates, "host" (no route off the machine: only lo, the sandbox link and a
// veth pair standing in for a host uplink) and "guest". The main thread enters "host"; guest
// traffic is generated from threads that enter "guest". Deleting the namespaces removes every
// device and table in them; stale namespaces of crashed runs are removed at start.

namespace {

const QString NsPrefix = QStringLiteral("alt-nft-");
const QString Sandbox = QStringLiteral("nfttest");
const QString HostIf = QStringLiteral("al-nfttest");
const QString GuestIf = QStringLiteral("eth0");
const QString GuestMac = QStringLiteral("02:61:6c:00:00:00");
const QString GuestIp = QStringLiteral("100.96.0.2");
const QString GatewayIp = QStringLiteral("100.96.0.1");
const QString HostOtherIp = QStringLiteral("192.0.2.1"); // TEST-NET-1 on a host veth
constexpr quint16 TcpPort = 15001;
constexpr quint16 DnsPort = 15053;
constexpr quint16 ProxyPort = 3128;
constexpr quint16 HostServicePort = 2222; // stand-in for sshd
constexpr quint16 HostUdpPort = 5353;
constexpr int SoOriginalDst = 80; // linux/netfilter_ipv4.h

sockaddr_in inet(const QString &address, quint16 port)
{
    sockaddr_in result {};
    result.sin_family = AF_INET;
    result.sin_port = htons(port);
    ::inet_pton(AF_INET, address.toLatin1().constData(), &result.sin_addr);
    return result;
}

bool waitFor(int fd, short events, int timeoutMs)
{
    pollfd entry {fd, events, 0};
    return ::poll(&entry, 1, timeoutMs) == 1 && (entry.revents & events);
}

int bound(int type, const QString &address, quint16 port)
{
    const int fd = ::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in local = inet(address, port);
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0
        || (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
        qWarning("bind %s:%u: %s", qPrintable(address), port, std::strerror(errno));
        ::close(fd);
        return -1;
    }
    return fd;
}

/// A TCP connection attempt; returns the connected fd (caller closes) or -1.
int tcpConnect(const QString &address, quint16 port, int timeoutMs)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const sockaddr_in remote = inet(address, port);
    ::connect(fd, reinterpret_cast<const sockaddr *>(&remote), sizeof remote);
    int error = -1;
    socklen_t length = sizeof error;
    if (waitFor(fd, POLLOUT, timeoutMs))
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

/// Accepts one pending connection within timeoutMs; returns the fd or -1.
int acceptWithin(int listener, int timeoutMs)
{
    if (!waitFor(listener, POLLIN, timeoutMs))
        return -1;
    return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
}

/// Reads and discards everything queued on a UDP socket; returns how many datagrams.
int drainDatagrams(int fd)
{
    int count = 0;
    char buffer[2048];
    while (::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) >= 0)
        ++count;
    return count;
}

/// Closes every connection pending on a listener; returns how many.
int drainConnections(int listener)
{
    int count = 0;
    for (int fd; (fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK)) >= 0; ++count)
        ::close(fd);
    return count;
}

} // namespace

/// NftablesTable (and TapDevice) in a test network namespace, with a veth pair standing in
/// for the tap so a real guest network stack in a second namespace generates the traffic.
class TestNftablesTable : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void tapDevice();
    void invalidSpecs_data();
    void invalidSpecs();
    void load();
    void tcpIsRedirected_data();
    void tcpIsRedirected();
    void dnsIsRedirected_data();
    void dnsIsRedirected();
    void dropsAreCounted_data();
    void dropsAreCounted();
    void spoofingIsDropped_data();
    void spoofingIsDropped();
    void reloadIsAtomic();
    void leftoversAndRemove();

private:
    NftablesSpec spec(const QString &sandbox = Sandbox, const QString &ifname = HostIf) const;
    quint64 packets(const QString &counter, const QString &sandbox = Sandbox) const;

    std::optional<NetworkNamespace> m_host;
    std::optional<NetworkNamespace> m_guest;
    QString m_hostNs;
    QString m_guestNs;
    int m_originalNsFd = -1;
    int m_hostNsFd = -1;
    int m_guestNsFd = -1;
    QByteArray m_hostMac;
    int m_gatewayTcp = -1;
    int m_gatewayDnsUdp = -1;
    int m_gatewayDnsTcp = -1;
    int m_hostService = -1;
    int m_hostUdp = -1;
};

NftablesSpec TestNftablesTable::spec(const QString &sandbox, const QString &ifname) const
{
    NftablesSpec result;
    result.sandbox = sandbox;
    result.ifname = ifname;
    result.guestMac = GuestMac;
    result.guest = QHostAddress(GuestIp);
    result.gateway = QHostAddress(GatewayIp);
    result.gatewayTcpPort = TcpPort;
    result.gatewayDnsPort = DnsPort;
    result.explicitProxyPort = ProxyPort;
    return result;
}

quint64 TestNftablesTable::packets(const QString &counter, const QString &sandbox) const
{
    auto counters = NftablesTable::counters(sandbox);
    if (!counters) {
        qWarning("counters: %s", qPrintable(counters.error().message));
        return 0;
    }
    return counters->value(counter).packets;
}

void TestNftablesTable::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, nftables)");
    removeStaleNamespaces(NsPrefix);
    const QString suffix = QString::number(::getpid());
    m_hostNs = NsPrefix + QStringLiteral("h-") + suffix;
    m_guestNs = NsPrefix + QStringLiteral("g-") + suffix;
    m_host = NetworkNamespace::create(m_hostNs);
    m_guest = NetworkNamespace::create(m_guestNs);
    QVERIFY(m_host && m_guest);
    const QString h = m_hostNs;
    const QString g = m_guestNs;
    auto ip = [](const QString &ns, const QString &command) {
        return runIp(QStringList {QStringLiteral("-n"), ns} + command.split(u' '));
    };
    // Host namespace: loopback, the sandbox link (host end named like a tap), and a veth pair
    // carrying a second host address (a stand-in for the machine's own uplink address).
    QVERIFY(ip(h, QStringLiteral("link set lo up")));
    QVERIFY(ip(
        h, QStringLiteral("link add %1 type veth peer name %2 netns %3").arg(HostIf, GuestIf, g)));
    QVERIFY(ip(h, QStringLiteral("addr add %1/30 dev %2").arg(GatewayIp, HostIf)));
    QVERIFY(ip(h, QStringLiteral("link set %1 up").arg(HostIf)));
    QVERIFY(ip(h, QStringLiteral("link add svc0 type veth peer name svc1")));
    QVERIFY(ip(h, QStringLiteral("addr add %1/24 dev svc0").arg(HostOtherIp)));
    QVERIFY(ip(h, QStringLiteral("link set svc0 up")));
    QVERIFY(ip(h, QStringLiteral("link set svc1 up")));
    // Guest namespace: the guest's MAC and address, default route via the gateway.
    QVERIFY(ip(g, QStringLiteral("link set lo up")));
    QVERIFY(ip(g, QStringLiteral("link set %1 address %2").arg(GuestIf, GuestMac)));
    QVERIFY(ip(g, QStringLiteral("addr add %1/30 dev %2").arg(GuestIp, GuestIf)));
    QVERIFY(ip(g, QStringLiteral("link set %1 up").arg(GuestIf)));
    QVERIFY(ip(g, QStringLiteral("route add default via %1").arg(GatewayIp)));

    m_originalNsFd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    m_hostNsFd = ::open(qPrintable(QStringLiteral("/run/netns/") + h), O_RDONLY | O_CLOEXEC);
    m_guestNsFd = ::open(qPrintable(QStringLiteral("/run/netns/") + g), O_RDONLY | O_CLOEXEC);
    QVERIFY(m_originalNsFd >= 0 && m_hostNsFd >= 0 && m_guestNsFd >= 0);
    // From here on, the main thread (code under test, listeners) lives in the host namespace.
    QCOMPARE(::setns(m_hostNsFd, CLONE_NEWNET), 0);

    const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq request {};
    std::strncpy(request.ifr_name, HostIf.toLatin1().constData(), IFNAMSIZ - 1);
    QCOMPARE(::ioctl(sock, SIOCGIFHWADDR, &request), 0);
    ::close(sock);
    m_hostMac = QByteArray(request.ifr_hwaddr.sa_data, ETH_ALEN);

    m_gatewayTcp = bound(SOCK_STREAM, GatewayIp, TcpPort);
    m_gatewayDnsUdp = bound(SOCK_DGRAM, GatewayIp, DnsPort);
    m_gatewayDnsTcp = bound(SOCK_STREAM, GatewayIp, DnsPort);
    m_hostService = bound(SOCK_STREAM, QStringLiteral("0.0.0.0"), HostServicePort);
    m_hostUdp = bound(SOCK_DGRAM, QStringLiteral("0.0.0.0"), HostUdpPort);
    QVERIFY(m_gatewayTcp >= 0 && m_gatewayDnsUdp >= 0 && m_gatewayDnsTcp >= 0 && m_hostService >= 0
            && m_hostUdp >= 0);

    // Without the table the guest reaches the host service: the test topology is live.
    const int direct =
        inNamespace(m_guestNsFd, [] { return tcpConnect(GatewayIp, HostServicePort, 3000); });
    QVERIFY2(direct >= 0, "guest cannot reach the host namespace at all");
    ::close(direct);
    QCOMPARE(drainConnections(m_hostService), 1);
}

void TestNftablesTable::cleanupTestCase()
{
    for (int *fd : {&m_gatewayTcp, &m_gatewayDnsUdp, &m_gatewayDnsTcp, &m_hostService, &m_hostUdp,
                    &m_hostNsFd, &m_guestNsFd}) {
        if (*fd >= 0)
            ::close(*fd);
        *fd = -1;
    }
    if (m_originalNsFd >= 0) {
        ::setns(m_originalNsFd, CLONE_NEWNET);
        ::close(m_originalNsFd);
        m_originalNsFd = -1;
    }
    m_host.reset(); // takes every device and table in them along
    m_guest.reset();
}

void TestNftablesTable::tapDevice()
{
    const QString name = QStringLiteral("al-taptest");
    airlock::TapConfig config;
    config.ifname = name;
    config.owner = 65534;
    config.address = QHostAddress(QStringLiteral("100.96.0.5"));
    config.prefixLength = 30;
    auto created = TapDevice::create(config);
    QVERIFY_RESULT(created);
    QVERIFY(TapDevice::isTap(name));
    QVERIFY(!TapDevice::isTap(HostIf)); // a veth is not a tap
    QCOMPARE(TapDevice::listLeftovers(QString()).value_or(QStringList()), QStringList {name});

    QString details;
    QVERIFY(runIp({QStringLiteral("-n"), m_hostNs, QStringLiteral("-d"), QStringLiteral("addr"),
                   QStringLiteral("show"), name},
                  &details));
    QVERIFY2(details.contains(QStringLiteral("tun type tap")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("vnet_hdr on persist on user nobody"))
                 || details.contains(QStringLiteral("vnet_hdr on persist on user 65534")),
             qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("inet 100.96.0.5/30")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral(",UP")), qPrintable(details));
    QVERIFY2(!details.contains(QStringLiteral("inet6")), qPrintable(details));

    auto again = TapDevice::create(config);
    QVERIFY(!again);
    QCOMPARE(again.error().kind, ErrorKind::AlreadyExists);
    config.ifname = QStringLiteral("eth1");
    QCOMPARE(TapDevice::create(config).error().kind, ErrorKind::InvalidParams);

    // A VMM holding the tap: removal refuses instead of yanking it.
    const int vmm = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    QVERIFY(vmm >= 0);
    ifreq request {};
    std::strncpy(request.ifr_name, "al-taptest", IFNAMSIZ - 1);
    request.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    QCOMPARE(::ioctl(vmm, TUNSETIFF, &request), 0);
    auto busy = TapDevice::remove(name);
    QVERIFY(!busy);
    QCOMPARE(busy.error().kind, ErrorKind::Busy);
    ::close(vmm);

    auto removed = TapDevice::remove(name);
    QVERIFY_RESULT(removed);
    QCOMPARE(::if_nametoindex("al-taptest"), 0u);
    QVERIFY(TapDevice::listLeftovers(QString()).value_or(QStringList {name}).isEmpty());
    QVERIFY(TapDevice::remove(name)); // idempotent
    QCOMPARE(TapDevice::remove(HostIf).error().kind, ErrorKind::InvalidParams); // not a tap
}

void TestNftablesTable::invalidSpecs_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<int>("kind");
    QTest::newRow("sandbox") << QStringLiteral("sandbox") << QStringLiteral("Bad Name")
                             << int(ErrorKind::InvalidName);
    QTest::newRow("ifname") << QStringLiteral("ifname") << QStringLiteral("eth0")
                            << int(ErrorKind::InvalidParams);
    QTest::newRow("mac upper") << QStringLiteral("mac") << QStringLiteral("02:61:6C:00:00:00")
                               << int(ErrorKind::InvalidParams);
    QTest::newRow("mac multicast") << QStringLiteral("mac") << QStringLiteral("03:00:00:00:00:01")
                                   << int(ErrorKind::InvalidParams);
    QTest::newRow("mac injection")
        << QStringLiteral("mac") << QStringLiteral("02:00:00:00:00:01\" accept")
        << int(ErrorKind::InvalidParams);
    QTest::newRow("guest v6") << QStringLiteral("guest") << QStringLiteral("fd00::2")
                              << int(ErrorKind::InvalidParams);
    QTest::newRow("guest = gateway")
        << QStringLiteral("guest") << GatewayIp << int(ErrorKind::InvalidParams);
    QTest::newRow("same ports") << QStringLiteral("dns") << QString::number(TcpPort)
                                << int(ErrorKind::InvalidParams);
    QTest::newRow("port 0") << QStringLiteral("dns") << QStringLiteral("0")
                            << int(ErrorKind::InvalidParams);
    QTest::newRow("proxy on 53") << QStringLiteral("proxy") << QStringLiteral("53")
                                 << int(ErrorKind::InvalidParams);
    QTest::newRow("proxy on the TCP listener")
        << QStringLiteral("proxy") << QString::number(TcpPort) << int(ErrorKind::InvalidParams);
}

void TestNftablesTable::invalidSpecs()
{
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(int, kind);
    NftablesSpec bad = spec();
    if (field == u"sandbox")
        bad.sandbox = value;
    else if (field == u"ifname")
        bad.ifname = value;
    else if (field == u"mac")
        bad.guestMac = value;
    else if (field == u"guest")
        bad.guest = QHostAddress(value);
    else if (field == u"dns")
        bad.gatewayDnsPort = quint16(value.toUInt());
    else if (field == u"proxy")
        bad.explicitProxyPort = quint16(value.toUInt());
    auto document = NftablesTable::document(bad);
    QVERIFY(!document);
    QCOMPARE(int(document.error().kind), kind);
    QCOMPARE(int(NftablesTable::load(bad).error().kind), kind);
}

void TestNftablesTable::load()
{
    auto loaded = NftablesTable::load(spec());
    QVERIFY_RESULT(loaded);
    QCOMPARE(NftablesTable::listLeftoverTables().value_or(QStringList()), QStringList {Sandbox});
    auto counters = NftablesTable::counters(Sandbox);
    QVERIFY(counters);
    for (const QString &name : NftablesTable::counterNames())
        QVERIFY2(counters->contains(name), qPrintable(name));
    QCOMPARE(counters->value(QStringLiteral("redirect_tcp")).packets, 0u);
    QCOMPARE(counters->value(QStringLiteral("drop_spoof_ipv4")).packets, 0u);
}

void TestNftablesTable::tcpIsRedirected_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<int>("port");
    QTest::newRow("TEST-NET-3:443") << QStringLiteral("203.0.113.7") << 443;
    QTest::newRow("any address, port 22") << QStringLiteral("198.51.100.9") << 22;
    QTest::newRow("host's other address, service port") << HostOtherIp << int(HostServicePort);
    QTest::newRow("gateway port itself") << GatewayIp << int(TcpPort);
    QTest::newRow("port 853 (DNS over TLS)") << QStringLiteral("198.51.100.53") << 853;
    // The explicit proxy: redirected too, so the gateway reads GW:3128 as the destination.
    QTest::newRow("explicit proxy port on GW") << GatewayIp << int(ProxyPort);
}

void TestNftablesTable::tcpIsRedirected()
{
    QFETCH(QString, address);
    QFETCH(int, port);
    const quint64 before = packets(QStringLiteral("redirect_tcp"));
    const int client =
        inNamespace(m_guestNsFd, [&] { return tcpConnect(address, quint16(port), 3000); });
    QVERIFY2(client >= 0, "the guest's connection was not answered");
    const int accepted = acceptWithin(m_gatewayTcp, 3000);
    ::close(client);
    QVERIFY2(accepted >= 0, "the gateway stand-in saw no connection");
    // What the real gateway reads to learn the guest's intended destination.
    sockaddr_in original {};
    socklen_t length = sizeof original;
    QCOMPARE(::getsockopt(accepted, SOL_IP, SoOriginalDst, &original, &length), 0);
    ::close(accepted);
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &original.sin_addr, text, sizeof text);
    QCOMPARE(QString::fromLatin1(text), address);
    QCOMPARE(int(ntohs(original.sin_port)), port);
    QCOMPARE(drainConnections(m_hostService), 0); // the real service saw nothing
    if (address != GatewayIp || port == ProxyPort)
        QCOMPARE(packets(QStringLiteral("redirect_tcp")), before + 1);
}

void TestNftablesTable::dnsIsRedirected_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<bool>("tcp");
    QTest::newRow("UDP to another resolver") << QStringLiteral("198.51.100.53") << false;
    QTest::newRow("UDP to the gateway's 53") << GatewayIp << false;
    QTest::newRow("UDP to the host's other address") << HostOtherIp << false;
    QTest::newRow("TCP to another resolver") << QStringLiteral("198.51.100.53") << true;
}

void TestNftablesTable::dnsIsRedirected()
{
    QFETCH(QString, address);
    QFETCH(bool, tcp);
    const quint64 before = packets(QStringLiteral("redirect_dns"));
    if (tcp) {
        const int client = inNamespace(m_guestNsFd, [&] { return tcpConnect(address, 53, 3000); });
        QVERIFY(client >= 0);
        const int accepted = acceptWithin(m_gatewayDnsTcp, 3000);
        ::close(client);
        QVERIFY2(accepted >= 0, "the DNS stand-in saw no TCP connection");
        ::close(accepted);
    } else {
        drainDatagrams(m_gatewayDnsUdp);
        const int client = inNamespace(m_guestNsFd, [] {
            return ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        });
        const sockaddr_in remote = inet(address, 53);
        QCOMPARE(::sendto(client, "query", 5, 0, reinterpret_cast<const sockaddr *>(&remote),
                          sizeof remote),
                 5);
        QVERIFY2(waitFor(m_gatewayDnsUdp, POLLIN, 3000), "the DNS stand-in got nothing");
        char buffer[64];
        sockaddr_in from {};
        socklen_t length = sizeof from;
        QCOMPARE(::recvfrom(m_gatewayDnsUdp, buffer, sizeof buffer, 0,
                            reinterpret_cast<sockaddr *>(&from), &length),
                 5);
        QCOMPARE(from.sin_addr.s_addr, inet(GuestIp, 0).sin_addr.s_addr);
        // The answer reaches the guest from the address it asked (reverse NAT).
        QCOMPARE(::sendto(m_gatewayDnsUdp, "answer", 6, 0,
                          reinterpret_cast<const sockaddr *>(&from), length),
                 6);
        QVERIFY2(waitFor(client, POLLIN, 3000), "the guest got no answer");
        sockaddr_in answerFrom {};
        length = sizeof answerFrom;
        QCOMPARE(::recvfrom(client, buffer, sizeof buffer, 0,
                            reinterpret_cast<sockaddr *>(&answerFrom), &length),
                 6);
        QCOMPARE(answerFrom.sin_addr.s_addr, remote.sin_addr.s_addr);
        QCOMPARE(answerFrom.sin_port, htons(53));
        ::close(client);
    }
    QCOMPARE(packets(QStringLiteral("redirect_dns")), before + 1);
}

enum class Probe { Udp, UdpToHost, Icmp, TcpToHostService, TcpToMetadata, Ipv6, Vlan };
Q_DECLARE_METATYPE(Probe)

void TestNftablesTable::dropsAreCounted_data()
{
    QTest::addColumn<Probe>("probe");
    QTest::addColumn<QString>("counter");
    // docs/redteam-cases.md principle 3 and D2, E3, F1, F3, F4.
    QTest::newRow("UDP, not DNS (NTP)") << Probe::Udp << QStringLiteral("drop_udp");
    QTest::newRow("UDP to a host port") << Probe::UdpToHost << QStringLiteral("drop_udp");
    QTest::newRow("ICMP echo to the gateway") << Probe::Icmp << QStringLiteral("drop_icmp");
    QTest::newRow("SYN to a host service on GW")
        << Probe::TcpToHostService << QStringLiteral("drop_tcp_port");
    QTest::newRow("metadata endpoint")
        << Probe::TcpToMetadata << QStringLiteral("drop_special_destination");
    QTest::newRow("IPv6 frame") << Probe::Ipv6 << QStringLiteral("drop_ipv6");
    QTest::newRow("VLAN-tagged frame") << Probe::Vlan << QStringLiteral("drop_ethertype");
}

void TestNftablesTable::dropsAreCounted()
{
    QFETCH(Probe, probe);
    QFETCH(QString, counter);
    drainDatagrams(m_hostUdp);
    drainConnections(m_gatewayTcp);
    const quint64 before = packets(counter);
    const QByteArray guestMac = macBytes(GuestMac);
    switch (probe) {
    case Probe::Udp:
    case Probe::UdpToHost: {
        const QString address = probe == Probe::Udp ? QStringLiteral("198.51.100.123") : GatewayIp;
        const quint16 port = probe == Probe::Udp ? 123 : HostUdpPort;
        const bool sent = inNamespace(m_guestNsFd, [&] {
            const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            const sockaddr_in remote = inet(address, port);
            const bool ok =
                ::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr *>(&remote), sizeof remote)
                == 1;
            ::close(fd);
            return ok;
        });
        QVERIFY(sent);
        // Counted as dropped (below), it cannot arrive: no datagram may be waiting now.
        QTRY_VERIFY_WITH_TIMEOUT(packets(counter) > before, 3000);
        QCOMPARE(drainDatagrams(m_hostUdp), 0);
        break;
    }
    case Probe::Icmp: {
        const bool replied = inNamespace(m_guestNsFd, [] {
            const int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
            QByteArray echo = QByteArray::fromHex("0800000012340001") + QByteArray("airlock");
            const quint16 sum = internetChecksum(echo);
            echo[2] = char(sum >> 8);
            echo[3] = char(sum & 0xff);
            const sockaddr_in remote = inet(GatewayIp, 0);
            ::sendto(fd, echo.constData(), size_t(echo.size()), 0,
                     reinterpret_cast<const sockaddr *>(&remote), sizeof remote);
            const bool answer = waitFor(fd, POLLIN, 1000);
            ::close(fd);
            return answer;
        });
        QVERIFY2(!replied, "the host answered an ICMP echo");
        break;
    }
    case Probe::TcpToHostService: {
        const int client =
            inNamespace(m_guestNsFd, [] { return tcpConnect(GatewayIp, HostServicePort, 1500); });
        QCOMPARE(client, -1);
        QCOMPARE(drainConnections(m_hostService), 0);
        break;
    }
    case Probe::TcpToMetadata: {
        const int client = inNamespace(
            m_guestNsFd, [] { return tcpConnect(QStringLiteral("169.254.169.254"), 80, 1500); });
        QCOMPARE(client, -1);
        QCOMPARE(drainConnections(m_gatewayTcp), 0);
        break;
    }
    case Probe::Ipv6: {
        // Ethernet + IPv6 header (next header 59: no next header) to all-nodes.
        const QByteArray frame =
            ethernetHeader(QByteArray::fromHex("333300000001"), guestMac, 0x86dd)
            + QByteArray::fromHex("60000000000040ff"
                                  "fe800000000000000061"
                                  "6cfffe000000"
                                  "ff020000000000000000000000000001");
        QVERIFY(sendFrame(m_guestNsFd, GuestIf, frame));
        break;
    }
    case Probe::Vlan: {
        const QByteArray inner = udpPacket(GuestIp, GatewayIp, 40000, DnsPort, "vlan");
        QByteArray frame = ethernetHeader(m_hostMac, guestMac, 0x8100);
        frame += QByteArray::fromHex("00070800") + inner; // VLAN 7, then IPv4
        QVERIFY(sendFrame(m_guestNsFd, GuestIf, frame));
        QTRY_VERIFY_WITH_TIMEOUT(packets(counter) > before, 3000);
        QCOMPARE(drainDatagrams(m_gatewayDnsUdp), 0);
        break;
    }
    }
    QTRY_VERIFY_WITH_TIMEOUT(packets(counter) > before, 3000);
}

void TestNftablesTable::spoofingIsDropped_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QString>("counter"); // empty: must be accepted (control)
    const QByteArray guestMac = macBytes(GuestMac);
    const QByteArray otherMac = macBytes(QStringLiteral("02:61:6c:00:00:01"));
    const QByteArray broadcast = QByteArray::fromHex("ffffffffffff");
    auto dns = [](const QString &source) {
        return udpPacket(source, GatewayIp, 40000, DnsPort, "forged pkg.test A 192.0.2.66");
    };
    // Control: the same crafted datagram from the real guest reaches the DNS stand-in.
    QTest::newRow("control: guest's own MAC and address")
        << ethernetHeader(QByteArray(6, '\0'), guestMac, 0x0800) + dns(GuestIp) << QString();
    // docs/redteam-cases.md E5/F4: the guest takes GW's address, another sandbox's, changes
    // its MAC.
    QTest::newRow("source = gateway address (E5)")
        << ethernetHeader(QByteArray(6, '\0'), guestMac, 0x0800) + dns(GatewayIp)
        << QStringLiteral("drop_spoof_ipv4");
    QTest::newRow("source = another sandbox")
        << ethernetHeader(QByteArray(6, '\0'), guestMac, 0x0800) + dns(QStringLiteral("100.96.0.6"))
        << QStringLiteral("drop_spoof_ipv4");
    QTest::newRow("source = the host's other address")
        << ethernetHeader(QByteArray(6, '\0'), guestMac, 0x0800) + dns(HostOtherIp)
        << QStringLiteral("drop_spoof_ipv4");
    QTest::newRow("changed MAC, right address")
        << ethernetHeader(QByteArray(6, '\0'), otherMac, 0x0800) + dns(GuestIp)
        << QStringLiteral("drop_spoof_mac");
    QTest::newRow("gratuitous ARP for GW (F4)") << ethernetHeader(broadcast, guestMac, 0x0806)
            + arpPacket(1, guestMac, GatewayIp, QByteArray(6, '\0'), GatewayIp)
                                                << QStringLiteral("drop_arp");
    QTest::newRow("ARP claiming another sandbox") << ethernetHeader(broadcast, guestMac, 0x0806)
            + arpPacket(2, guestMac, QStringLiteral("100.96.0.6"), QByteArray(6, '\0'), GatewayIp)
                                                  << QStringLiteral("drop_arp");
    QTest::newRow("ARP with a foreign sender MAC") << ethernetHeader(broadcast, guestMac, 0x0806)
            + arpPacket(1, otherMac, GuestIp, QByteArray(6, '\0'), GatewayIp)
                                                   << QStringLiteral("drop_arp");
}

void TestNftablesTable::spoofingIsDropped()
{
    QFETCH(QByteArray, frame);
    QFETCH(QString, counter);
    if (frame.startsWith(QByteArray(6, '\0')))
        frame.replace(0, 6, m_hostMac);
    drainDatagrams(m_gatewayDnsUdp);
    const quint64 before = counter.isEmpty() ? 0 : packets(counter);
    QVERIFY(sendFrame(m_guestNsFd, GuestIf, frame));
    if (counter.isEmpty()) {
        QVERIFY2(waitFor(m_gatewayDnsUdp, POLLIN, 3000), "the control datagram did not arrive");
        QCOMPARE(drainDatagrams(m_gatewayDnsUdp), 1);
        return;
    }
    // Counted as dropped, so not delivered: nothing may be waiting at the resolver now.
    QTRY_VERIFY_WITH_TIMEOUT(packets(counter) > before, 3000);
    QCOMPARE(drainDatagrams(m_gatewayDnsUdp), 0); // nothing forged reached the resolver
}

void TestNftablesTable::reloadIsAtomic()
{
    QVERIFY(packets(QStringLiteral("redirect_tcp")) > 0);
    // Replace twice: both succeed, counters restart, one pair of tables remains.
    for (int round = 0; round < 2; ++round) {
        auto loaded = NftablesTable::load(spec());
        QVERIFY_RESULT(loaded);
        QCOMPARE(packets(QStringLiteral("redirect_tcp")), 0u);
        QCOMPARE(NftablesTable::listLeftoverTables().value_or(QStringList()),
                 QStringList {Sandbox});
    }
    const int client = inNamespace(
        m_guestNsFd, [] { return tcpConnect(QStringLiteral("203.0.113.7"), 443, 3000); });
    QVERIFY(client >= 0);
    ::close(client);
    const int accepted = acceptWithin(m_gatewayTcp, 3000);
    QVERIFY(accepted >= 0);
    ::close(accepted);
    QCOMPARE(packets(QStringLiteral("redirect_tcp")), 1u);

    // No window without a table: while the tables are replaced 20 times, a guest thread
    // sprays UDP at a host port. Had any reload left the link unfiltered for a moment, a
    // datagram would reach the host socket.
    drainDatagrams(m_hostUdp);
    std::atomic<bool> stop = false;
    std::atomic<int> sent = 0;
    std::thread sprayer([&] {
        if (::setns(m_guestNsFd, CLONE_NEWNET) != 0)
            return;
        const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const sockaddr_in remote = inet(GatewayIp, HostUdpPort);
        while (!stop) {
            if (::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr *>(&remote), sizeof remote)
                == 1)
                ++sent;
            std::this_thread::yield(); // the reloads need the CPU too
        }
        ::close(fd);
    });
    bool allLoaded = true;
    for (int round = 0; round < 20; ++round)
        allLoaded = NftablesTable::load(spec()).has_value() && allLoaded;
    // Some datagrams after the last load (its counters start at zero), for the check below.
    QTRY_VERIFY_WITH_TIMEOUT(packets(QStringLiteral("drop_udp")) > 0, 5000);
    stop = true;
    sprayer.join();
    QVERIFY(allLoaded);
    QVERIFY(sent > 0);
    // A control datagram after the spray, on the same link, is let through (to the gateway's
    // DNS): once it arrived, every datagram of the spray before it has met the table.
    QVERIFY(inNamespace(m_guestNsFd, [] {
        const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const sockaddr_in remote = inet(GatewayIp, 53);
        const bool ok = ::sendto(fd, "barrier", 7, 0, reinterpret_cast<const sockaddr *>(&remote),
                                 sizeof remote)
            == 7;
        ::close(fd);
        return ok;
    }));
    QVERIFY2(waitFor(m_gatewayDnsUdp, POLLIN, 3000), "the control datagram did not arrive");
    drainDatagrams(m_gatewayDnsUdp);
    QCOMPARE(drainDatagrams(m_hostUdp), 0);
    QVERIFY(packets(QStringLiteral("drop_udp")) > 0);
}

void TestNftablesTable::leftoversAndRemove()
{
    // An orphan from a "crashed helper", and a table that is not ours.
    QVERIFY(NftablesTable::load(spec(QStringLiteral("orphan"))));
    QProcess nft;
    nft.start(QStringLiteral("ip"),
              {QStringLiteral("netns"), QStringLiteral("exec"), m_hostNs, QStringLiteral("nft"),
               QStringLiteral("add"), QStringLiteral("table"), QStringLiteral("inet"),
               QStringLiteral("unrelated")});
    QVERIFY(nft.waitForFinished(10000) && nft.exitCode() == 0);
    // Another helper's table (its instance tag) is never listed as ours, nor ours as its.
    NftablesSpec foreign = spec(QStringLiteral("orphan"));
    foreign.instance = QStringLiteral("abcde");
    QVERIFY(NftablesTable::load(foreign));
    QCOMPARE(NftablesTable::listLeftoverTables().value_or(QStringList()),
             (QStringList {QStringLiteral("nfttest"), QStringLiteral("orphan")}));
    QCOMPARE(NftablesTable::listLeftoverTables(QStringLiteral("abcde")).value_or(QStringList()),
             QStringList {QStringLiteral("orphan")});
    QVERIFY(NftablesTable::listLeftoverTables(QStringLiteral("12345"))
                .value_or(QStringList {Sandbox})
                .isEmpty());
    // The fingerprint stays while nobody touches the table, and changes with a flushed chain.
    auto before = NftablesTable::fingerprint(QStringLiteral("orphan"), foreign.instance);
    QVERIFY(before);
    QCOMPARE(NftablesTable::fingerprint(QStringLiteral("orphan"), foreign.instance).value_or(""),
             *before);
    QVERIFY(NftablesTable::fingerprint(QStringLiteral("orphan")).value_or(*before) != *before);
    // One listing of the whole ruleset (TableWatch) gives each table the fingerprint its own
    // listing gives (SandboxNetwork after a load), and only that helper instance's tables.
    const auto tagged = NftablesTable::fingerprints(foreign.instance);
    QVERIFY_RESULT(tagged);
    QCOMPARE(tagged->keys(), QStringList {QStringLiteral("orphan")});
    QCOMPARE(tagged->value(QStringLiteral("orphan")), *before);
    const auto untagged = NftablesTable::fingerprints();
    QVERIFY_RESULT(untagged);
    QCOMPARE(untagged->size(), 2);
    for (const QString &name : {Sandbox, QStringLiteral("orphan")})
        QCOMPARE(untagged->value(name), NftablesTable::fingerprint(name).value_or("none"));
    nft.start(QStringLiteral("ip"),
              {QStringLiteral("netns"), QStringLiteral("exec"), m_hostNs, QStringLiteral("nft"),
               QStringLiteral("flush"), QStringLiteral("chain"), QStringLiteral("inet"),
               NftablesTable::tableName(QStringLiteral("orphan"), foreign.instance),
               QStringLiteral("guest_input")});
    QVERIFY(nft.waitForFinished(10000) && nft.exitCode() == 0);
    QVERIFY(NftablesTable::fingerprint(QStringLiteral("orphan"), foreign.instance).value_or(*before)
            != *before);
    QCOMPARE(NftablesTable::fingerprints(foreign.instance)
                 .value_or(QHash<QString, QByteArray>())
                 .value(QStringLiteral("orphan")),
             NftablesTable::fingerprint(QStringLiteral("orphan"), foreign.instance).value_or(""));
    QVERIFY(NftablesTable::remove(QStringLiteral("orphan"), foreign.instance));
    QCOMPARE(NftablesTable::fingerprint(QStringLiteral("orphan"), foreign.instance).error().kind,
             ErrorKind::NotFound);

    for (const QString &name : {Sandbox, QStringLiteral("orphan")}) {
        auto removed = NftablesTable::remove(name);
        QVERIFY_RESULT(removed);
        QCOMPARE(NftablesTable::counters(name).error().kind, ErrorKind::NotFound);
    }
    QVERIFY(NftablesTable::listLeftoverTables().value_or(QStringList {Sandbox}).isEmpty());
    QVERIFY(NftablesTable::remove(Sandbox)); // idempotent

    QString ruleset;
    nft.start(QStringLiteral("ip"),
              {QStringLiteral("netns"), QStringLiteral("exec"), m_hostNs, QStringLiteral("nft"),
               QStringLiteral("list"), QStringLiteral("ruleset")});
    QVERIFY(nft.waitForFinished(10000));
    ruleset = QString::fromLocal8Bit(nft.readAllStandardOutput());
    QVERIFY2(!ruleset.contains(QStringLiteral("airlock_")), qPrintable(ruleset));
    QVERIFY(ruleset.contains(QStringLiteral("unrelated")));

    // Without the table, nothing is redirected any more.
    const int client = inNamespace(
        m_guestNsFd, [] { return tcpConnect(QStringLiteral("203.0.113.7"), 443, 1000); });
    QCOMPARE(client, -1);
    QCOMPARE(drainConnections(m_gatewayTcp), 0);
}

QTEST_GUILESS_MAIN(TestNftablesTable)
#include "tst_nftablestable.moc"
