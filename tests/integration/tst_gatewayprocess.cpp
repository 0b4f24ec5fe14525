// The real airlock-gateway process (docs/gateway.md) in a private network namespace whose
// nftables rule redirects the "guest's" TCP to the gateway exactly like a sandbox table does,
// with local HTTPS/HTTP upstreams under a test CA and a local DNS authority (loopback inside
// the namespace only). docs/redteam-cases.md A1-A6, D3, D4, G1, H1, E6, and the control protocol.
#include "core/gateway/dns/addressrange.h"
#include "gatewaytopology.h"

#include <QJsonArray>
#include <QJsonDocument>
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

const QHostAddress kPkgAddress = topo::PkgServer; // pkg.test and tenant.test (a shared CDN)
const QHostAddress kEvilAddress = topo::EvilServer;
const QHostAddress kWrongCertAddress(u"198.51.100.13"_s);
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

// The gateway's own topology (GatewayTopology, Side::Gateway): plain upstreams ("hello HOST
// PATH") for pkg.test (and tenant.test on the same address), evil.test, and wrongcert.test,
// which presents the certificate of other.test; private.test points at a refused address.
GatewayTopology::Options topology()
{
    using Kind = ServerEndpoint::Kind;
    const auto hello = ServerEndpoint::Answer::Hello;
    GatewayTopology::Options options;
    options.tag = u"gp"_s;
    options.hosts = {{u"pkg.test"_s, kPkgAddress},
                     {u"tenant.test"_s, kPkgAddress},
                     {u"evil.test"_s, kEvilAddress},
                     {u"wrongcert.test"_s, kWrongCertAddress}};
    options.records = {{u"private.test"_s, {u"A 10.1.2.3"_s}}};
    options.servers = {
        {u"pkg"_s, kPkgAddress, 443, Kind::Https, u"pkg.test"_s, hello},
        {u"pkg"_s, kPkgAddress, 80, Kind::Http, QString(), hello},
        {u"evil"_s, kEvilAddress, 443, Kind::Https, u"evil.test"_s, hello},
        {u"evil"_s, kEvilAddress, 80, Kind::Http, QString(), hello},
        {u"wrongcert"_s, kWrongCertAddress, 443, Kind::Https, QString(), hello, u"other.test"_s},
    };
    options.policy = basePolicy();
    return options;
}

// The response as the guest received it (head, blank line, body), empty when none arrived.
QByteArray raw(const HttpResponse &response)
{
    return response.head.isEmpty() ? QByteArray() : response.head + "\r\n" + response.body;
}

// The status code of an HTTP response ("HTTP/1.1 421 ..." → 421), 0 if none.
int responseStatus(const QByteArray &response)
{
    return response.startsWith("HTTP/1.") ? response.mid(9, 3).toInt() : 0;
}

// The body of an HTTP response (after the blank line).
QByteArray responseBody(const QByteArray &response)
{
    const qsizetype end = response.indexOf("\r\n\r\n");
    return end < 0 ? QByteArray() : response.mid(end + 4);
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
    /// The request heads, connections and SNIs one upstream endpoint recorded.
    QByteArrayList requestsTo(const QString &label, quint16 port);
    int connectionsTo(const QString &label, quint16 port);
    QStringList snisTo(const QString &label, quint16 port);
    /// A TLS handshake for `sni` on `connection`, verified against the sandbox CA.
    bool startTls(GuestConnection &connection, const QString &sni);
    /// Another gateway of the test in the host namespace, with `config`, until `ready`.
    bool startGateway(GatewayProcess &gateway, const QJsonObject &config, QString *error);

    GatewayTopology m_topo {topology()};
};

void TestGatewayProcess::initTestCase()
{
    ::signal(SIGPIPE, SIG_IGN);
    QVERIFY2(m_topo.start(), qPrintable(m_topo.lastError()));
    const QJsonObject ready = m_topo.gateway().readyMessage();
    QCOMPARE(ready.value(u"tcpPort"_s).toInt(), int(topo::GatewayTcpPort));
    QCOMPARE(ready.value(u"dnsPort"_s).toInt(), int(topo::GatewayDnsPort));
}

