// DnsResponder::decide/finish without sockets: one row per query shape of docs/dns.md and of
// docs/redteam-cases.md principles 2-4 and E1 (names outside the policy are refused and never
// resolved).
#include "core/gateway/dns/dnsldns.h"
#include "core/gateway/dns/dnsresponder.h"

#include <QRandomGenerator>
#include <QSet>
#include <QTest>

using namespace airlock::gateway;
using namespace airlock::policy;
using airlock::EgressReason;
using namespace Qt::StringLiterals;
using airlock::EgressPolicy;
using airlock::EgressRule;

namespace {

using namespace ldnsutil;

PolicyMatcher casesPolicy()
{
    EgressPolicy policy;
    EgressRule pkg;
    pkg.host = u"pkg.test"_s;
    EgressRule wild;
    wild.host = u"*.wild.test"_s;
    policy.rules = {pkg, wild};
    return *PolicyMatcher::create(policy);
}

// A query built by ldns: `name` in presentation form, `type`, `klass`, `id`, RD set.
QByteArray query(const QString &name, quint16 type, quint16 klass = LDNS_RR_CLASS_IN,
                 quint16 id = 0x4242)
{
    Pkt pkt(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                               ldns_rr_type(type), ldns_rr_class(klass), LDNS_RD));
    if (!pkt)
        qFatal("cannot build test query");
    ldns_pkt_set_id(pkt.get(), id);
    return toWire(pkt.get());
}

QByteArray withHeaderByte(QByteArray wire, int index, quint8 value)
{
    wire[index] = char(value);
    return wire;
}

} // namespace

class TestDnsResponder : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void decide_data();
    void decide();
    void malformed_data();
    void malformed();
    void randomBytes();
    void finishAnswers();
    void finishFailures_data();
    void finishFailures();
    void finishPolicyChanged();
    void reasonNamesAreDistinct();

private:
    std::optional<DnsNameMapping> m_mapping;
};

void TestDnsResponder::init()
{
    m_mapping = *DnsNameMapping::create(*AddressRange::parse(u"198.18.0.0/16"_s));
}

