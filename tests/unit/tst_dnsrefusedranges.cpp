// AddressRange parsing, RefusedRanges (the default list, embedded IPv4, run-time additions),
// DnsNameMapping, and DnsUpstreamResolver's pure answer checks
// (docs/redteam-cases.md principle 4, E5, E6).
#include "core/gateway/dns/addressrange.h"
#include "core/gateway/dns/dnsldns.h"
#include "core/gateway/dns/dnsnamemapping.h"
#include "core/gateway/dns/dnsupstreamresolver.h"
#include "core/gateway/dns/hostaddresses.h"
#include "resultcheck.h"

#include <QNetworkInterface>
#include <QTest>

using namespace airlock::gateway;
using airlock::EgressReason;
using namespace Qt::StringLiterals;

namespace {

// An answer to `name` A with `id` holding `records` ("owner TTL IN TYPE data" strings).
QByteArray answer(const QString &name, quint16 id, const QStringList &records,
                  ldns_pkt_rcode rcode = LDNS_RCODE_NOERROR, bool tc = false)
{
    using namespace ldnsutil;
    Pkt pkt(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()), LDNS_RR_TYPE_A,
                               LDNS_RR_CLASS_IN, LDNS_RD));
    ldns_pkt_set_id(pkt.get(), id);
    ldns_pkt_set_qr(pkt.get(), true);
    ldns_pkt_set_rcode(pkt.get(), uint8_t(rcode));
    ldns_pkt_set_tc(pkt.get(), tc);
    for (const QString &text : records) {
        ldns_rr *rr = nullptr;
        if (ldns_rr_new_frm_str(&rr, text.toLatin1().constData(), 0, nullptr, nullptr)
            != LDNS_STATUS_OK)
            qFatal("bad test record");
        ldns_pkt_push_rr(pkt.get(), LDNS_SECTION_ANSWER, rr);
    }
    return toWire(pkt.get());
}

} // namespace

class TestDnsRefusedRanges : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parse_data();
    void parse();
    void contains_data();
    void contains();
    void refused_data();
    void refused();
    void runTimeRange();
    void hostAddresses();
    void fromStrings();
    void mapping();
    void mappingExhausted();
    void mappingPool();
    void interpret_data();
    void interpret();
    void boundTtl();
};

void TestDnsRefusedRanges::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("canonical"); // empty: rejected
    QTest::newRow("v4 /8") << u"10.0.0.0/8"_s << u"10.0.0.0/8"_s;
    QTest::newRow("v4 host") << u"169.254.169.254"_s << u"169.254.169.254/32"_s;
    QTest::newRow("v4 /0") << u"0.0.0.0/0"_s << u"0.0.0.0/0"_s;
    QTest::newRow("v6 /7") << u"fc00::/7"_s << u"fc00::/7"_s;
    QTest::newRow("v6 host") << u"::1"_s << u"::1/128"_s;
    QTest::newRow("v6 upper") << u"FD00:EC2::254"_s << u"fd00:ec2::254/128"_s;
    QTest::newRow("host bits set") << u"10.1.0.0/8"_s << QString();
    QTest::newRow("v6 host bits") << u"fe80::1/10"_s << QString();
    QTest::newRow("length too big") << u"10.0.0.0/33"_s << QString();
    QTest::newRow("v6 length too big") << u"::/129"_s << QString();
    QTest::newRow("leading zero length") << u"10.0.0.0/08"_s << QString();
    QTest::newRow("signed length") << u"10.0.0.0/+8"_s << QString();
    QTest::newRow("empty length") << u"10.0.0.0/"_s << QString();
    QTest::newRow("short v4") << u"127.1"_s << QString();
    QTest::newRow("hex v4") << u"0x7f.0.0.1"_s << QString();
    QTest::newRow("octal v4") << u"010.0.0.0/8"_s << QString();
    QTest::newRow("zone id") << u"fe80::1%eth0"_s << QString();
    QTest::newRow("name") << u"pkg.test"_s << QString();
    QTest::newRow("empty") << QString() << QString();
    QTest::newRow("space") << u" 10.0.0.0/8"_s << QString();
}

void TestDnsRefusedRanges::parse()
{
    QFETCH(QString, text);
    QFETCH(QString, canonical);
    const auto range = AddressRange::parse(text);
    if (canonical.isEmpty()) {
        QVERIFY(!range);
        QVERIFY(!range.error().message.isEmpty());
        return;
    }
    QVERIFY_RESULT(range);
    QCOMPARE(range->toString(), canonical);
    QCOMPARE(*AddressRange::parse(range->toString()), *range);
}