void TestGatewayProcess::cleanupTestCase()
{
    m_topo.tearDown();
}

QJsonObject TestGatewayProcess::waitEvent(const QString &reason, const QString &layer)
{
    const auto message = m_topo.gateway().waitFor(
        [&](const QJsonObject &m) { return isEgress(m, reason, layer); }, 5000);
    return message ? message->value(u"event"_s).toObject() : QJsonObject();
}

QByteArray TestGatewayProcess::tlsExchange(const QHostAddress &address, const QString &sni,
                                           const QByteArray &request, int *alert)
{
    auto guest = m_topo.connect(address, 443);
    if (!guest)
        return "connect failed";
    if (!startTls(*guest, sni)) {
        if (alert)
            *alert = guest->alert();
        return {};
    }
    guest->send(request);
    return raw(guest->readResponse());
}

QByteArrayList TestGatewayProcess::requestsTo(const QString &label, quint16 port)
{
    QByteArrayList heads;
    for (const HttpRequestRecord &request : m_topo.upstream().requests(label, port))
        heads.append(request.head);
    return heads;
}

int TestGatewayProcess::connectionsTo(const QString &label, quint16 port)
{
    const auto records = m_topo.upstream().connections(label);
    return int(std::count_if(records.cbegin(), records.cend(),
                             [&](const ConnectionRecord &record) { return record.port == port; }));
}

QStringList TestGatewayProcess::snisTo(const QString &label, quint16 port)
{
    QStringList snis;
    for (const ConnectionRecord &record : m_topo.upstream().connections(label)) {
        if (record.port == port)
            snis.append(record.sni);
    }
    return snis;
}

bool TestGatewayProcess::startTls(GuestConnection &connection, const QString &sni)
{
    return connection.startTls(sni.isNull() ? std::nullopt : std::optional(sni.toLatin1()),
                               m_topo.sandboxCaPem(), sni);
}

bool TestGatewayProcess::startGateway(GatewayProcess &gateway, const QJsonObject &config,
                                      QString *error)
{
    static int started = 0;
    return gateway.start(m_topo.hostNs(), m_topo.filePath(u"gateway-%1.log"_s.arg(++started)),
                         config, error)
        && gateway.waitReady(10000, error);
}