void TestDnsResponder::decide_data()
{
    QTest::addColumn<QString>("qname"); // ldns presentation form
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("klass");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<int>("reason");
    QTest::addColumn<QString>("name"); // in the decision

    const int in = LDNS_RR_CLASS_IN;
    const int resolve = int(DnsVerdict::Resolve), nodata = int(DnsVerdict::NoData),
              refused = int(DnsVerdict::Refused);
    const int allowed = int(EgressReason::Allowed), denied = int(EgressReason::HostNotAllowed),
              malformed = int(EgressReason::MalformedHost),
              badType = int(EgressReason::TypeNotAllowed);

    QTest::newRow("allowed A") << u"pkg.test"_s << 1 << in << resolve << allowed << u"pkg.test"_s;
    QTest::newRow("allowed A trailing dot")
        << u"pkg.test."_s << 1 << in << resolve << allowed << u"pkg.test"_s;
    QTest::newRow("allowed A case")
        << u"PKG.Test."_s << 1 << in << resolve << allowed << u"pkg.test"_s;
    QTest::newRow("wildcard A") << u"a.b.wild.test"_s << 1 << in << resolve << allowed
                                << u"a.b.wild.test"_s;
    QTest::newRow("wildcard apex")
        << u"wild.test"_s << 1 << in << refused << denied << u"wild.test"_s;
    QTest::newRow("denied") << u"evil.test"_s << 1 << in << refused << denied << u"evil.test"_s;
    QTest::newRow("exfil base32")
        << u"mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpi.gezdgnbvgy3tqojqgeztkmbq.x.evil.test"_s << 1
        << in << refused << denied
        << u"mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpi.gezdgnbvgy3tqojqgeztkmbq.x.evil.test"_s;
    QTest::newRow("exfil under allowed suffix label")
        << u"pkg.test.evil.test"_s << 1 << in << refused << denied << u"pkg.test.evil.test"_s;
    QTest::newRow("no label boundary")
        << u"evilpkg.test"_s << 1 << in << refused << denied << u"evilpkg.test"_s;
    QTest::newRow("ip literal") << u"127.0.0.1"_s << 1 << in << refused << malformed
                                << u"127.0.0.1."_s;
    QTest::newRow("ip literal short")
        << u"127.1"_s << 1 << in << refused << malformed << u"127.1."_s;
    QTest::newRow("ip literal hex")
        << u"0x7f.0.0.1"_s << 1 << in << refused << malformed << u"0x7f.0.0.1."_s;
    QTest::newRow("ip literal decimal")
        << u"2130706433"_s << 1 << in << refused << malformed << u"2130706433."_s;
    QTest::newRow("underscore") << u"_x.pkg.test"_s << 1 << in << refused << malformed
                                << u"_x.pkg.test."_s;
    QTest::newRow("dot inside label")
        << u"pkg\\.test"_s << 1 << in << refused << malformed << u"pkg\\.test."_s;
    QTest::newRow("NUL in label") << u"pkg\\000.test"_s << 1 << in << refused << malformed
                                  << u"pkg\\000.test."_s;
    QTest::newRow("high byte") << u"p\\195\\164kg.test"_s << 1 << in << refused << malformed
                               << u"p\\195\\164kg.test."_s;
    QTest::newRow("root") << u"."_s << 1 << in << refused << malformed << u"."_s;
    QTest::newRow("AAAA allowed") << u"pkg.test"_s << 28 << in << nodata << allowed
                                  << u"pkg.test"_s;
    QTest::newRow("SVCB allowed") << u"pkg.test"_s << 64 << in << nodata << allowed
                                  << u"pkg.test"_s;
    QTest::newRow("HTTPS allowed")
        << u"pkg.test"_s << 65 << in << nodata << allowed << u"pkg.test"_s;
    QTest::newRow("AAAA denied") << u"evil.test"_s << 28 << in << refused << denied
                                 << u"evil.test"_s;
    QTest::newRow("HTTPS denied") << u"evil.test"_s << 65 << in << refused << denied
                                  << u"evil.test"_s;
    QTest::newRow("MX") << u"pkg.test"_s << 15 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("TXT") << u"pkg.test"_s << 16 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("ANY") << u"pkg.test"_s << 255 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("CNAME") << u"pkg.test"_s << 5 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("NS") << u"pkg.test"_s << 2 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("AXFR") << u"pkg.test"_s << 252 << in << refused << badType << u"pkg.test"_s;
    QTest::newRow("TXT denied") << u"evil.test"_s << 16 << in << refused << denied
                                << u"evil.test"_s;
    QTest::newRow("PTR reverse") << u"1.0.0.127.in-addr.arpa"_s << 12 << in << refused << denied
                                 << u"1.0.0.127.in-addr.arpa"_s;
    QTest::newRow("class CH") << u"pkg.test"_s << 1 << int(LDNS_RR_CLASS_CH) << refused
                              << int(EgressReason::ClassNotAllowed) << u"pkg.test."_s;
    QTest::newRow("class ANY") << u"pkg.test"_s << 1 << int(LDNS_RR_CLASS_ANY) << refused
                               << int(EgressReason::ClassNotAllowed) << u"pkg.test."_s;
}

void TestDnsResponder::decide()
{
    QFETCH(QString, qname);
    QFETCH(int, type);
    QFETCH(int, klass);
    QFETCH(int, verdict);
    QFETCH(int, reason);
    QFETCH(QString, name);

    DnsResponder responder(casesPolicy(), &*m_mapping);
    const QByteArray wire = query(qname, quint16(type), quint16(klass), 0xbeef);
    const DnsDecision d = responder.decide(wire);
    QCOMPARE(dnsVerdictName(d.verdict), dnsVerdictName(DnsVerdict(verdict)));
    QCOMPARE(wireName(d.reason), wireName(EgressReason(reason)));
    QCOMPARE(d.name, name);
    QCOMPARE(int(d.type), type);
    QCOMPARE(m_mapping->size(), 0); // decide() never assigns addresses

    if (d.verdict == DnsVerdict::Resolve) {
        // The only verdict that reaches the upstream: allowed A names (E1).
        QVERIFY(d.response.isEmpty());
        QCOMPARE(d.query, wire);
        return;
    }
    QVERIFY(d.query.isEmpty());
    const Pkt response = parse(d.response);
    QVERIFY(response);
    QCOMPARE(ldns_pkt_id(response.get()), quint16(0xbeef));
    QVERIFY(ldns_pkt_qr(response.get()));
    QVERIFY(ldns_pkt_rd(response.get()));
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())),
             d.verdict == DnsVerdict::Refused ? int(LDNS_RCODE_REFUSED) : int(LDNS_RCODE_NOERROR));
    QCOMPARE(ldns_pkt_ancount(response.get()), 0);
    QCOMPARE(ldns_pkt_nscount(response.get()), 0);
    QCOMPARE(ldns_pkt_arcount(response.get()), 0);
    // The question is echoed as sent, case preserved.
    QCOMPARE(ldns_pkt_qdcount(response.get()), 1);
    const ldns_rr *question = ldns_rr_list_rr(ldns_pkt_question(response.get()), 0);
    const Pkt sent = parse(wire);
    const ldns_rr *sentQuestion = ldns_rr_list_rr(ldns_pkt_question(sent.get()), 0);
    QCOMPARE(toString(ldns_rr_owner(question)), toString(ldns_rr_owner(sentQuestion)));
    QCOMPARE(int(ldns_rr_get_type(question)), type);
    QCOMPARE(int(ldns_rr_get_class(question)), klass);
}

