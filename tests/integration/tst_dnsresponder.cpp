// The gateway's DNS end to end on loopback: a real DnsServer on 127.0.0.3 whose upstream is a
// local authoritative test server on 127.0.0.1 (written here with ldns). docs/redteam-cases.md E1
// (denied names never reach the upstream), E5 (forged answers from another port or address are
// never learned) and E6 (answers into refused ranges are refused as private_destination).
// Network safety: every socket here is bound to and sends to 127.0.0.0/8 only.
#include "core/gateway/dns/dnsldns.h"
#include "core/gateway/dns/dnsresponder.h"
#include "core/gateway/dns/dnsserver.h"
#include "core/gateway/dns/dnsupstreamresolver.h"
#include "eventloop.h"
#include "resultcheck.h"

#include <QNetworkDatagram>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>
#include <QUdpSocket>
#include <QtEndian>

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace airlock::gateway;
using namespace airlock::policy;
using airlock::EgressReason;
using namespace Qt::StringLiterals;
using airlock::EgressPolicy;
using airlock::EgressRule;

namespace {

using namespace ldnsutil;

const QHostAddress kUpstream(u"127.0.0.1"_s);
const QHostAddress kForger(u"127.0.0.2"_s);
const QHostAddress kGateway(u"127.0.0.3"_s);

// A local authoritative server: answers names from `records` (presentation-form RR strings),
// NXDOMAIN for the rest, and logs every question it receives.
class TestAuthority : public QObject
{
public:
    QHash<QString, QStringList> records; // lower-case name without trailing dot -> RRs
    QHash<QString, int> delayMs; // answer late (or never, with -1)
    QStringList log; // every question name received, as sent
    quint16 lastId = 0;
    quint16 lastSourcePort = 0;

    bool start()
    {
        if (!m_socket.bind(kUpstream, 0))
            return false;
        connect(&m_socket, &QUdpSocket::readyRead, this, [this] { onReadyRead(); });
        return true;
    }
    quint16 port() const { return m_socket.localPort(); }

    // An answer for `name` A with `id`, holding `rrs`.
    static QByteArray answer(const QString &name, quint16 id, const QStringList &rrs,
                             ldns_pkt_rcode rcode = LDNS_RCODE_NOERROR)
    {
        Pkt pkt(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                                   LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD));
        ldns_pkt_set_id(pkt.get(), id);
        ldns_pkt_set_qr(pkt.get(), true);
        ldns_pkt_set_aa(pkt.get(), true);
        ldns_pkt_set_rcode(pkt.get(), uint8_t(rcode));
        for (const QString &text : rrs) {
            ldns_rr *rr = nullptr;
            if (ldns_rr_new_frm_str(&rr, text.toLatin1().constData(), 0, nullptr, nullptr)
                == LDNS_STATUS_OK)
                ldns_pkt_push_rr(pkt.get(), LDNS_SECTION_ANSWER, rr);
        }
        return toWire(pkt.get());
    }

private:
    void onReadyRead()
    {
        while (m_socket.hasPendingDatagrams()) {
            const QNetworkDatagram datagram = m_socket.receiveDatagram();
            const Pkt query = parse(datagram.data());
            if (!query || ldns_rr_list_rr_count(ldns_pkt_question(query.get())) != 1)
                continue;
            const ldns_rr *question = ldns_rr_list_rr(ldns_pkt_question(query.get()), 0);
            QString name = toString(ldns_rr_owner(question));
            log.append(name);
            lastId = ldns_pkt_id(query.get());
            lastSourcePort = quint16(datagram.senderPort());
            name = name.toLower();
            name.chop(1);
            const QByteArray reply = records.contains(name)
                ? answer(name, lastId, records.value(name))
                : answer(name, lastId, {}, LDNS_RCODE_NXDOMAIN);
            const int delay = delayMs.value(name, 0);
            if (delay < 0)
                continue;
            const QHostAddress to = datagram.senderAddress();
            const quint16 port = quint16(datagram.senderPort());
            QTimer::singleShot(
                delay, this, [this, reply, to, port] { m_socket.writeDatagram(reply, to, port); });
        }
    }

