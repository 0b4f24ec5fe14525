// A policy change reaches connections that are already open (docs/gateway.md, "Policy changes
// and open connections"): an agent that keeps a keep-alive TLS connection, a CONNECT tunnel or
// a plain-HTTP connection open must not keep access the person took away. After deny-all the
// connection is closed at once (policy_revoked), nothing more reaches the upstream; after a
// rule is narrowed the connection stays, and each further request is checked against the rule
// in force when it arrives. Each case asserts what the upstream recorded after the change.
#include "redteamtestbase.h"

#include <QJsonArray>
#include <QScopeGuard>
#include <QTest>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

namespace {

QJsonObject denyAll()
{
    return {{u"version"_s, 1}, {u"rules"_s, QJsonArray {}}};
}

QByteArray get(const QByteArray &target, const QByteArray &host)
{
    return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
}

} // namespace

class TestRedteamRevocation : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void denyAllClosesOpenConnections_data();
    void denyAllClosesOpenConnections();
    void narrowedRuleChecksTheNextRequest();
    void requestInFlightIsAnswered403();

private:
    /// An open connection on which one request was answered: "tls" (pkg.test:443), "tunnel"
    /// (CONNECT pkg.test:443 on the explicit proxy, TLS inside) or "http" (http.test:80).
    std::unique_ptr<GuestConnection> openAnswered(const QString &mode, QByteArray *host);
};

std::unique_ptr<GuestConnection> TestRedteamRevocation::openAnswered(const QString &mode,
                                                                     QByteArray *host)
{
    std::unique_ptr<GuestConnection> connection;
    if (mode == u"tls") {
        *host = "pkg.test";
        bool handshake = false;
        connection = openTls(m_topo.resolveAddress(u"pkg.test"_s), *host, &handshake);
        if (!handshake)
            return nullptr;
    } else if (mode == u"tunnel") {
        *host = "pkg.test";
        connection = openProxy();
        if (!connection
            || !connection->send("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n")
            || connection->readHead().status != 200
            || !connection->startTls(*host, m_topo.sandboxCaPem(), u"pkg.test"_s))
            return nullptr;
    } else {
        *host = "http.test";
        connection = m_topo.connect(m_topo.resolveAddress(u"http.test"_s), 80);
    }
    if (!connection || !connection->send(get("/before", *host))
        || connection->readResponse().status != 200)
        return nullptr;
    return connection;
}

void TestRedteamRevocation::denyAllClosesOpenConnections_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("keep-alive TLS") << u"tls"_s;
    QTest::newRow("CONNECT tunnel") << u"tunnel"_s;
    QTest::newRow("plain HTTP port 80") << u"http"_s;
}

void TestRedteamRevocation::denyAllClosesOpenConnections()
{
    QFETCH(QString, mode);
    const auto restore = qScopeGuard([&] { m_topo.applyPolicy(GatewayTopology::redteamPolicy()); });
    QByteArray host;
    auto connection = openAnswered(mode, &host);
    QVERIFY2(connection, "the connection was not admitted before the change");
    m_topo.resetObservations();
    // applyPolicy() returns after the gateway's `applied`: the revocation came before it.
    QVERIFY(m_topo.applyPolicy(denyAll()));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"policy_revoked"_s}));
    // A request on the same connection now: it is closed, and the upstream sees nothing.
    connection->send(get("/after", host));
    QVERIFY2(connection->closedByPeer(5000), "the connection stayed open after deny-all");
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

void TestRedteamRevocation::narrowedRuleChecksTheNextRequest()
{
    const auto restore = qScopeGuard([&] { m_topo.applyPolicy(GatewayTopology::redteamPolicy()); });
    QByteArray host;
    auto connection = openAnswered(u"tls"_s, &host);
    QVERIFY(connection);
    QJsonObject narrowed = GatewayTopology::redteamPolicy();
    QJsonArray rules;
    for (const QJsonValue &rule : narrowed.value(u"rules"_s).toArray()) {
        if (rule.toObject().value(u"host"_s) != u"pkg.test"_s)
            rules.append(rule);
    }
    rules.append(QJsonObject {{u"host"_s, u"pkg.test"_s},
                              {u"ports"_s, QJsonArray {443}},
                              {u"methods"_s, QJsonArray {u"GET"_s}},
                              {u"pathPrefixes"_s, QJsonArray {u"/simple/"_s}}});
    narrowed.insert(u"rules"_s, rules);
    m_topo.resetObservations();
    QVERIFY(m_topo.applyPolicy(narrowed));
    // The name and port are still allowed: the connection stays, and its next request meets
    // the narrowed rule.
    QVERIFY(
        connection->send("POST /upload HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 1\r\n\r\nx"));
    const HttpResponse refused = connection->readResponse();
    REDTEAM_CHECK(expectDenyHttp(refused, {403}, {u"method_not_allowed"_s, u"path_not_allowed"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));

    bool handshake = false;
    auto again = openTls(m_topo.resolveAddress(u"pkg.test"_s), host, &handshake);
    QVERIFY(again && handshake);
    QVERIFY(again->send(get("/simple/", host)));
    QCOMPARE(again->readResponse().status, 200);
}

void TestRedteamRevocation::requestInFlightIsAnswered403()
{
    const auto restore = qScopeGuard([&] { m_topo.applyPolicy(GatewayTopology::redteamPolicy()); });
    bool handshake = false;
    auto connection = openTls(m_topo.resolveAddress(u"pkg.test"_s), "pkg.test"_ba, &handshake);
    QVERIFY(connection && handshake);
    // A body announced and not sent: the request is upstream and waits for its body.
    QVERIFY(connection->send(
        "POST /upload HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 100000\r\n\r\npart"));
    // The gateway dials the upstream only after it forwarded the head: that connection is the
    // fact that the request is in flight.
    QTRY_COMPARE_WITH_TIMEOUT(m_topo.upstream().connections(u"pkg"_s).size(), 1, 5000);
    QVERIFY(m_topo.applyPolicy(denyAll()));
    const HttpResponse response = connection->readResponse();
    REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"policy_revoked"_s}));
    QVERIFY(connection->closedByPeer(5000));
}

QTEST_MAIN(TestRedteamRevocation)
#include "tst_redteam_revocation.moc"