void TestDnsResponder::malformed_data()
{
    QTest::addColumn<QByteArray>("wire");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<int>("reason");

    const QByteArray a = query(u"pkg.test"_s, 1);
    const int formerr = int(DnsVerdict::FormErr), drop = int(DnsVerdict::Drop),
              notimp = int(DnsVerdict::NotImp);
    const int malformed = int(EgressReason::MalformedQuery),
              notQuery = int(EgressReason::NotAQuery);

    QTest::newRow("empty") << QByteArray() << drop << notQuery;
    QTest::newRow("11 bytes") << a.first(11) << drop << notQuery;
    QTest::newRow("QR set") << withHeaderByte(a, 2, quint8(a[2]) | 0x80) << drop << notQuery;
    QTest::newRow("too long") << a + QByteArray(5000, '\0') << drop << malformed;
    QTest::newRow("no question") << withHeaderByte(a.first(12), 5, 0) << formerr << malformed;
    QTest::newRow("question cut") << a.first(a.size() - 3) << formerr << malformed;
    // QDCOUNT 2 with the same question twice.
    QTest::newRow("two questions")
        << withHeaderByte(a + a.sliced(12), 5, 2) << formerr << malformed;
    QTest::newRow("qdcount 2, one question") << withHeaderByte(a, 5, 2) << formerr << malformed;
    // A question name that points at itself (compression loop).
    QTest::newRow("compression loop")
        << QByteArray::fromHex("424201000001000000000000c00c00010001") << formerr << malformed;
    QTest::newRow("pointer forward")
        << QByteArray::fromHex("424201000001000000000000c0ff00010001") << formerr << malformed;
    QTest::newRow("label too long") << QByteArray::fromHex("42420100000100000000000040")
            + QByteArray(64, 'a') + QByteArray::fromHex("0000010001")
                                    << formerr << malformed;
    QTest::newRow("ancount 1, no record") << withHeaderByte(a, 7, 1) << formerr << malformed;
    QTest::newRow("TC in query") << withHeaderByte(a, 2, quint8(a[2]) | 0x02) << formerr
                                 << malformed;
    QTest::newRow("opcode STATUS") << withHeaderByte(a, 2, quint8((a[2] & 0x87) | (2 << 3)))
                                   << notimp << int(EgressReason::OpcodeNotImplemented);
    QTest::newRow("opcode NOTIFY") << withHeaderByte(a, 2, quint8((a[2] & 0x87) | (4 << 3)))
                                   << notimp << int(EgressReason::OpcodeNotImplemented);
    QTest::newRow("opcode UPDATE") << withHeaderByte(a, 2, quint8((a[2] & 0x87) | (5 << 3)))
                                   << notimp << int(EgressReason::OpcodeNotImplemented);
    // Opcodes ldns has no name for (found by fuzz_dns_query): echoed as raw bits.
    QTest::newRow("opcode 12") << withHeaderByte(a, 2, quint8((a[2] & 0x87) | (12 << 3))) << notimp
                               << int(EgressReason::OpcodeNotImplemented);
    QTest::newRow("opcode 12, unparseable")
        << withHeaderByte(withHeaderByte(a, 2, quint8((a[2] & 0x87) | (12 << 3))), 7, 1) << formerr
        << malformed;
}