    QUdpSocket m_socket;
};

QByteArray query(const QString &name, quint16 type, quint16 id)
{
    Pkt pkt(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                               ldns_rr_type(type), LDNS_RR_CLASS_IN, LDNS_RD));
    ldns_pkt_set_id(pkt.get(), id);
    return toWire(pkt.get());
}

QByteArray framed(const QByteArray &message)
{
    QByteArray length(2, Qt::Uninitialized);
    qToBigEndian<quint16>(quint16(message.size()), length.data());
    return length + message;
}

// A denied query of ~250 bytes (its REFUSED answer echoes the question): answers pile up fast.
QByteArray longDeniedQuery(quint16 id)
{
    const QString label(60, u'a');
    return query(label + u'.' + label + u'.' + label + u'.' + QString(40, u'b') + u".evil.test"_s,
                 LDNS_RR_TYPE_A, id);
}

// A plain non-blocking TCP client (no Qt buffering of its own, so "never reads" means the
// kernel's receive buffer fills), on 127.0.0.4, with a small receive buffer.
class RawTcpClient
{
public:
    ~RawTcpClient()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    bool connectTo(const QHostAddress &address, quint16 port)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (m_fd < 0)
            return false;
        const int rcvbuf = 4096;
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        sockaddr_in local {};
        local.sin_family = AF_INET;
        local.sin_addr.s_addr = htonl(QHostAddress(u"127.0.0.4"_s).toIPv4Address());
        if (::bind(m_fd, reinterpret_cast<sockaddr *>(&local), sizeof local) != 0)
            return false;
        sockaddr_in to {};
        to.sin_family = AF_INET;
        to.sin_port = htons(port);
        to.sin_addr.s_addr = htonl(address.toIPv4Address());
        if (::connect(m_fd, reinterpret_cast<sockaddr *>(&to), sizeof to) != 0
            && errno != EINPROGRESS)
            return false;
        return true;
    }
    /// Bytes accepted by the kernel now (0 when full), -1 on an error (peer gone).
    qint64 trySend(QByteArrayView bytes)
    {
        const ssize_t n = ::send(m_fd, bytes.data(), size_t(bytes.size()), MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN ? 0 : -1;
        return n;
    }
    /// What has arrived, without waiting; sets `closed` on EOF or an error.
    QByteArray tryRead(bool *closed)
    {
        QByteArray out;
        char chunk[16384];
        for (;;) {
            const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
            if (n > 0) {
                out.append(chunk, n);
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                *closed = true;
            return out;
        }
    }

private:
    int m_fd = -1;
};

} // namespace

class TestDnsResponderIntegration : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void allowedNameGetsSyntheticAddress();
    void rebinding_data();
    void rebinding();
    void deniedNamesNeverReachUpstream_data();
    void deniedNamesNeverReachUpstream();
    void forgedAnswersIgnored();
    void upstreamTimeout();
    void tcpQueries();
    void tcpPeerThatNeverReadsIsNotRead();
    void tcpPeerThatTricklesAndNeverReadsIsClosed();
    void tcpBacklogIsAnsweredWhenTheyRead();
    void tcpRefusalsAreDecided_data();
    void tcpRefusalsAreDecided();

private:
    // Sends `wire` over UDP to the server and returns the parsed response (nullptr on timeout).
    Pkt ask(const QByteArray &wire, int timeoutMs = 3000);

    std::unique_ptr<TestAuthority> m_authority;
    std::optional<DnsNameMapping> m_mapping;
    std::unique_ptr<DnsResponder> m_responder;
    std::unique_ptr<DnsUpstreamResolver> m_resolver;
    std::unique_ptr<DnsServer> m_server;
};