void TestGatewayProcess::allowedGetThroughTls()
{
    const QHostAddress synthetic = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(AddressRange::parse(u"100.112.0.0/16")->contains(synthetic));
    QCOMPARE(waitEvent(u"allowed"_s, u"dns"_s).value(u"dnsType"_s).toString(), u"A"_s);

    const int before = requestsTo(u"pkg"_s, 443).size();
    const QByteArray response =
        tlsExchange(synthetic, u"pkg.test"_s, get(u"/simple/?token=s3cr3t"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /simple/?token=s3cr3t\n"));
    const QByteArrayList requests = requestsTo(u"pkg"_s, 443);
    QCOMPARE(requests.size(), before + 1);
    QVERIFY(requests.last().startsWith("GET /simple/?token=s3cr3t HTTP/1.1\r\nHost: pkg.test\r\n"));
    QCOMPARE(snisTo(u"pkg"_s, 443).constLast(), u"pkg.test"_s);

    const QJsonObject event = waitEvent(u"allowed"_s, u"http"_s);
    QCOMPARE(event.value(u"verdict"_s).toString(), u"allowed"_s);
    QCOMPARE(event.value(u"sandbox"_s).toString(), topo::Sandbox);
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
    const int before = requestsTo(u"pkg"_s, 443).size();
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"pkg.test"_s, get(u"/"_s, u"tenant.test"_s));
    QCOMPARE(responseStatus(response), 421);
    QVERIFY(responseBody(response).contains("sni_host_mismatch"));
    const QJsonObject event = waitEvent(u"sni_host_mismatch"_s);
    QCOMPARE(event.value(u"verdict"_s).toString(), u"denied"_s);
    QCOMPARE(event.value(u"status"_s).toInt(), 421);
    QVERIFY(m_topo.settle());
    QCOMPARE(requestsTo(u"pkg"_s, 443).size(), before);
}

void TestGatewayProcess::noSni()
{
    const int before = connectionsTo(u"pkg"_s, 443);
    int alert = -1;
    QVERIFY(tlsExchange(kUnroutedAddress, QString(), get(u"/"_s, u"pkg.test"_s), &alert).isEmpty());
    QCOMPARE(alert, int(SSL_AD_UNRECOGNIZED_NAME));
    QCOMPARE(waitEvent(u"no_sni"_s).value(u"layer"_s).toString(), u"tls"_s);
    QVERIFY(m_topo.settle());
    QCOMPARE(connectionsTo(u"pkg"_s, 443), before);
}

void TestGatewayProcess::notTls()
{
    auto guest = m_topo.connect(kUnroutedAddress, 443);
    QVERIFY(guest);
    QVERIFY(guest->send("SSH-2.0-x\r\n"));
    QByteArray bytes;
    QVERIFY(guest->closedByPeer(5000, &bytes));
    QVERIFY(bytes.isEmpty());
    QCOMPARE(waitEvent(u"not_tls"_s).value(u"layer"_s).toString(), u"tcp"_s);
}

void TestGatewayProcess::keepAliveSecondRequestRechecked()
{
    const int before = requestsTo(u"pkg"_s, 443).size();
    auto guest = m_topo.connect(kUnroutedAddress, 443);
    QVERIFY(guest);
    QVERIFY(startTls(*guest, u"pkg.test"_s));
    QVERIFY(guest->send(get(u"/a"_s, u"pkg.test"_s)));
    QCOMPARE(responseStatus(raw(guest->readResponse())), 200);
    QVERIFY(guest->send(get(u"/b"_s, u"tenant.test"_s)));
    const QByteArray second = raw(guest->readResponse());
    QCOMPARE(responseStatus(second), 421);
    QByteArray rest;
    QVERIFY(guest->closedByPeer(5000, &rest));
    QVERIFY(m_topo.settle());
    const QByteArrayList requests = requestsTo(u"pkg"_s, 443).mid(before);
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
    auto plain = m_topo.connect(kEvilAddress, 80);
    QVERIFY(plain);
    QVERIFY(plain->send(get(u"/log?d=x"_s, u"evil.test"_s)));
    QCOMPARE(responseStatus(raw(plain->readResponse())), 403);
    const QJsonObject event = waitEvent(u"host_not_allowed"_s);
    QCOMPARE(event.value(u"layer"_s).toString(), u"http"_s);
    QCOMPARE(event.value(u"host"_s).toString(), u"evil.test"_s);
    QCOMPARE(event.value(u"name"_s).toString(), u"evil.test"_s);
    QCOMPARE(event.value(u"method"_s).toString(), u"GET"_s);
    QCOMPARE(event.value(u"path"_s).toString(), u"/log"_s); // "?d=x" redacted
    QCOMPARE(event.value(u"status"_s).toInt(), 403);
    auto proxy = m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
    QVERIFY(proxy);
    QVERIFY(proxy->send(get(u"http://evil.test/log?d=x"_s, u"evil.test"_s)));
    QCOMPARE(responseStatus(raw(proxy->readResponse())), 403);

    // E1: the DNS name is refused and never forwarded.
    QVERIFY(m_topo.resolveAddress(u"data.x.evil.test"_s).isNull());
    QVERIFY(m_topo.settle());
    QVERIFY(!m_topo.dns().queryNames().contains(u"data.x.evil.test"_s));

    QCOMPARE(connectionsTo(u"evil"_s, 443), 0);
    QCOMPARE(connectionsTo(u"evil"_s, 80), 0);
}

void TestGatewayProcess::guestChosenAddressIgnored()
{
    // A2: the guest dials evil.test's address with SNI pkg.test; the gateway dials its own
    // resolution of pkg.test.
    const QByteArray response =
        tlsExchange(kEvilAddress, u"pkg.test"_s, get(u"/a2"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /a2\n"));
    auto plain = m_topo.connect(kEvilAddress, 80);
    QVERIFY(plain);
    QVERIFY(plain->send(get(u"/a2"_s, u"pkg.test"_s)));
    QCOMPARE(responseBody(raw(plain->readResponse())), QByteArray("hello pkg.test /a2\n"));
    QVERIFY(m_topo.settle());
    QCOMPARE(connectionsTo(u"evil"_s, 443), 0);
    QCOMPARE(connectionsTo(u"evil"_s, 80), 0);
}

void TestGatewayProcess::syntheticAddressOfAnotherName()
{
    // A3: the synthetic address of pkg.test used for another name.
    const QHostAddress synthetic = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!synthetic.isNull());
    int alert = -1;
    QVERIFY(tlsExchange(synthetic, u"wrongcert.test"_s, get(u"/"_s, u"wrongcert.test"_s), &alert)
                .isEmpty());
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));
    QCOMPARE(waitEvent(u"destination_mismatch"_s).value(u"layer"_s).toString(), u"tls"_s);

    auto plain = m_topo.connect(synthetic, 80);
    QVERIFY(plain);
    QVERIFY(plain->send(get(u"/"_s, u"wrongcert.test"_s)));
    QCOMPARE(responseStatus(raw(plain->readResponse())), 421);
    QCOMPARE(waitEvent(u"destination_mismatch"_s).value(u"layer"_s).toString(), u"http"_s);
}