void TestDnsResponder::malformed()
{
    QFETCH(QByteArray, wire);
    QFETCH(int, verdict);
    QFETCH(int, reason);
    DnsResponder responder(casesPolicy(), &*m_mapping);
    const DnsDecision d = responder.decide(wire);
    QCOMPARE(dnsVerdictName(d.verdict), dnsVerdictName(DnsVerdict(verdict)));
    QCOMPARE(wireName(d.reason), wireName(EgressReason(reason)));
    if (d.verdict == DnsVerdict::Drop) {
        QVERIFY(d.response.isEmpty());
        return;
    }
    const Pkt response = parse(d.response);
    QVERIFY(response);
    QCOMPARE(ldns_pkt_id(response.get()), quint16(0x4242));
    QVERIFY(ldns_pkt_qr(response.get()));
    QCOMPARE(ldns_pkt_ancount(response.get()), 0);
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())),
             d.verdict == DnsVerdict::FormErr ? int(LDNS_RCODE_FORMERR) : int(LDNS_RCODE_NOTIMPL));
    QCOMPARE(quint8(d.response.at(2)) & 0x78, quint8(wire.at(2)) & 0x78); // opcode echoed
}

void TestDnsResponder::randomBytes()
{
    // Garbage never crashes, never reaches the upstream and never answers with data.
    DnsResponder responder(casesPolicy(), &*m_mapping);
    QRandomGenerator random(1234);
    const QByteArray a = query(u"pkg.test"_s, 1);
    for (int i = 0; i < 20000; ++i) {
        QByteArray wire;
        if (i % 2) {
            wire.resize(random.bounded(0, 600));
            for (char &c : wire)
                c = char(random.bounded(256));
        } else {
            wire = a; // mutate a valid query
            for (int flips = random.bounded(1, 4); flips > 0; --flips)
                wire[random.bounded(wire.size())] = char(random.bounded(256));
        }
        const DnsDecision d = responder.decide(wire);
        if (d.verdict == DnsVerdict::Resolve) {
            QCOMPARE(d.reason, EgressReason::Allowed);
            QVERIFY(d.name == u"pkg.test"_s || d.name.endsWith(u".wild.test"_s));
            continue;
        }
        QVERIFY(d.verdict != DnsVerdict::Answer);
        if (!d.response.isEmpty()) {
            const Pkt response = parse(d.response);
            QVERIFY(response);
            QCOMPARE(ldns_pkt_ancount(response.get()), 0);
        }
    }
}

void TestDnsResponder::finishAnswers()
{
    DnsResponder responder(casesPolicy(), &*m_mapping);
    const QList<QHostAddress> upstream {QHostAddress(u"192.0.2.10"_s)};

    const DnsDecision pending = responder.decide(query(u"PKG.test."_s, 1, LDNS_RR_CLASS_IN, 7));
    QCOMPARE(pending.verdict, DnsVerdict::Resolve);
    const DnsDecision d = responder.finish(pending, upstream);
    QCOMPARE(d.verdict, DnsVerdict::Answer);
    QCOMPARE(d.reason, EgressReason::Allowed);
    QCOMPARE(d.address, QHostAddress(u"198.18.0.1"_s));
    QVERIFY(d.query.isEmpty());

    const Pkt response = parse(d.response);
    QVERIFY(response);
    QCOMPARE(ldns_pkt_id(response.get()), quint16(7));
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_NOERROR));
    QVERIFY(ldns_pkt_aa(response.get()));
    QCOMPARE(ldns_pkt_ancount(response.get()), 1);
    const ldns_rr *rr = ldns_rr_list_rr(ldns_pkt_answer(response.get()), 0);
    QCOMPARE(int(ldns_rr_get_type(rr)), int(LDNS_RR_TYPE_A));
    QCOMPARE(ldns_rr_ttl(rr), DnsResponder::kTtl);
    QCOMPARE(toString(ldns_rr_owner(rr)), u"PKG.test."_s);
    QCOMPARE(toString(ldns_rr_rdf(rr, 0)), u"198.18.0.1"_s); // never the upstream's address
    QCOMPARE(m_mapping->nameFor(QHostAddress(u"198.18.0.1"_s)), u"pkg.test"_s);

    // Stable: the same name maps to the same address; another name to the next one.
    const DnsDecision again = responder.finish(responder.decide(query(u"pkg.test"_s, 1)), upstream);
    QCOMPARE(again.address, QHostAddress(u"198.18.0.1"_s));
    const DnsDecision other =
        responder.finish(responder.decide(query(u"x.wild.test"_s, 1)), upstream);
    QCOMPARE(other.address, QHostAddress(u"198.18.0.2"_s));
    QCOMPARE(m_mapping->nameFor(other.address), u"x.wild.test"_s);
}