void TestDnsResponderIntegration::init()
{
    m_authority = std::make_unique<TestAuthority>();
    QVERIFY(m_authority->start());
    m_authority->records.insert(u"pkg.test"_s, {u"pkg.test. 60 IN A 192.0.2.10"_s});

    EgressPolicy policy;
    EgressRule pkg;
    pkg.host = u"pkg.test"_s;
    EgressRule wild;
    wild.host = u"*.wild.test"_s;
    policy.rules = {pkg, wild};
    m_mapping = *DnsNameMapping::create(*AddressRange::parse(u"198.18.0.0/16"_s));
    m_responder = std::make_unique<DnsResponder>(*PolicyMatcher::create(policy), &*m_mapping);

    DnsUpstreamConfig config;
    config.address = kUpstream;
    config.port = m_authority->port();
    config.timeoutMs = 1500;
    m_resolver = std::make_unique<DnsUpstreamResolver>(config);
    // The sandbox link prefix, added at run time (GW is 203.0.113.1 on it).
    m_resolver->addRefusedRange(*AddressRange::parse(u"203.0.113.0/29"_s));

    m_server = std::make_unique<DnsServer>(m_responder.get(), m_resolver.get());
    const auto listening = m_server->listen(kGateway, 0);
    QVERIFY_RESULT(listening);
    QVERIFY(m_server->udpPort() != 0);
    QCOMPARE(m_server->tcpPort(), m_server->udpPort());
}

void TestDnsResponderIntegration::cleanup()
{
    m_server.reset();
    m_resolver.reset();
    m_responder.reset();
    m_authority.reset();
}

Pkt TestDnsResponderIntegration::ask(const QByteArray &wire, int timeoutMs)
{
    QUdpSocket client;
    if (!client.bind(QHostAddress(u"127.0.0.4"_s), 0))
        return nullptr;
    client.writeDatagram(wire, kGateway, m_server->udpPort());
    if (!QTest::qWaitFor([&] { return client.hasPendingDatagrams(); }, timeoutMs))
        return nullptr;
    return parse(client.receiveDatagram().data());
}

void TestDnsResponderIntegration::allowedNameGetsSyntheticAddress()
{
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    const Pkt response = ask(query(u"Pkg.Test."_s, LDNS_RR_TYPE_A, 0x1111));
    QVERIFY(response);
    QCOMPARE(ldns_pkt_id(response.get()), quint16(0x1111));
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_NOERROR));
    QCOMPARE(ldns_pkt_ancount(response.get()), 1);
    const ldns_rr *rr = ldns_rr_list_rr(ldns_pkt_answer(response.get()), 0);
    QCOMPARE(toString(ldns_rr_rdf(rr, 0)), u"198.18.0.1"_s);
    QCOMPARE(ldns_rr_ttl(rr), DnsResponder::kTtl);
    QCOMPARE(m_mapping->nameFor(QHostAddress(u"198.18.0.1"_s)), u"pkg.test"_s);
    QCOMPARE(m_resolver->cached(u"pkg.test"_s),
             QList<QHostAddress> {QHostAddress(u"192.0.2.10"_s)});
    QCOMPARE(m_authority->log, QStringList {u"pkg.test."_s});

    QCOMPARE(spy.size(), 1);
    const auto event = spy.at(0).at(0).value<DnsEvent>();
    QCOMPARE(event.name, u"pkg.test"_s);
    QCOMPARE(event.type, quint16(1));
    QCOMPARE(event.verdict, DnsVerdict::Answer);
    QCOMPARE(event.reason, EgressReason::Allowed);

    // AAAA and HTTPS of the allowed name: NODATA, and not asked upstream.
    for (const quint16 type : {quint16(28), quint16(65)}) {
        const Pkt nodata = ask(query(u"pkg.test"_s, type, 0x2222));
        QVERIFY(nodata);
        QCOMPARE(int(ldns_pkt_get_rcode(nodata.get())), int(LDNS_RCODE_NOERROR));
        QCOMPARE(ldns_pkt_ancount(nodata.get()), 0);
    }
    // A second A query comes from the cache.
    const Pkt again = ask(query(u"pkg.test"_s, LDNS_RR_TYPE_A, 0x3333));
    QVERIFY(again);
    QCOMPARE(toString(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(again.get()), 0), 0)),
             u"198.18.0.1"_s);
    QCOMPARE(m_authority->log.size(), 1);
}

