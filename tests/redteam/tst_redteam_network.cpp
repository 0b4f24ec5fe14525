// docs/redteam-cases.md class F (addresses, families, metadata, spoofing): what the sandbox's
// nftables table must drop on the host side of the link, from a guest namespace, with real sockets
// and hand-built frames, checked by the table's counters and by trap servers in the host
// namespace. docs/redteam.md.
#include "rawpackets.h"
#include "redteamtestbase.h"

#include <QTest>

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace airlock::redteam;
using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

/// Ethernet + IPv6 + ICMPv6 router advertisement (RFC 4861 §4.2) from the guest's link-local
/// address to all-nodes. The checksum is left zero: the frame must not get that far.
QByteArray routerAdvertisement(const QByteArray &guestMac)
{
    const QByteArray icmp = QByteArray::fromHex("8600000040000708000000000000000000");
    QByteArray ipv6 = QByteArray::fromHex("6000000000");
    ipv6.append(char(icmp.size() >> 8)).append(char(icmp.size() & 0xff));
    ipv6 += QByteArray::fromHex("3aff"); // next header ICMPv6, hop limit 255
    ipv6 += QByteArray::fromHex("fe800000000000000061"
                                "6cfffe000000"
                                "ff020000000000000000000000000001");
    return ethernetHeader(QByteArray::fromHex("333300000001"), guestMac, 0x86dd) + ipv6 + icmp;
}

/// A UDP datagram from inside the guest namespace; true when sendto accepted it.
bool sendUdp(int nsFd, const QHostAddress &address, quint16 port)
{
    return inNamespace(nsFd, [&] {
        const bool v6 = address.protocol() == QAbstractSocket::IPv6Protocol;
        const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        QByteArray storage(sizeof(sockaddr_in6), '\0');
        socklen_t length;
        if (v6) {
            auto *in6 = reinterpret_cast<sockaddr_in6 *>(storage.data());
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(port);
            const Q_IPV6ADDR bytes = address.toIPv6Address();
            std::memcpy(&in6->sin6_addr, bytes.c, 16);
            length = sizeof(sockaddr_in6);
        } else {
            auto *in4 = reinterpret_cast<sockaddr_in *>(storage.data());
            in4->sin_family = AF_INET;
            in4->sin_port = htons(port);
            in4->sin_addr.s_addr = htonl(address.toIPv4Address());
            length = sizeof(sockaddr_in);
        }
        const bool sent = ::sendto(fd, "probe", 5, 0,
                                   reinterpret_cast<const sockaddr *>(storage.constData()), length)
            == 5;
        ::close(fd);
        return sent;
    });
}

} // namespace

class TestRedteamNetwork : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void F1_data();
    void F1();
    void F3_data();
    void F3();
    void F4_data();
    void F4();
};

// F1: any IPv6 from the guest is dropped.
void TestRedteamNetwork::F1_data()
{
    QTest::addColumn<QString>("probe"); // tcp, udp, ra
    QTest::addColumn<QString>("address");
    QTest::addColumn<int>("port");
    QTest::newRow("TCP to GW's link-local") << u"tcp"_s << u"fe80::1%eth0"_s << 443;
    QTest::newRow("TCP to the host's global address") << u"tcp"_s << u"2001:db8:1::1"_s << 22;
    QTest::newRow("TCP to a global address elsewhere") << u"tcp"_s << u"2001:db8:ff::1"_s << 443;
    QTest::newRow("UDP DNS to the host's global address") << u"udp"_s << u"2001:db8:1::1"_s << 53;
    QTest::newRow("router advertisement") << u"ra"_s << QString() << 0;
}

void TestRedteamNetwork::F1()
{
    QFETCH(QString, probe);
    QFETCH(QString, address);
    QFETCH(int, port);
    const quint64 before = m_topo.counter(u"drop_ipv6"_s);
    if (probe == u"tcp") {
        auto connection = m_topo.connect(QHostAddress(address), quint16(port), 1500);
        QVERIFY2(!connection, "an IPv6 connection from the guest succeeded");
    } else if (probe == u"udp") {
        sendUdp(m_topo.guestNs(), QHostAddress(address), quint16(port));
    } else {
        QVERIFY(sendFrame(m_topo.guestNs(), topo::GuestIf,
                          routerAdvertisement(macBytes(topo::GuestMac))));
    }
    QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(u"drop_ipv6"_s) > before, 3000);
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// F3: metadata endpoints.
void TestRedteamNetwork::F3_data()
{
    QTest::addColumn<QString>("client");
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("counter");
    const QString special = u"drop_special_destination"_s;
    QTest::newRow("169.254.169.254") << u"tcp"_s << u"169.254.169.254"_s << special;
    QTest::newRow("curl http://169.254.169.254/latest/meta-data/")
        << u"curl"_s << u"169.254.169.254"_s << special;
    QTest::newRow("169.254.170.2") << u"tcp"_s << u"169.254.170.2"_s << special;
    QTest::newRow("100.100.100.200") << u"tcp"_s << u"100.100.100.200"_s << special;
    QTest::newRow("[fd00:ec2::254]") << u"tcp"_s << u"fd00:ec2::254"_s << u"drop_ipv6"_s;
}