void TestGatewayProcess::plainHttpPort80()
{
    const QHostAddress synthetic = m_topo.resolveAddress(u"pkg.test"_s);
    const int before = requestsTo(u"pkg"_s, 80).size();
    auto guest = m_topo.connect(synthetic, 80);
    QVERIFY(guest);
    QVERIFY(guest->send(get(u"/plain"_s, u"pkg.test"_s)));
    const QByteArray response = raw(guest->readResponse());
    QCOMPARE(responseStatus(response), 200);
    QCOMPARE(responseBody(response), QByteArray("hello pkg.test /plain\n"));
    QCOMPARE(requestsTo(u"pkg"_s, 80).size(), before + 1);
    const QJsonObject event = waitEvent(u"allowed"_s, u"http"_s);
    QCOMPARE(event.value(u"port"_s).toInt(), 80);
    QCOMPARE(event.value(u"path"_s).toString(), u"/plain"_s);

    // Pipelined requests come back in order; a later request for another host on the same
    // plain connection is refused (one name per connection), and nothing of it goes upstream.
    auto again = m_topo.connect(kUnroutedAddress, 80);
    QVERIFY(again);
    QVERIFY(again->send(get(u"/one"_s, u"pkg.test"_s) + get(u"/two"_s, u"pkg.test"_s)));
    QCOMPARE(responseBody(raw(again->readResponse())), QByteArray("hello pkg.test /one\n"));
    QCOMPARE(responseBody(raw(again->readResponse())), QByteArray("hello pkg.test /two\n"));
    QVERIFY(again->send(get(u"/three"_s, u"wrongcert.test"_s)));
    QCOMPARE(responseStatus(raw(again->readResponse())), 421);
    QVERIFY(again->closedByPeer(5000));
    QVERIFY(!waitEvent(u"host_mismatch"_s).isEmpty());
    QCOMPARE(requestsTo(u"pkg"_s, 80).size(), before + 3);
}