void TestDnsResponderIntegration::rebinding_data()
{
    QTest::addColumn<QStringList>("records");
    const QString a = u"rebind.wild.test. 60 IN A 192.0.2.10"_s;
    QTest::newRow("loopback") << QStringList {u"rebind.wild.test. 60 IN A 127.0.0.1"_s};
    QTest::newRow("metadata") << QStringList {u"rebind.wild.test. 60 IN A 169.254.169.254"_s};
    QTest::newRow("alibaba metadata")
        << QStringList {u"rebind.wild.test. 60 IN A 100.100.100.200"_s};
    QTest::newRow("private mixed") << QStringList {a, u"rebind.wild.test. 60 IN A 10.0.0.1"_s};
    QTest::newRow("gateway link") << QStringList {u"rebind.wild.test. 60 IN A 203.0.113.1"_s};
    QTest::newRow("v6 loopback") << QStringList {a, u"rebind.wild.test. 60 IN AAAA ::1"_s};
    QTest::newRow("v4-mapped") << QStringList {a,
                                               u"rebind.wild.test. 60 IN AAAA ::ffff:127.0.0.1"_s};
    QTest::newRow("ULA") << QStringList {a, u"rebind.wild.test. 60 IN AAAA fd00::1"_s};
    QTest::newRow("via cname") << QStringList {u"rebind.wild.test. 60 IN CNAME internal.example."_s,
                                               u"internal.example. 60 IN A 192.168.1.1"_s};
}

void TestDnsResponderIntegration::rebinding()
{
    QFETCH(QStringList, records);
    m_authority->records.insert(u"rebind.wild.test"_s, records);
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    const Pkt response = ask(query(u"rebind.wild.test"_s, LDNS_RR_TYPE_A, 0x4444));
    QVERIFY(response);
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_REFUSED));
    QCOMPARE(ldns_pkt_ancount(response.get()), 0);
    QCOMPARE(m_authority->log.size(), 1);
    QVERIFY(!m_mapping->lookup(u"rebind.wild.test"_s));
    QVERIFY(!m_resolver->cached(u"rebind.wild.test"_s));
    QCOMPARE(spy.size(), 1);
    const auto event = spy.at(0).at(0).value<DnsEvent>();
    QCOMPARE(event.verdict, DnsVerdict::Refused);
    QCOMPARE(wireName(event.reason), u"private_destination"_s);
}

void TestDnsResponderIntegration::deniedNamesNeverReachUpstream_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("reason");
    QTest::newRow("evil A") << u"evil.test"_s << 1 << u"host_not_allowed"_s;
    QTest::newRow("exfil base32")
        << u"mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpi.gezdgnbvgy3tqojq.x.evil.test"_s << 1
        << u"host_not_allowed"_s;
    QTest::newRow("evil AAAA") << u"evil.test"_s << 28 << u"host_not_allowed"_s;
    QTest::newRow("suffix trick") << u"pkg.test.evil.test"_s << 1 << u"host_not_allowed"_s;
    QTest::newRow("allowed TXT") << u"pkg.test"_s << 16 << u"type_not_allowed"_s;
    QTest::newRow("allowed ANY") << u"pkg.test"_s << 255 << u"type_not_allowed"_s;
    QTest::newRow("ip literal") << u"127.0.0.1"_s << 1 << u"malformed_host"_s;
}