void TestDnsRefusedRanges::contains_data()
{
    QTest::addColumn<QString>("range");
    QTest::addColumn<QString>("address");
    QTest::addColumn<bool>("inside");
    QTest::newRow("v4 first") << u"172.16.0.0/12"_s << u"172.16.0.0"_s << true;
    QTest::newRow("v4 last") << u"172.16.0.0/12"_s << u"172.31.255.255"_s << true;
    QTest::newRow("v4 after") << u"172.16.0.0/12"_s << u"172.32.0.0"_s << false;
    QTest::newRow("v4 before") << u"172.16.0.0/12"_s << u"172.15.255.255"_s << false;
    QTest::newRow("v4 /0") << u"0.0.0.0/0"_s << u"8.8.8.8"_s << true;
    QTest::newRow("v4 /32") << u"100.100.100.200/32"_s << u"100.100.100.200"_s << true;
    QTest::newRow("v4 /32 neighbour") << u"100.100.100.200/32"_s << u"100.100.100.201"_s << false;
    QTest::newRow("v6 /10") << u"fe80::/10"_s << u"febf:ffff::1"_s << true;
    QTest::newRow("v6 /10 after") << u"fe80::/10"_s << u"fec0::1"_s << false;
    QTest::newRow("families differ") << u"127.0.0.0/8"_s << u"::ffff:127.0.0.1"_s << false;
    QTest::newRow("v6 range v4 address") << u"::/0"_s << u"127.0.0.1"_s << false;
}

void TestDnsRefusedRanges::contains()
{
    QFETCH(QString, range);
    QFETCH(QString, address);
    QFETCH(bool, inside);
    const auto parsed = AddressRange::parse(range);
    QVERIFY(parsed);
    QCOMPARE(parsed->contains(QHostAddress(address)), inside);
}

void TestDnsRefusedRanges::refused_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<bool>("refused");
    const char *const refusedAddresses[] = {
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.254", "127.0.0.1",
        "127.255.255.254", "169.254.169.254", "169.254.170.2", "100.100.100.200", "172.16.0.1",
        "192.0.0.8", "192.168.1.1", "198.18.0.1", "198.19.255.255", "224.0.0.251",
        "239.255.255.250", "240.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd00:ec2::254",
        "fe80::1", "ff02::1",
        // Embedded IPv4: v4-mapped, v4-compatible, NAT64, 6to4.
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::127.0.0.1",
        "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "2002:7f00:1::1",
        "2002:a9fe:a9fe::1"};
    for (const char *a : refusedAddresses)
        QTest::newRow(a) << QString::fromLatin1(a) << true;
    const char *const publicAddresses[] = {
        "1.1.1.1",           "8.8.8.8",         "100.63.255.255",       "100.128.0.0",
        "172.32.0.1",        "192.0.2.10",      "198.17.255.255",       "198.20.0.0",
        "223.255.255.255",   "2606:4700::1111", "::ffff:93.184.216.34", "64:ff9b::5db8:d822",
        "2002:5db8:d822::1", "2001:4860::8888"};
    for (const char *a : publicAddresses)
        QTest::newRow(a) << QString::fromLatin1(a) << false;
}

void TestDnsRefusedRanges::refused()
{
    QFETCH(QString, address);
    QFETCH(bool, refused);
    const QHostAddress parsed(address);
    QVERIFY(!parsed.isNull());
    QCOMPARE(RefusedRanges::defaults().contains(parsed), refused);
}

void TestDnsRefusedRanges::runTimeRange()
{
    RefusedRanges ranges = RefusedRanges::defaults();
    const QHostAddress link(u"203.0.113.5"_s);
    QVERIFY(!ranges.contains(link));
    ranges.add(*AddressRange::parse(u"203.0.113.0/29"_s));
    QVERIFY(ranges.contains(link));
    QVERIFY(ranges.contains(QHostAddress(u"::ffff:203.0.113.5"_s)));
    QCOMPARE(ranges.match(link)->toString(), u"203.0.113.0/29"_s);
    QVERIFY(ranges.contains(QHostAddress()));
    QVERIFY(!RefusedRanges::none().contains(QHostAddress(u"127.0.0.1"_s)));
}