void TestRedteamNetwork::F3()
{
    QFETCH(QString, client);
    QFETCH(QString, address);
    QFETCH(QString, counter);
    const quint64 before = m_topo.counter(counter);
    if (client == u"curl") {
        const CommandResult result =
            m_topo.curl({u"http://%1/latest/meta-data/"_s.arg(address)}, 2);
        QVERIFY(result.finished);
        QVERIFY2(result.exitCode != 0, result.standardOutput.constData());
    } else {
        auto connection = m_topo.connect(QHostAddress(address), 80, 1500);
        QVERIFY2(!connection, "the guest connected to a metadata address");
    }
    QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(counter) > before, 3000);
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    for (const QJsonObject &event : m_topo.gateway().eventsSinceMark())
        QVERIFY2(event.value(u"verdict"_s).toString() != u"allowed",
                 "the gateway allowed a metadata request");
}

// F4: source spoofing, MAC changes, ARP claims, host services.
void TestRedteamNetwork::F4_data()
{
    QTest::addColumn<QByteArray>("frame"); // empty: the row uses a real socket
    QTest::addColumn<QString>("socketProbe");
    QTest::addColumn<QString>("counter");
    const QByteArray guestMac = macBytes(topo::GuestMac);
    const QByteArray otherMac = macBytes(u"02:61:6c:00:00:01"_s);
    const QByteArray hostMac = QByteArray(6, '\0'); // replaced by the host end's MAC in F4()
    const QByteArray broadcast = QByteArray::fromHex("ffffffffffff");
    const QString gw = topo::Gateway.toString();
    const QString guest = topo::Guest.toString();
    const QString other = topo::OtherSandbox.toString();
    auto ipFrame = [&](const QByteArray &mac, const QByteArray &packet) {
        return ethernetHeader(hostMac, mac, 0x0800) + packet;
    };
    QTest::newRow("source = GW, SYN to GW:22")
        << ipFrame(guestMac, tcpSynPacket(gw, gw, 40000, 22)) << QString() << u"drop_spoof_ipv4"_s;
    QTest::newRow("source = another sandbox, SYN to the gateway's port")
        << ipFrame(guestMac, tcpSynPacket(other, gw, 40000, topo::GatewayTcpPort)) << QString()
        << u"drop_spoof_ipv4"_s;
    QTest::newRow("source = host uplink, UDP to the gateway's DNS")
        << ipFrame(guestMac,
                   udpPacket(topo::HostUplink.toString(), gw, 53, topo::GatewayDnsPort, "forged"))
        << QString() << u"drop_spoof_ipv4"_s;
    QTest::newRow("changed MAC, SYN to GW:22")
        << ipFrame(otherMac, tcpSynPacket(guest, gw, 40000, 22)) << QString()
        << u"drop_spoof_mac"_s;
    QTest::newRow("gratuitous ARP for GW") << ethernetHeader(broadcast, guestMac, 0x0806)
            + arpPacket(1, guestMac, gw, QByteArray(6, '\0'), gw)
                                           << QString() << u"drop_arp"_s;
    QTest::newRow("ARP reply claiming another sandbox")
        << ethernetHeader(broadcast, guestMac, 0x0806)
            + arpPacket(2, guestMac, other, QByteArray(6, '\0'), gw)
        << QString() << u"drop_arp"_s;
    QTest::newRow("sshd stand-in on GW:22") << QByteArray() << u"tcp-gw-22"_s << u"drop_tcp_port"_s;
    QTest::newRow("UDP to a host service on GW:5353")
        << QByteArray() << u"udp-gw-5353"_s << u"drop_udp"_s;
    QTest::newRow("host's uplink address :22 (redirected, never the host's sshd)")
        << QByteArray() << u"tcp-uplink-22"_s << u"redirect_tcp"_s;
}

void TestRedteamNetwork::F4()
{
    QFETCH(QByteArray, frame);
    QFETCH(QString, socketProbe);
    QFETCH(QString, counter);
    const quint64 before = m_topo.counter(counter);
    if (!frame.isEmpty()) {
        if (frame.startsWith(QByteArray(6, '\0')))
            frame.replace(0, 6, m_topo.hostMac());
        QVERIFY(sendFrame(m_topo.guestNs(), topo::GuestIf, frame));
    } else if (socketProbe == u"tcp-gw-22") {
        QVERIFY2(!m_topo.connect(topo::Gateway, 22, 1500), "the guest reached GW:22");
    } else if (socketProbe == u"udp-gw-5353") {
        QVERIFY(sendUdp(m_topo.guestNs(), topo::Gateway, 5353));
    } else if (socketProbe == u"tcp-uplink-22") {
        auto connection = m_topo.connect(topo::HostUplink, 22, 1500);
        if (connection) { // the gateway took it; it must not be the host's service
            connection->send("SSH-2.0-x\r\n");
            QVERIFY2(connection->closedByPeer(5000), "the connection stayed open");
        }
    }
    QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(counter) > before, 3000);
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

QTEST_GUILESS_MAIN(TestRedteamNetwork)
#include "tst_redteam_network.moc"