void TestGatewayProcess::explicitProxy()
{
    // CONNECT, then TLS for the same name.
    {
        auto guest = m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
        QVERIFY(guest);
        QVERIFY(guest->send("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
        QCOMPARE(responseStatus(raw(guest->readHead())), 200);
        QVERIFY(startTls(*guest, u"pkg.test"_s));
        QVERIFY(guest->send(get(u"/tunnel"_s, u"pkg.test"_s)));
        QCOMPARE(responseBody(raw(guest->readResponse())), QByteArray("hello pkg.test /tunnel\n"));
    }
    // A5: the SNI inside the tunnel names another host.
    {
        auto guest = m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
        QVERIFY(guest);
        QVERIFY(guest->send("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
        QCOMPARE(responseStatus(raw(guest->readHead())), 200);
        QVERIFY(!startTls(*guest, u"evil.test"_s));
        QCOMPARE(guest->alert(), int(SSL_AD_ACCESS_DENIED));
        QVERIFY(!waitEvent(u"sni_connect_mismatch"_s).isEmpty());
    }
    // D1: CONNECT to an IP literal.
    {
        auto guest = m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
        QVERIFY(guest);
        QVERIFY(guest->send("CONNECT 192.0.2.7:443 HTTP/1.1\r\nHost: 192.0.2.7:443\r\n\r\n"));
        QCOMPARE(responseStatus(raw(guest->readResponse())), 403);
        QVERIFY(!waitEvent(u"ip_literal"_s).isEmpty());
    }
    // A plain proxy request in absolute form.
    {
        auto guest = m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
        QVERIFY(guest);
        QVERIFY(guest->send(get(u"http://pkg.test/proxied"_s, u"pkg.test"_s)));
        QCOMPARE(responseBody(raw(guest->readResponse())), QByteArray("hello pkg.test /proxied\n"));
    }
    QVERIFY(m_topo.settle());
    QCOMPARE(connectionsTo(u"evil"_s, 443), 0);
}

void TestGatewayProcess::redirectPassedNotFollowed()
{
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"pkg.test"_s, get(u"/redirect"_s, u"pkg.test"_s));
    QCOMPARE(responseStatus(response), 302);
    QVERIFY(response.contains("Location: https://evil.test/c\r\n"));
    QVERIFY(m_topo.settle());
    QCOMPARE(connectionsTo(u"evil"_s, 443), 0);
}

void TestGatewayProcess::largeBodiesBothWays()
{
    // Streaming with backpressure: a 3 MiB upload (Content-Length) and a 1 MiB download on one
    // keep-alive connection, both intact.
    auto guest = m_topo.connect(kUnroutedAddress, 443);
    QVERIFY(guest);
    QVERIFY(startTls(*guest, u"pkg.test"_s));
    const QByteArray body(3 * 1024 * 1024, 'u');
    QVERIFY(guest->send("POST /upload HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
                        + QByteArray::number(body.size()) + "\r\n\r\n" + body));
    QCOMPARE(responseBody(raw(guest->readResponse(20000))), QByteArray("hello pkg.test /upload\n"));
    QVERIFY(guest->send(get(u"/big"_s, u"pkg.test"_s)));
    const QByteArray big = raw(guest->readResponse(20000));
    QCOMPARE(responseStatus(big), 200);
    QCOMPARE(responseBody(big), QByteArray(1024 * 1024, 'x'));
    const auto upload = m_topo.gateway().waitFor(
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
    const int before = requestsTo(u"pkg"_s, 443).size();
    const QByteArray smuggle = "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                               "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";
    const QByteArray response = tlsExchange(kUnroutedAddress, u"pkg.test"_s, smuggle);
    QCOMPARE(responseStatus(response), 400);
    QVERIFY(!waitEvent(u"conflicting_framing"_s).isEmpty());
    QVERIFY(m_topo.settle());
    QCOMPARE(requestsTo(u"pkg"_s, 443).size(), before);
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
    QVERIFY(m_topo.settle());
    QCOMPARE(requestsTo(u"wrongcert"_s, 443).size(), 0);
}

void TestGatewayProcess::privateDestination()
{
    // E6: the authority answers a refused address; nothing is dialed.
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"private.test"_s, get(u"/"_s, u"private.test"_s));
    QCOMPARE(responseStatus(response), 403);
    QVERIFY(!waitEvent(u"private_destination"_s).isEmpty());
    QVERIFY(m_topo.resolveAddress(u"private.test"_s).isNull());
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
    // The generation is echoed: airlockd answers policy.set only once it came back.
    m_topo.gateway().send({{u"type"_s, u"policy"_s}, {u"generation"_s, 7}, {u"policy"_s, policy}});
    const auto applied = m_topo.gateway().waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"applied"_s; }, 5000);
    QVERIFY(applied);
    QCOMPARE(applied->value(u"rules"_s).toInt(), 4);
    QCOMPARE(applied->value(u"generation"_s).toInteger(), 7);
    const QByteArray response =
        tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/t"_s, u"tenant.test"_s));
    QCOMPARE(responseBody(response), QByteArray("hello tenant.test /t\n"));

    // An invalid policy is refused and the previous one stays.
    QJsonObject bad {{u"version"_s, 1}, {u"rules"_s, QJsonArray {rule(u"*.test"_s)}}};
    m_topo.gateway().send({{u"type"_s, u"policy"_s}, {u"generation"_s, 8}, {u"policy"_s, bad}});
    const auto error = m_topo.gateway().waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"error"_s; }, 5000);
    QVERIFY(error);
    QCOMPARE(error->value(u"generation"_s).toInteger(), 8);
    QVERIFY2(error->value(u"error"_s).toString().contains(u"rule 0"_s),
             qPrintable(error->value(u"error"_s).toString()));
    QCOMPARE(responseStatus(
                 tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/t"_s, u"tenant.test"_s))),
             200);

    m_topo.gateway().send({{u"type"_s, u"policy"_s}, {u"policy"_s, basePolicy()}});
    QVERIFY(m_topo.gateway().waitFor(
        [](const QJsonObject &m) { return m.value(u"type"_s) == u"applied"_s; }, 5000));
    QVERIFY(
        tlsExchange(kUnroutedAddress, u"tenant.test"_s, get(u"/"_s, u"tenant.test"_s)).isEmpty());
}