// The addresses of this namespace's interfaces are refused once the gateway asks for it, as
// single addresses, also in their IPv4-embedding IPv6 forms
// (docs/reviews/2026-12-01-gateway-round3.md#f1).
void TestDnsRefusedRanges::hostAddresses()
{
    RefusedRanges ranges = RefusedRanges::none();
    QVERIFY(!ranges.refusesHostAddresses());
    const QList<QHostAddress> own = QNetworkInterface::allAddresses();
    QVERIFY(!own.isEmpty());
    for (const QHostAddress &address : own)
        QVERIFY2(!ranges.contains(address), qPrintable(address.toString()));
    ranges.setRefuseHostAddresses(true);
    for (QHostAddress address : own) {
        address.setScopeId(QString());
        const auto match = ranges.match(address);
        QVERIFY2(match, qPrintable(address.toString()));
        QCOMPARE(match->network(), address);
        QCOMPARE(match->prefixLength(),
                 address.protocol() == QAbstractSocket::IPv4Protocol ? 32 : 128);
        QCOMPARE(HostAddresses::match(address), std::optional<QHostAddress>(address));
    }
    QVERIFY(ranges.contains(QHostAddress(u"::ffff:127.0.0.1"_s)));
    QVERIFY(ranges.contains(QHostAddress(u"64:ff9b::7f00:1"_s)));
    // An address no interface of this namespace has stays allowed.
    const QHostAddress elsewhere(u"192.0.2.77"_s);
    if (own.contains(elsewhere))
        QSKIP("this host has 192.0.2.77 (TEST-NET-1) on an interface");
    QVERIFY(!ranges.contains(elsewhere));
    QVERIFY(!ranges.contains(QHostAddress(u"::ffff:192.0.2.77"_s)));
    QVERIFY(!HostAddresses::match(elsewhere));
}

void TestDnsRefusedRanges::fromStrings()
{
    const auto ok = RefusedRanges::fromStrings({u"10.0.0.0/8"_s, u"::1"_s});
    QVERIFY(ok);
    QCOMPARE(ok->ranges().size(), 2);
    const auto bad = RefusedRanges::fromStrings({u"10.0.0.0/8"_s, u"10.0.0.1/8"_s});
    QVERIFY(!bad);
    QVERIFY(bad.error().message.startsWith(u"range 1: "_s));
}

void TestDnsRefusedRanges::mapping()
{
    auto mapping = DnsNameMapping::create(*AddressRange::parse(u"198.18.0.0/24"_s));
    QVERIFY(mapping);
    QCOMPARE(mapping->capacity(), 254u);
    const auto a = mapping->addressFor(u"pkg.test"_s);
    const auto b = mapping->addressFor(u"api.test"_s);
    QVERIFY(a && b);
    QCOMPARE(*a, QHostAddress(u"198.18.0.1"_s));
    QCOMPARE(*b, QHostAddress(u"198.18.0.2"_s));
    QCOMPARE(*mapping->addressFor(u"pkg.test"_s), *a); // stable
    QCOMPARE(mapping->nameFor(*a), u"pkg.test"_s);
    QCOMPARE(mapping->nameFor(QHostAddress(u"::ffff:198.18.0.2"_s)), u"api.test"_s);
    QVERIFY(!mapping->nameFor(QHostAddress(u"198.18.0.3"_s)));
    QVERIFY(!mapping->nameFor(QHostAddress(u"fe80::1"_s)));
    QCOMPARE(mapping->lookup(u"api.test"_s), *b);
    QVERIFY(!mapping->lookup(u"evil.test"_s));
    QCOMPARE(mapping->size(), 2);
}

void TestDnsRefusedRanges::mappingExhausted()
{
    auto mapping = DnsNameMapping::create(*AddressRange::parse(u"198.18.0.0/30"_s));
    QVERIFY(mapping);
    QCOMPARE(mapping->capacity(), 2u);
    QVERIFY(mapping->addressFor(u"a.test"_s));
    QVERIFY(mapping->addressFor(u"b.test"_s));
    const auto full = mapping->addressFor(u"c.test"_s);
    QVERIFY(!full);
    QCOMPARE(full.error().kind, airlock::ErrorKind::OperationFailed);
    QVERIFY(mapping->addressFor(u"a.test"_s)); // existing names still map
    QVERIFY(!mapping->nameFor(QHostAddress(u"198.18.0.3"_s))); // broadcast never handed out
}

void TestDnsRefusedRanges::mappingPool()
{
    QVERIFY(!DnsNameMapping::create(*AddressRange::parse(u"fd00::/64"_s)));
    QVERIFY(!DnsNameMapping::create(*AddressRange::parse(u"198.18.0.0/31"_s)));
    QVERIFY(!DnsNameMapping::create(*AddressRange::parse(u"0.0.0.0/0"_s)));
}

