// docs/redteam-cases.md classes G (HTTP framing) and H (redirects), from the guest namespace
// through the real gateway to the recording upstream servers. docs/redteam.md.
#include "redteamtestbase.h"

#include <QTest>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

class TestRedteamHttp : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void G1_data();
    void G1();
    void connectionCloseIsHonoured_data();
    void connectionCloseIsHonoured();
    void H1_data();
    void H1();
    void H1_curlFollows();
};

// G1: CL/TE ambiguity and other framing that two parsers could read differently.
void TestRedteamHttp::G1_data()
{
    QTest::addColumn<QByteArray>("request");
    const QByteArray post = "POST /upload HTTP/1.1\r\nHost: pkg.test\r\n";
    QTest::newRow("CL and TE, smuggled GET for tenant.test") << post
            + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
              "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";
    QTest::newRow("TE and CL, smuggled GET for tenant.test") << post
            + "Transfer-Encoding: chunked\r\nContent-Length: 48\r\n\r\n0\r\n\r\n"
              "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";
    QTest::newRow("two different Content-Length")
        << post + "Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde";
    QTest::newRow("Transfer-Encoding: chunked, identity")
        << post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n";
    QTest::newRow("Content-Length: +5") << post + "Content-Length: +5\r\n\r\nabcde";
    QTest::newRow("chunked twice")
        << post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    QTest::newRow("space before the colon")
        << post + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n";
}

void TestRedteamHttp::G1()
{
    QFETCH(QByteArray, request);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QVERIFY(connection->send(request));
    const HttpResponse response = connection->readResponse();
    const QStringList reasons {u"conflicting_framing"_s, u"bad_content_length"_s,
                               u"bad_transfer_encoding"_s, u"malformed_header"_s,
                               u"malformed_request"_s};
    REDTEAM_CHECK(expectDenyHttp(response, {400}, reasons));
    QVERIFY2(connection->closedByPeer(3000), "the connection stayed open after a framing error");
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, reasons));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// RFC 9112 §9.6: a request with the close option (or HTTP/1.0 without keep-alive) is the last
// one: the upstream is told so, nothing the guest pipelines after it goes anywhere, and the
// gateway closes the guest's connection after the response instead of keeping it open.
void TestRedteamHttp::connectionCloseIsHonoured_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("HTTP/1.1 Connection: close")
        << "GET /first HTTP/1.1\r\nHost: pkg.test\r\nConnection: close\r\n\r\n"_ba;
    QTest::newRow("HTTP/1.1 Connection: Close (any letter case)")
        << "GET /first HTTP/1.1\r\nHost: pkg.test\r\nConnection: Close\r\n\r\n"_ba;
    QTest::newRow("HTTP/1.0") << "GET /first HTTP/1.0\r\nHost: pkg.test\r\n\r\n"_ba;
}

void TestRedteamHttp::connectionCloseIsHonoured()
{
    QFETCH(QByteArray, request);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QVERIFY(connection->send(request + "GET /after-close HTTP/1.1\r\nHost: pkg.test\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QCOMPARE(response.status, 200);
    QVERIFY2(connection->closedByPeer(5000), "the gateway kept the connection after close");
    QVERIFY(m_topo.settle());
    QStringList targets;
    QByteArrayList closes;
    for (const auto &c : m_topo.upstream().connections(u"pkg"_s)) {
        for (const auto &r : c.requests) {
            targets << QString::fromLatin1(r.target);
            closes << r.values("Connection"_ba).join(',');
        }
    }
    QCOMPARE(targets, QStringList {u"/first"_s});
    QCOMPARE(closes, QByteArrayList {"close"_ba});
}

// H1: a redirect to somewhere denied is passed on as is and never followed by the gateway;
// the guest's own follow-up is denied.
void TestRedteamHttp::H1_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("location");
    QTest::newRow("302 to the metadata address")
        << "/redirect-metadata"_ba << 302 << "http://169.254.169.254/"_ba;
    QTest::newRow("307 to evil.test") << "/redirect-evil"_ba << 307 << "https://evil.test/c"_ba;
}

void TestRedteamHttp::H1()
{
    QFETCH(QByteArray, path);
    QFETCH(int, status);
    QFETCH(QByteArray, location);
    const QHostAddress api = m_topo.resolveAddress(u"api.test"_s);
    QVERIFY2(!api.isNull(), "api.test does not resolve");
    bool handshake = false;
    auto connection = openTls(api, "api.test"_ba, &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QVERIFY(connection->send("GET " + path + " HTTP/1.1\r\nHost: api.test\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QCOMPARE(response.status, status);
    QCOMPARE(response.header("Location"), location);
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"allowed"_s, {}));
    QVERIFY(m_topo.settle());
    // The gateway did not follow: one request upstream, to api.test, nothing else anywhere.
    const auto records = m_topo.upstream().connections();
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().label, u"api"_s);
    QCOMPARE(records.first().requests.size(), 1);
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));

    // The guest follows by itself: denied.
    m_topo.resetObservations();
    if (status == 302) {
        const quint64 before = m_topo.counter(u"drop_special_destination"_s);
        QVERIFY(!m_topo.connect(QHostAddress(u"169.254.169.254"_s), 80, 1500));
        QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(u"drop_special_destination"_s) > before, 3000);
        REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    } else {
        bool followed = true;
        auto follow = openTls(topo::EvilServer, "evil.test"_ba, &followed);
        QVERIFY(follow);
        QVERIFY2(!followed, "TLS to evil.test completed");
        REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    }
}

// H1 with a real client that follows redirects (curl -L): the first hop passes, the second is
// denied, evil.test sees nothing.
void TestRedteamHttp::H1_curlFollows()
{
    const QHostAddress api = m_topo.resolveAddress(u"api.test"_s);
    QVERIFY(!api.isNull());
    const CommandResult result = m_topo.curl(
        {u"-L"_s, u"--resolve"_s, u"api.test:443:"_s + api.toString(), u"--resolve"_s,
         u"evil.test:443:"_s + topo::EvilServer.toString(), u"https://api.test/redirect-evil"_s});
    QVERIFY(result.finished);
    QVERIFY2(result.exitCode != 0, result.standardOutput.constData());
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
    QVERIFY(m_topo.settle());
    QCOMPARE(m_topo.upstream().connections(u"api"_s).size(), 1);
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
}

QTEST_GUILESS_MAIN(TestRedteamHttp)
#include "tst_redteam_http.moc"