void TestDnsResponderIntegration::deniedNamesNeverReachUpstream()
{
    QFETCH(QString, name);
    QFETCH(int, type);
    QFETCH(QString, reason);
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    const Pkt response = ask(query(name, quint16(type), 0x5555));
    QVERIFY(response);
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_REFUSED));
    QCOMPARE(spy.size(), 1);
    QCOMPARE(wireName(spy.at(0).at(0).value<DnsEvent>().reason), reason);
    // Whatever the resolver would send after the answer, the authority (same event loop) has
    // read by now.
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(m_authority->log, QStringList()); // E1: nothing reached the upstream
    QCOMPARE(m_resolver->pendingCount(), 0);
}

void TestDnsResponderIntegration::forgedAnswersIgnored()
{
    // The real answer comes late; meanwhile forged answers arrive at the resolver's source
    // port from the upstream's address on another port, and from another address on the
    // upstream's port, with the right id and question (the strongest off-path forgery) and
    // with sprayed ids.
    m_authority->records.insert(u"slow.wild.test"_s, {u"slow.wild.test. 60 IN A 192.0.2.20"_s});
    m_authority->delayMs.insert(u"slow.wild.test"_s, 400);

    QUdpSocket client;
    QVERIFY(client.bind(QHostAddress(u"127.0.0.4"_s), 0));
    client.writeDatagram(query(u"slow.wild.test"_s, LDNS_RR_TYPE_A, 0x6666), kGateway,
                         m_server->udpPort());
    QTRY_COMPARE_WITH_TIMEOUT(m_authority->log.size(), 1, 2000);
    const quint16 id = m_authority->lastId;
    const quint16 resolverPort = m_authority->lastSourcePort;

    QUdpSocket otherPort;
    QVERIFY(otherPort.bind(kUpstream, 0));
    QUdpSocket otherAddress;
    QVERIFY(otherAddress.bind(kForger, m_authority->port()));
    int sent = 0;
    for (int i = 0; i < 200; ++i) {
        const quint16 forgedId = i == 0 ? id : quint16(id + i * 331);
        const QByteArray forged = TestAuthority::answer(u"slow.wild.test"_s, forgedId,
                                                        {u"slow.wild.test. 300 IN A 192.0.2.66"_s});
        otherPort.writeDatagram(forged, QHostAddress(u"127.0.0.1"_s), resolverPort);
        otherAddress.writeDatagram(forged, QHostAddress(u"127.0.0.1"_s), resolverPort);
        sent += 2;
    }
    // And a forged answer sent to the gateway's own DNS port, as a guest would (QR set: dropped).
    client.writeDatagram(
        TestAuthority::answer(u"slow.wild.test"_s, id, {u"slow.wild.test. 300 IN A 192.0.2.66"_s}),
        kGateway, m_server->udpPort());

    QTRY_VERIFY_WITH_TIMEOUT(client.hasPendingDatagrams(), 3000);
    const Pkt response = parse(client.receiveDatagram().data());
    QVERIFY(response);
    QCOMPARE(ldns_pkt_id(response.get()), quint16(0x6666));
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_NOERROR));
    QCOMPARE(toString(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(response.get()), 0), 0)),
             u"198.18.0.1"_s);
    // Only the real upstream's answer was learned.
    QCOMPARE(m_resolver->cached(u"slow.wild.test"_s),
             QList<QHostAddress> {QHostAddress(u"192.0.2.20"_s)});
    QVERIFY(m_resolver->ignoredDatagrams() > 0);
    QVERIFY(m_resolver->ignoredDatagrams() <= quint64(sent));
    QVERIFY(airlock::test::runUntilIdle()); // the forged "response" to the gateway handled
    QVERIFY(!client.hasPendingDatagrams()); // nothing answered the forged "response"
}