void TestGatewayProcess::limitsAndUnredirectedConnections()
{
    // A second gateway on its own port, reached without the nat redirect: the listener's
    // address stands in for the original destination (docs/gateway.md).
    QJsonObject config = m_topo.gatewayConfig();
    config.insert(u"listen"_s,
                  QJsonObject {{u"tcp"_s, u"127.0.0.1:15002"_s}, {u"dns"_s, u"127.0.0.1:0"_s}});
    config.insert(u"limits"_s, QJsonObject {{u"maxConnections"_s, 1}, {u"idleTimeoutMs"_s, 300}});
    GatewayProcess gateway;
    QString error;
    QVERIFY2(startGateway(gateway, config, &error), qPrintable(error));
    const QHostAddress local(u"127.0.0.1"_s);

    {
        auto idle = GuestConnection::connect(m_topo.hostNs(), local, 15002);
        QVERIFY(idle);
        // Accepted (not only queued by the kernel) before the next one.
        QTRY_COMPARE(m_topo.pendingAccepts(15002), 0);
        auto refused = GuestConnection::connect(m_topo.hostNs(), local, 15002);
        QVERIFY(refused);
        QVERIFY(refused->closedByPeer(2000));
        // Either may come first: on a loaded machine the idle one's 300 ms can pass before the
        // second connection is refused.
        bool tooMany = false;
        std::optional<QJsonObject> timeout;
        while (!tooMany || !timeout) {
            const auto next = gateway.waitFor(
                [](const QJsonObject &m) {
                    return isEgress(m, u"too_many_connections"_s, u"tcp"_s)
                        || isEgress(m, u"idle_timeout"_s, u"tcp"_s);
                },
                5000);
            QVERIFY2(next, tooMany ? "no idle_timeout event" : "no too_many_connections event");
            if (isEgress(*next, u"too_many_connections"_s, u"tcp"_s))
                tooMany = true;
            else
                timeout = next;
        }
        const QJsonObject event = timeout->value(u"event"_s).toObject();
        QCOMPARE(event.value(u"destination"_s).toString(), u"127.0.0.1"_s);
        QCOMPARE(event.value(u"port"_s).toInt(), 15002);
        QVERIFY(idle->closedByPeer(2000));
    }

    // The port is the listener's: pkg.test is allowed on 443 and 80 only.
    // (Until the gateway has seen the idle guest's FIN, the one slot may still be taken: a
    // refused attempt ends without an alert, and the next attempt is made.)
    const auto tlsAlert = [&] {
        auto tls = GuestConnection::connect(m_topo.hostNs(), local, 15002);
        return tls && !startTls(*tls, u"pkg.test"_s) ? tls->alert() : -2;
    };
    // Each attempt is a connection of its own, so qWaitFor (which stops at the first success),
    // not QTRY_VERIFY: that evaluates its expression once more after it held, and that second
    // connection met the slot the first still had. Seen waiting over 5 s in a loaded CI run: the
    // FIN can take that long there.
    int alert = -1;
    // An attempt the full slot refused mid-handshake can also end in the client's own
    // decode_error: only the listener's refusal of the port ends the wait.
    (void)QTest::qWaitFor([&] { return (alert = tlsAlert()) == int(SSL_AD_ACCESS_DENIED); }, 15000);
    QCOMPARE(alert, int(SSL_AD_ACCESS_DENIED));
    QVERIFY(gateway.waitFor(
        [](const QJsonObject &m) { return isEgress(m, u"port_not_allowed"_s, u"tls"_s); }, 5000));
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

void TestGatewayProcess::inheritedListeningSockets()
{
    // As airlockd starts it: sockets bound by the parent, named by fd number.
    const auto bound = [this](int type, quint16 port) {
        return inNamespace(m_topo.hostNs(), [&] {
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
        });
    };
    const int tcp = bound(SOCK_STREAM, 15003);
    const int dnsUdp = bound(SOCK_DGRAM, 15053);
    const int dnsTcp = bound(SOCK_STREAM, 15053);
    QVERIFY(tcp >= 0 && dnsUdp >= 0 && dnsTcp >= 0);
    QCOMPARE(::listen(tcp, 16), 0); // the DNS TCP socket is left for the gateway to listen on
    QJsonObject config = m_topo.gatewayConfig();
    config.insert(
        u"listen"_s,
        QJsonObject {{u"tcpFd"_s, tcp}, {u"dnsUdpFd"_s, dnsUdp}, {u"dnsTcpFd"_s, dnsTcp}});
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(m_topo.hostNs(), m_topo.filePath(u"inherited.log"_s), &error,
                           {tcp, dnsUdp, dnsTcp}),
             qPrintable(error));
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

    auto tls = GuestConnection::connect(m_topo.hostNs(), QHostAddress(u"127.0.0.1"_s), 15003);
    QVERIFY(tls);
    QVERIFY(!startTls(*tls, u"pkg.test"_s));
    QCOMPARE(tls->alert(), int(SSL_AD_ACCESS_DENIED)); // port 15003 is not allowed
    QVERIFY(gateway.waitFor(
        [](const QJsonObject &m) { return isEgress(m, u"port_not_allowed"_s, u"tls"_s); }, 5000));
    // DNS over TCP listens.
    QVERIFY(GuestConnection::connect(m_topo.hostNs(), QHostAddress(u"127.0.0.1"_s), 15053));
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

void TestGatewayProcess::garbageOnControlIsFatal()
{
    GatewayProcess gateway;
    QString error;
    QVERIFY2(gateway.spawn(m_topo.hostNs(), m_topo.filePath(u"garbage.log"_s), &error),
             qPrintable(error));
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
    QVERIFY2(gateway.spawn(m_topo.hostNs(), m_topo.filePath(u"badconfig.log"_s), &error),
             qPrintable(error));
    QJsonObject config = m_topo.gatewayConfig();
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
    QVERIFY2(gateway.spawn(m_topo.hostNs(), m_topo.filePath(u"eof.log"_s), &error),
             qPrintable(error));
    gateway.closeControl();
    QCOMPARE(gateway.waitForExit(5000), 0);
}

QTEST_GUILESS_MAIN(TestGatewayProcess)
#include "tst_gatewayprocess.moc"