void TestDnsRefusedRanges::interpret_data()
{
    QTest::addColumn<QByteArray>("wire");
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("reason"); // -1: success
    QTest::addColumn<QStringList>("addresses");
    QTest::addColumn<quint32>("ttl");
    const int mismatch = int(DnsUpstreamAnswer::Kind::Mismatch);
    const int truncated = int(DnsUpstreamAnswer::Kind::Truncated);
    const int final = int(DnsUpstreamAnswer::Kind::Final);
    const QString name = u"pkg.test"_s;

    QTest::newRow("one A") << answer(name, 7, {u"pkg.test. 60 IN A 192.0.2.10"_s}) << final << -1
                           << QStringList {u"192.0.2.10"_s} << 60u;
    QTest::newRow("case differs") << answer(u"PKG.test"_s, 7, {u"PKG.test. 60 IN A 192.0.2.10"_s})
                                  << final << -1 << QStringList {u"192.0.2.10"_s} << 60u;
    QTest::newRow("ttl low") << answer(name, 7, {u"pkg.test. 0 IN A 192.0.2.10"_s}) << final << -1
                             << QStringList {u"192.0.2.10"_s} << 5u;
    QTest::newRow("ttl high") << answer(name, 7, {u"pkg.test. 86400 IN A 192.0.2.10"_s}) << final
                              << -1 << QStringList {u"192.0.2.10"_s} << 300u;
    QTest::newRow("cname") << answer(
        name, 7, {u"pkg.test. 100 IN CNAME cdn.example."_s, u"cdn.example. 50 IN A 192.0.2.11"_s})
                           << final << -1 << QStringList {u"192.0.2.11"_s} << 50u;
    QTest::newRow("other owner only")
        << answer(name, 7, {u"evil.test. 60 IN A 192.0.2.66"_s}) << final
        << int(EgressReason::NoAddress) << QStringList() << 0u;
    QTest::newRow("wrong id") << answer(name, 8, {u"pkg.test. 60 IN A 192.0.2.10"_s}) << mismatch
                              << -1 << QStringList() << 0u;
    QTest::newRow("wrong name") << answer(u"evil.test"_s, 7, {u"evil.test. 60 IN A 192.0.2.66"_s})
                                << mismatch << -1 << QStringList() << 0u;
    QTest::newRow("garbage") << QByteArray("\x00\x07garbage", 9) << mismatch << -1 << QStringList()
                             << 0u;
    QTest::newRow("truncated") << answer(name, 7, {}, LDNS_RCODE_NOERROR, true) << truncated << -1
                               << QStringList() << 0u;
    QTest::newRow("nxdomain") << answer(name, 7, {}, LDNS_RCODE_NXDOMAIN) << final
                              << int(EgressReason::UpstreamNxDomain) << QStringList() << 0u;
    QTest::newRow("servfail") << answer(name, 7, {}, LDNS_RCODE_SERVFAIL) << final
                              << int(EgressReason::UpstreamFailure) << QStringList() << 0u;
    const QString privateTargets[] = {
        u"A 127.0.0.1"_s, u"A 169.254.169.254"_s, u"A 10.1.2.3"_s,         u"A 100.100.100.200"_s,
        u"AAAA ::1"_s,    u"AAAA fd00::1"_s,      u"AAAA ::ffff:7f00:1"_s, u"AAAA fd00:ec2::254"_s};
    for (const QString &target : privateTargets) {
        QTest::addRow("private %s", qPrintable(target))
            << answer(name, 7, {u"pkg.test. 60 IN A 192.0.2.10"_s, u"pkg.test. 60 IN "_s + target})
            << final << int(EgressReason::PrivateDestination) << QStringList() << 0u;
    }
    QTest::newRow("private behind cname")
        << answer(name, 7,
                  {u"pkg.test. 60 IN CNAME in.example."_s, u"in.example. 60 IN A 10.0.0.5"_s})
        << final << int(EgressReason::PrivateDestination) << QStringList() << 0u;
}

void TestDnsRefusedRanges::interpret()
{
    QFETCH(QByteArray, wire);
    QFETCH(int, kind);
    QFETCH(int, reason);
    QFETCH(QStringList, addresses);
    QFETCH(quint32, ttl);
    const DnsUpstreamAnswer result =
        DnsUpstreamResolver::interpretAnswer(wire, 7, u"pkg.test"_s, RefusedRanges::defaults());
    QCOMPARE(int(result.kind), kind);
    if (result.kind != DnsUpstreamAnswer::Kind::Final)
        return;
    if (reason >= 0) {
        QVERIFY(!result.resolution);
        QCOMPARE(int(result.resolution.error().reason), reason);
        return;
    }
    QVERIFY(result.resolution);
    QStringList got;
    for (const QHostAddress &a : *result.resolution)
        got << a.toString();
    QCOMPARE(got, addresses);
    QCOMPARE(result.ttl, ttl);
}

void TestDnsRefusedRanges::boundTtl()
{
    QCOMPARE(DnsUpstreamResolver::boundTtl(0), 5u);
    QCOMPARE(DnsUpstreamResolver::boundTtl(5), 5u);
    QCOMPARE(DnsUpstreamResolver::boundTtl(120), 120u);
    QCOMPARE(DnsUpstreamResolver::boundTtl(0xffffffffu), 300u);
    const QByteArray query = DnsUpstreamResolver::buildQuery(u"pkg.test"_s, 0x1234);
    QVERIFY(query.size() > 12);
    QCOMPARE(quint8(query[0]), 0x12);
    QCOMPARE(quint8(query[1]), 0x34);
}

QTEST_GUILESS_MAIN(TestDnsRefusedRanges)
#include "tst_dnsrefusedranges.moc"