void TestDnsResponderIntegration::upstreamTimeout()
{
    m_authority->records.insert(u"silent.wild.test"_s, {u"silent.wild.test. 60 IN A 192.0.2.1"_s});
    m_authority->delayMs.insert(u"silent.wild.test"_s, -1);
    // The upstream's 1.5 s ran out: a 1.4 s timer started first has fired by the answer.
    QObject context;
    bool earlierTimerFired = false;
    QTimer::singleShot(1400, Qt::PreciseTimer, &context, [&] { earlierTimerFired = true; });
    const Pkt response = ask(query(u"silent.wild.test"_s, LDNS_RR_TYPE_A, 0x7777), 4000);
    QVERIFY(response);
    QCOMPARE(int(ldns_pkt_get_rcode(response.get())), int(LDNS_RCODE_SERVFAIL));
    QVERIFY(earlierTimerFired);
    QCOMPARE(m_resolver->pendingCount(), 0);
    // Unknown allowed names get NXDOMAIN from the upstream, passed on.
    const Pkt nx = ask(query(u"missing.wild.test"_s, LDNS_RR_TYPE_A, 0x7778));
    QVERIFY(nx);
    QCOMPARE(int(ldns_pkt_get_rcode(nx.get())), int(LDNS_RCODE_NXDOMAIN));
}

void TestDnsResponderIntegration::tcpQueries()
{
    QTcpSocket tcp;
    tcp.connectToHost(kGateway, m_server->tcpPort());
    QVERIFY(tcp.waitForConnected(2000));
    // Two pipelined queries in one write: an allowed A and a denied one.
    QByteArray frames;
    for (const QByteArray &q : {query(u"pkg.test"_s, LDNS_RR_TYPE_A, 0x0101),
                                query(u"evil.test"_s, LDNS_RR_TYPE_A, 0x0202)}) {
        QByteArray length(2, Qt::Uninitialized);
        qToBigEndian<quint16>(quint16(q.size()), length.data());
        frames += length + q;
    }
    tcp.write(frames);
    QHash<quint16, int> rcodes;
    QByteArray buffer;
    bool parsed = true;
    // The assertions below say what was missing when the wait ran out.
    static_cast<void>(QTest::qWaitFor(
        [&] {
            buffer += tcp.readAll();
            while (parsed && buffer.size() >= 2) {
                const quint16 length = qFromBigEndian<quint16>(buffer.constData());
                if (buffer.size() < 2 + length)
                    break;
                const Pkt response = parse(QByteArrayView(buffer).sliced(2, length));
                buffer.remove(0, 2 + length);
                parsed = bool(response);
                if (response)
                    rcodes.insert(ldns_pkt_id(response.get()),
                                  int(ldns_pkt_get_rcode(response.get())));
            }
            return !parsed || rcodes.size() >= 2;
        },
        3000));
    QVERIFY(parsed);
    QCOMPARE(rcodes.value(0x0101, -1), int(LDNS_RCODE_NOERROR));
    QCOMPARE(rcodes.value(0x0202, -1), int(LDNS_RCODE_REFUSED));
    QCOMPARE(m_authority->log, QStringList {u"pkg.test."_s});
}

// docs/reviews/2026-12-01-gateway-round3.md#f2: a client that pipelines and never reads. The server
// stops reading it once kMaxTcpPendingBytes of answers wait, so the client's send stalls (the old
// server read and answered all 64 MB), decides nothing more while paused, and closes it when idle.
void TestDnsResponderIntegration::tcpPeerThatNeverReadsIsNotRead()
{
    m_server->setTcpIdleTimeout(1500);
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    RawTcpClient client;
    QVERIFY(client.connectTo(kGateway, m_server->tcpPort()));
    QTRY_COMPARE(m_server->tcpConnectionCount(), 1);
    QByteArray batch;
    for (int i = 0; i < 1000; ++i)
        batch += framed(longDeniedQuery(quint16(i)));
    constexpr qint64 kCap = 64LL * 1024 * 1024;
    qint64 sent = 0;
    qsizetype offset = 0;
    bool failed = false;
    // Fill the socket, let the server (this event loop) read what it will, again: until a
    // round takes nothing (the server had the bytes and did not read) or kCap went in.
    for (qint64 round = -1; round != 0 && sent < kCap && !failed;) {
        round = 0;
        for (qint64 n; (n = client.trySend(QByteArrayView(batch).sliced(offset))) != 0;) {
            if (n < 0) {
                failed = true;
                break;
            }
            round += n;
            offset = (offset + n) % batch.size();
        }
        sent += round;
        QVERIFY(airlock::test::runUntilIdle());
    }
    const qint64 decided = spy.size();
    qInfo("sent %lld bytes before the send stalled; %lld queries decided", qlonglong(sent),
          qlonglong(decided));
    QVERIFY2(!failed, "the server closed the connection while it was being fed");
    QVERIFY2(sent < kCap, "the server kept reading a client that never reads");
    QVERIFY(decided > 0);
    QVERIFY(decided * qint64(batch.size() / 1000) < sent);
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(spy.size(), decided); // paused: nothing more read while the answers wait
    QCOMPARE(m_server->tcpConnectionCount(), 1);
    // No complete message read, so the idle timer is not restarted: closed.
    QTRY_COMPARE_WITH_TIMEOUT(m_server->tcpConnectionCount(), 0, 3000);
    QCOMPARE(spy.size(), decided);
}