void TestDnsResponder::finishFailures_data()
{
    QTest::addColumn<int>("failure");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<int>("rcode");
    QTest::newRow("private") << int(EgressReason::PrivateDestination) << int(DnsVerdict::Refused)
                             << int(LDNS_RCODE_REFUSED);
    QTest::newRow("nxdomain") << int(EgressReason::UpstreamNxDomain) << int(DnsVerdict::NxDomain)
                              << int(LDNS_RCODE_NXDOMAIN);
    QTest::newRow("no address") << int(EgressReason::NoAddress) << int(DnsVerdict::NoData)
                                << int(LDNS_RCODE_NOERROR);
    QTest::newRow("timeout") << int(EgressReason::UpstreamTimeout) << int(DnsVerdict::ServFail)
                             << int(LDNS_RCODE_SERVFAIL);
    QTest::newRow("failure") << int(EgressReason::UpstreamFailure) << int(DnsVerdict::ServFail)
                             << int(LDNS_RCODE_SERVFAIL);
    QTest::newRow("overloaded") << int(EgressReason::Overloaded) << int(DnsVerdict::ServFail)
                                << int(LDNS_RCODE_SERVFAIL);
}

void TestDnsResponder::finishFailures()
{
    QFETCH(int, failure);
    QFETCH(int, verdict);
    QFETCH(int, rcode);
    DnsResponder responder(casesPolicy(), &*m_mapping);
    const DnsDecision pending = responder.decide(query(u"pkg.test"_s, 1));
    const DnsDecision d =
        responder.finish(pending, std::unexpected(DnsFailure {EgressReason(failure), u"test"_s}));
    QCOMPARE(dnsVerdictName(d.verdict), dnsVerdictName(DnsVerdict(verdict)));
    QCOMPARE(int(d.reason), failure);
    const Pkt response = parse(d.response);
    QVERIFY(response);
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), rcode);
    QCOMPARE(ldns_pkt_ancount(response.get()), 0);
    QCOMPARE(m_mapping->size(), 0); // nothing mapped for a refused name
}

void TestDnsResponder::finishPolicyChanged()
{
    DnsResponder responder(casesPolicy(), &*m_mapping);
    const DnsDecision pending = responder.decide(query(u"pkg.test"_s, 1));
    responder.setPolicy(*PolicyMatcher::create(EgressPolicy::denyAll()));
    const DnsDecision d =
        responder.finish(pending, QList<QHostAddress> {QHostAddress(u"192.0.2.1"_s)});
    QCOMPARE(d.verdict, DnsVerdict::Refused);
    QCOMPARE(d.reason, EgressReason::HostNotAllowed);
    QCOMPARE(m_mapping->size(), 0);
    // A decision that was not pending cannot be finished into an answer.
    const DnsDecision refused = responder.decide(query(u"evil.test"_s, 1));
    QCOMPARE(responder.finish(refused, QList<QHostAddress> {QHostAddress(u"192.0.2.1"_s)}).verdict,
             DnsVerdict::Drop);
}

// Egress events carry these names (dns.md, the window's reason words): each value has its own
// snake_case name, including the transport's too_many_connections
// (docs/reviews/2026-12-01-gateway-round3.md#f3).
void TestDnsResponder::reasonNamesAreDistinct()
{
    QSet<QString> names;
    for (int i = 0; i <= int(EgressReason::TooManyConnections); ++i) {
        const QString name = wireName(EgressReason(i));
        QVERIFY2(!name.isEmpty() && name == name.toLower() && !name.contains(u' '),
                 qPrintable(name));
        QVERIFY2(!names.contains(name), qPrintable(name));
        names.insert(name);
    }
    QVERIFY(names.contains(QStringLiteral("too_many_connections")));
}

QTEST_GUILESS_MAIN(TestDnsResponder)
#include "tst_dnsresponder.moc"