// A peer that never reads and sends at a pace its send never stalls on: once 64 KiB of answers
// wait unread (Qt's buffer plus the kernel's send queue) its queries no longer refresh the idle
// timer, and it is closed. Before, every query restarted the timer: open for ever.
void TestDnsResponderIntegration::tcpPeerThatTricklesAndNeverReadsIsClosed()
{
    // The client's pace (a burst per 20 ms tick) against the idle timeout (300 ms, 15 ticks): a
    // burst (~12 KB) never makes its send stall. Closed once 64 KiB of answers wait and then
    // 15 ticks pass without a refresh; were the timer refreshed, it would stay open (at most
    // 60 ticks here, four idle timeouts).
    m_server->setTcpIdleTimeout(300);
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    RawTcpClient client;
    QVERIFY(client.connectTo(kGateway, m_server->tcpPort()));
    QTRY_COMPARE(m_server->tcpConnectionCount(), 1);
    QByteArray burst;
    for (int i = 0; i < 50; ++i)
        burst += framed(longDeniedQuery(quint16(i)));
    qint64 sent = 0;
    int ticks = 0;
    bool failed = false;
    QTimer pace;
    connect(&pace, &QTimer::timeout, this, [&] {
        const qint64 n = client.trySend(burst);
        failed = failed || n < 0;
        sent += std::max<qint64>(0, n);
        ++ticks;
    });
    pace.start(20);
    QTRY_VERIFY_WITH_TIMEOUT(m_server->tcpConnectionCount() == 0 || ticks >= 60, 10000);
    pace.stop();
    qInfo("closed after %d ticks, %lld bytes sent, %lld queries decided", ticks, qlonglong(sent),
          qlonglong(spy.size()));
    QCOMPARE(m_server->tcpConnectionCount(), 0);
    QVERIFY(ticks < 60);
}

// The other side of the bound: a client that sends far more than the bound and reads only
// afterwards gets every answer (reading resumes on bytesWritten, from Qt's buffer and the
// kernel's).
void TestDnsResponderIntegration::tcpBacklogIsAnsweredWhenTheyRead()
{
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    RawTcpClient client;
    QVERIFY(client.connectTo(kGateway, m_server->tcpPort()));
    constexpr int kQueries = 20000; // ~5 MB of answers: more than the kernel buffers hold
    QByteArray all;
    for (int i = 0; i < kQueries; ++i)
        all += framed(longDeniedQuery(quint16(i)));
    qsizetype offset = 0;
    QByteArray received;
    QSet<quint16> ids;
    bool closed = false;
    QTRY_COMPARE(m_server->tcpConnectionCount(), 1);
    // Feed everything first (reading nothing) until the send stalls (a round takes nothing
    // though the server, this event loop, had the chance to read), then read while sending.
    bool reading = false;
    bool parsed = true;
    // One step: send what the kernel takes, let the server run, read what arrived; again while
    // anything moved.
    const auto step = [&] {
        for (bool moved = true; moved && ids.size() < kQueries && !closed && parsed;) {
            qint64 round = 0;
            for (qint64 n; offset < all.size()
                 && (n = client.trySend(QByteArrayView(all).sliced(offset))) > 0;)
                round += n, offset += n;
            airlock::test::runUntilIdle();
            // Nothing more went out: the send stalled (or all of it is out). Read from now on.
            if (!reading && round == 0)
                reading = true;
            qsizetype got = 0;
            if (reading) {
                const QByteArray more = client.tryRead(&closed);
                got = more.size();
                received += more;
                while (parsed && received.size() >= 2) {
                    const quint16 length = qFromBigEndian<quint16>(received.constData());
                    if (received.size() < 2 + length)
                        break;
                    const Pkt response = parse(QByteArrayView(received).sliced(2, length));
                    received.remove(0, 2 + length);
                    parsed = response
                        && int(ldns_pkt_get_rcode(response.get())) == int(LDNS_RCODE_REFUSED);
                    if (response)
                        ids.insert(ldns_pkt_id(response.get()));
                }
            }
            moved = round > 0 || got > 0;
        }
        return ids.size() >= kQueries || closed || !parsed;
    };
    static_cast<void>(QTest::qWaitFor(step, 30000)); // the assertions below say what is missing
    qInfo("%lld answers", qlonglong(ids.size()));
    QVERIFY(parsed); // each answer parses and is REFUSED
    QVERIFY(reading);
    QVERIFY(!closed);
    QCOMPARE(ids.size(), kQueries);
    QCOMPARE(spy.size(), kQueries);
}

// docs/reviews/2026-12-01-gateway-round3.md#f3: every refusal of the TCP transport is a decision
// (an egress event).
void TestDnsResponderIntegration::tcpRefusalsAreDecided_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("held");
    QTest::addColumn<int>("reason");
    QTest::newRow("frame over 4096")
        << "\x20\x00"_ba + QByteArray(64, 'x') << 0 << int(EgressReason::MalformedQuery);
    QTest::newRow("frame of 4097")
        << "\x10\x01"_ba + QByteArray(64, 'x') << 0 << int(EgressReason::MalformedQuery);
    QTest::newRow("frame under 12") << "\x00\x05hello"_ba << 0 << int(EgressReason::NotAQuery);
    QTest::newRow("frame of 0") << "\x00\x00"_ba << 0 << int(EgressReason::NotAQuery);
    QTest::newRow("33rd connection")
        << framed(query(u"pkg.test"_s, LDNS_RR_TYPE_A, 7)) << DnsServer::kMaxTcpConnections
        << int(EgressReason::TooManyConnections);
}

void TestDnsResponderIntegration::tcpRefusalsAreDecided()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, held);
    QFETCH(int, reason);
    std::vector<std::unique_ptr<QTcpSocket>> holders;
    for (int i = 0; i < held; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(kGateway, m_server->tcpPort());
        QVERIFY(socket->waitForConnected(2000));
        holders.push_back(std::move(socket));
    }
    QTRY_COMPARE(m_server->tcpConnectionCount(), held);
    QSignalSpy spy(m_server.get(), &DnsServer::decided);
    QTcpSocket tcp;
    tcp.connectToHost(kGateway, m_server->tcpPort());
    QVERIFY(tcp.waitForConnected(2000));
    tcp.write(bytes);
    QTRY_COMPARE(tcp.state(), QAbstractSocket::UnconnectedState);
    QCOMPARE(tcp.readAll(), QByteArray());
    QTRY_COMPARE(spy.size(), 1);
    const auto event = spy.at(0).at(0).value<DnsEvent>();
    QCOMPARE(int(event.reason), reason);
    QCOMPARE(int(event.verdict), int(DnsVerdict::Drop));
    QVERIFY(!event.detail.isEmpty());
    QCOMPARE(m_server->tcpConnectionCount(), held);
}

QTEST_GUILESS_MAIN(TestDnsResponderIntegration)
#include "tst_dnsresponder.moc"
