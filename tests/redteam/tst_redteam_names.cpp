// docs/redteam-cases.md classes A (which name is this connection for?), B (spelling of names) and C
// (matching rules), from the guest namespace through the real gateway. docs/redteam.md.
#include "redteamtestbase.h"

#include <QJsonArray>
#include <QScopeGuard>
#include <QTest>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

class TestRedteamNames : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void A1();
    void A2_data();
    void A2();
    void A3_data();
    void A3();
    void A4_data();
    void A4();
    void A5();
    void A6();
    void A7_data();
    void A7();
    void A8_data();
    void A8();
    void B1_data();
    void B1();
    void B2();
    void B3_data();
    void B3();
    void B4_data();
    void B4();
    void C1_data();
    void C1();
    void C2_data();
    void C2();
    void C2_publicSuffixWildcardRefused_data();
    void C2_publicSuffixWildcardRefused();
    void C3_data();
    void C3();

private:
    /// Applies `policy` (the gateway's `applied`) and checks that the gateway's DNS now answers
    /// `probe` (NOERROR) or refuses it (expectAnswer false).
    bool applyPolicy(const QJsonObject &policy, const QString &probe, bool expectAnswer);
};

bool TestRedteamNames::applyPolicy(const QJsonObject &policy, const QString &probe,
                                   bool expectAnswer)
{
    if (!m_topo.applyPolicy(policy))
        return false;
    const DnsResult answer = m_topo.resolve(probe);
    return answer.answered && (answer.rcode == 0) == expectAnswer;
}

// A1: domain fronting on a shared address: SNI pkg.test, Host tenant.test.
void TestRedteamNames::A1()
{
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY2(!pkg.isNull(), "pkg.test does not resolve through the gateway");
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY2(connection && handshake,
             qPrintable(connection ? connection->lastError() : u"no TCP connection"_s));
    QVERIFY(connection->send("GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n"));
    REDTEAM_CHECK(expectDenyHttp(connection->readResponse(), {421}, {u"sni_host_mismatch"_s}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"sni_host_mismatch"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// A2: an allowed name dialed at the attacker's address: the gateway dials its own resolution.
void TestRedteamNames::A2_data()
{
    QTest::addColumn<QStringList>("curlArguments");
    QTest::addColumn<int>("status");
    const QString evil = topo::EvilServer.toString();
    QTest::newRow("https pkg.test at evil's address")
        << QStringList {u"--resolve"_s, u"pkg.test:443:"_s + evil, u"https://pkg.test/a2"_s} << 200;
    QTest::newRow("http http.test (allowed on 80) at evil's address")
        << QStringList {u"--resolve"_s, u"http.test:80:"_s + evil, u"http://http.test/a2"_s} << 200;
    QTest::newRow("http pkg.test (443 only) at evil's address")
        << QStringList {u"--resolve"_s, u"pkg.test:80:"_s + evil, u"http://pkg.test/a2"_s} << 403;
}

void TestRedteamNames::A2()
{
    QFETCH(QStringList, curlArguments);
    QFETCH(int, status);
    const CommandResult result =
        m_topo.curl(curlArguments + QStringList {u"-w"_s, u"\n%{http_code}"_s});
    QVERIFY2(result.finished, "curl did not finish");
    QCOMPARE(curlStatus(result), status);
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
    if (status == 200) {
        QVERIFY2(result.standardOutput.contains("label=pkg"), result.standardOutput.constData());
        const auto pkg = m_topo.upstream().connections(u"pkg"_s);
        QCOMPARE(pkg.size(), 1);
        QCOMPARE(pkg.first().requests.size(), 1);
        QCOMPARE(pkg.first().requests.first().target, "/a2"_ba);
        REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"allowed"_s, {}));
    } else {
        QVERIFY(result.standardOutput.contains("port_not_allowed"));
        REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"port_not_allowed"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    }
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
}

// A3: the address of an allowed name reused with another name.
void TestRedteamNames::A3_data()
{
    QTest::addColumn<bool>("withSni");
    QTest::addColumn<QStringList>("reasons");
    QTest::newRow("SNI tenant.test")
        << true << QStringList {u"destination_mismatch"_s, u"host_not_allowed"_s};
    QTest::newRow("no SNI, then Host tenant.test") << false << QStringList {u"no_sni"_s};
}

void TestRedteamNames::A3()
{
    QFETCH(bool, withSni);
    QFETCH(QStringList, reasons);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = true;
    auto connection =
        openTls(pkg, withSni ? std::optional("tenant.test"_ba) : std::nullopt, &handshake);
    QVERIFY2(connection, "no TCP connection to the gateway");
    if (handshake) {
        // Already a failure; show what the gateway would have done with the request.
        connection->send("GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n");
        const HttpResponse response = connection->readResponse();
        QFAIL(qPrintable(u"TLS handshake completed (deny-tls expected); answer: "_s
                         + QString::fromLatin1(response.head)));
    }
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, reasons));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// A4: missing or IP-literal SNI.
void TestRedteamNames::A4_data()
{
    QTest::addColumn<QString>("client");
    QTest::addColumn<QByteArray>("sni"); // empty: no server_name extension
    QTest::addColumn<QString>("reason");
    QTest::newRow("no SNI") << u"raw"_s << QByteArray() << u"no_sni"_s;
    QTest::newRow("no SNI, openssl s_client") << u"openssl"_s << QByteArray() << u"no_sni"_s;
    QTest::newRow("IPv4 literal SNI") << u"raw"_s << "198.51.100.10"_ba << u"bad_sni"_s;
    QTest::newRow("IPv6 literal SNI") << u"raw"_s << "2001:db8::7"_ba << u"bad_sni"_s;
}

void TestRedteamNames::A4()
{
    QFETCH(QString, client);
    QFETCH(QByteArray, sni);
    QFETCH(QString, reason);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    if (client == u"openssl") {
        const CommandResult result = runInNamespace(
            m_topo.guestNs(), u"openssl"_s,
            {u"s_client"_s, u"-connect"_s, pkg.toString() + u":443"_s, u"-noservername"_s,
             u"-CAfile"_s, m_topo.sandboxCaFile(), u"-verify_return_error"_s, u"-brief"_s},
            10000, "GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
        QVERIFY(result.finished);
        QVERIFY2(result.exitCode != 0, result.standardError.constData());
        QVERIFY2(!result.standardError.contains("CONNECTION ESTABLISHED"),
                 result.standardError.constData());
    } else {
        bool handshake = true;
        auto connection =
            openTls(pkg, sni.isEmpty() ? std::nullopt : std::optional(sni), &handshake);
        QVERIFY(connection);
        QVERIFY2(!handshake, "TLS handshake completed; deny-tls expected");
    }
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {reason}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// A5: explicit proxy CONNECT pkg.test:443, then a ClientHello for evil.test.
void TestRedteamNames::A5()
{
    auto connection = openProxy();
    QVERIFY2(connection, "cannot connect to the explicit proxy GW:3128");
    QVERIFY(connection->send("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n"));
    const HttpResponse established = connection->readHead();
    QVERIFY2(established.status == 200, established.head.constData());
    QVERIFY2(!connection->startTls("evil.test"_ba, m_topo.sandboxCaPem(), u"evil.test"_s),
             "TLS for evil.test completed inside a CONNECT for pkg.test");
    REDTEAM_CHECK(
        expectEgress(m_topo.gateway(), u"denied"_s,
                     {u"sni_connect_mismatch"_s, u"sni_host_mismatch"_s, u"authority_mismatch"_s,
                      u"host_not_allowed"_s, u"destination_mismatch"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// A6: second request on a kept-alive connection names another host.
void TestRedteamNames::A6()
{
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QCOMPARE(connection->alpn(), "http/1.1"_ba);
    QVERIFY(connection->send("GET /a HTTP/1.1\r\nHost: pkg.test\r\n\r\n"));
    const HttpResponse first = connection->readResponse();
    QVERIFY2(first.status == 200 && first.body.contains("label=pkg"), first.head.constData());
    QVERIFY(connection->send("GET /b HTTP/1.1\r\nHost: tenant.test\r\n\r\n"));
    REDTEAM_CHECK(expectDenyHttp(connection->readResponse(), {421}, {u"sni_host_mismatch"_s}));
    QVERIFY2(connection->closedByPeer(3000), "the gateway kept the connection open after 421");
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"sni_host_mismatch"_s}));
    QVERIFY(m_topo.settle());
    const auto records = m_topo.upstream().connections();
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().requests.size(), 1);
    QCOMPARE(records.first().requests.first().target, "/a"_ba);
    QVERIFY(!records.first().received.contains("tenant.test"));
}

// A7: absolute-form target and Host disagree.
void TestRedteamNames::A7_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("proxy: target pkg.test, Host evil.test")
        << u"proxy"_s << "GET http://pkg.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n"_ba;
    QTest::newRow("proxy: target evil.test, Host pkg.test")
        << u"proxy"_s << "GET http://evil.test/x HTTP/1.1\r\nHost: pkg.test\r\n\r\n"_ba;
    QTest::newRow("TLS pkg.test: target https://evil.test/")
        << u"tls:pkg.test"_s << "GET https://evil.test/ HTTP/1.1\r\nHost: pkg.test\r\n\r\n"_ba;
    QTest::newRow("port 80 http.test: target http://evil.test/")
        << u"http:http.test"_s << "GET http://evil.test/x HTTP/1.1\r\nHost: http.test\r\n\r\n"_ba;
}

void TestRedteamNames::A7()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, request);
    QString problem;
    const HttpResponse response = requestVia(mode, request, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    REDTEAM_CHECK(
        expectDenyHttp(response, {400}, {u"authority_mismatch"_s, u"sni_host_mismatch"_s}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// A8: two Host values.
void TestRedteamNames::A8_data()
{
    QTest::addColumn<QByteArray>("hostLines");
    QTest::addColumn<QStringList>("reasons");
    const QStringList malformed {u"malformed_host"_s};
    QTest::newRow("two Host lines, same") << "Host: pkg.test\r\nHost: pkg.test\r\n"_ba << malformed;
    QTest::newRow("two Host lines") << "Host: pkg.test\r\nHost: evil.test\r\n"_ba << malformed;
    QTest::newRow("list in one line") << "Host: pkg.test, evil.test\r\n"_ba << malformed;
    QTest::newRow("folded Host line") << "Host: pkg.test\r\n evil.test\r\n"_ba
                                      << QStringList {u"malformed_host"_s, u"malformed_header"_s};
    // docs/reviews/2026-11-30-redteam-pass.md#f8: brackets around a name are malformed, not an IP
    // literal.
    QTest::newRow("Host: [pkg.test]") << "Host: [pkg.test]\r\n"_ba << malformed;
}

void TestRedteamNames::A8()
{
    QFETCH(QByteArray, hostLines);
    QFETCH(QStringList, reasons);
    QString problem;
    const HttpResponse response =
        requestVia(u"tls:pkg.test"_s, "GET / HTTP/1.1\r\n" + hostLines + "\r\n", &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    REDTEAM_CHECK(expectDenyHttp(response, {400}, reasons));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, reasons));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// B1: a trailing dot is the same name; two are malformed.
void TestRedteamNames::B1_data()
{
    QTest::addColumn<QByteArray>("sni");
    QTest::addColumn<QByteArray>("host");
    QTest::addColumn<int>("status"); // 0: deny-tls
    QTest::newRow("SNI and Host pkg.test.") << "pkg.test."_ba
                                            << "pkg.test."_ba << 200;
    QTest::newRow("SNI pkg.test, Host pkg.test.") << "pkg.test"_ba
                                                  << "pkg.test."_ba << 200;
    QTest::newRow("SNI pkg.test., Host pkg.test") << "pkg.test."_ba
                                                  << "pkg.test"_ba << 200;
    QTest::newRow("Host pkg.test..") << "pkg.test"_ba
                                     << "pkg.test.."_ba << 400;
    QTest::newRow("SNI pkg.test..") << "pkg.test.."_ba
                                    << "pkg.test"_ba << 0;
}

void TestRedteamNames::B1()
{
    QFETCH(QByteArray, sni);
    QFETCH(QByteArray, host);
    QFETCH(int, status);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = false;
    auto connection = openTls(pkg, sni, &handshake);
    QVERIFY(connection);
    if (status == 0) {
        QVERIFY2(!handshake, "TLS with SNI pkg.test.. completed");
        REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"bad_sni"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
        return;
    }
    QVERIFY2(handshake, qPrintable(connection->lastError()));
    QVERIFY(connection->send("GET /b1 HTTP/1.1\r\nHost: " + host + "\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    if (status == 400) {
        REDTEAM_CHECK(expectDenyHttp(response, {400}, {u"malformed_host"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
        return;
    }
    QVERIFY2(response.status == 200, response.head.constData());
    const auto records = m_topo.upstream().connections(u"pkg"_s);
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().sni, u"pkg.test"_s); // the canonical name upstream
    QCOMPARE(records.first().requests.size(), 1);
}

// B2: letter case.
void TestRedteamNames::B2()
{
    const QHostAddress pkg = m_topo.resolveAddress(u"Pkg.TEST"_s);
    QVERIFY2(!pkg.isNull(), "Pkg.TEST does not resolve");
    QCOMPARE(pkg, m_topo.resolveAddress(u"pkg.test"_s));
    bool handshake = false;
    auto connection = openTls(pkg, "Pkg.TEST"_ba, &handshake);
    QVERIFY2(connection && handshake, qPrintable(connection ? connection->lastError() : QString()));
    QVERIFY(connection->send("GET /b2 HTTP/1.1\r\nHost: PKG.test\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QVERIFY2(response.status == 200, response.head.constData());
    const auto records = m_topo.upstream().connections(u"pkg"_s);
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().sni, u"pkg.test"_s);
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"allowed"_s, {}));
}

// B3: a port in Host inside TLS to pkg.test:443.
void TestRedteamNames::B3_data()
{
    QTest::addColumn<QByteArray>("host");
    QTest::addColumn<int>("status");
    QTest::addColumn<QStringList>("reasons");
    QTest::newRow(":443") << "pkg.test:443"_ba << 200 << QStringList();
    QTest::newRow(":8443") << "pkg.test:8443"_ba << 421
                           << QStringList {u"port_mismatch"_s, u"sni_host_mismatch"_s};
    QTest::newRow(":0443") << "pkg.test:0443"_ba << 400 << QStringList {u"malformed_host"_s};
    QTest::newRow("empty port") << "pkg.test:"_ba << 400 << QStringList {u"malformed_host"_s};
}

void TestRedteamNames::B3()
{
    QFETCH(QByteArray, host);
    QFETCH(int, status);
    QFETCH(QStringList, reasons);
    QString problem;
    const HttpResponse response =
        requestVia(u"tls:pkg.test"_s, "GET /b3 HTTP/1.1\r\nHost: " + host + "\r\n\r\n", &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    if (status == 200) {
        QVERIFY2(response.status == 200, response.head.constData());
        QCOMPARE(m_topo.upstream().connections(u"pkg"_s).size(), 1);
        return;
    }
    REDTEAM_CHECK(expectDenyHttp(response, {status}, reasons));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, reasons));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// B4: userinfo.
void TestRedteamNames::B4_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("proxy GET http://pkg.test@evil.test/")
        << u"proxy"_s << "GET http://pkg.test@evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n"_ba;
    QTest::newRow("proxy CONNECT pkg.test@evil.test:443")
        << u"proxy"_s
        << "CONNECT pkg.test@evil.test:443 HTTP/1.1\r\nHost: pkg.test@evil.test:443\r\n\r\n"_ba;
    QTest::newRow("TLS pkg.test, Host u@pkg.test")
        << u"tls:pkg.test"_s << "GET / HTTP/1.1\r\nHost: u@pkg.test\r\n\r\n"_ba;
}

void TestRedteamNames::B4()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, request);
    QString problem;
    const HttpResponse response = requestVia(mode, request, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QStringList reasons {u"userinfo"_s, u"malformed_host"_s};
    REDTEAM_CHECK(expectDenyHttp(response, {400}, reasons));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, reasons));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// C1: a suffix without a label boundary is another name.
void TestRedteamNames::C1_data()
{
    QTest::addColumn<QByteArray>("sni");
    QTest::newRow("evilpkg.test") << "evilpkg.test"_ba;
    QTest::newRow("notpkg.test") << "notpkg.test"_ba;
    QTest::newRow("pkg.test.evil.test") << "pkg.test.evil.test"_ba;
}

void TestRedteamNames::C1()
{
    QFETCH(QByteArray, sni);
    const DnsResult dns = m_topo.resolve(QString::fromLatin1(sni));
    QVERIFY2(dns.answered && (dns.rcode == 5 || dns.rcode == 3),
             qPrintable(u"DNS rcode %1"_s.arg(dns.rcode)));
    bool handshake = true;
    auto connection = openTls(topo::EvilServer, sni, &handshake);
    QVERIFY(connection);
    QVERIFY2(!handshake, "TLS completed for a name outside the policy");
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"host_not_allowed"_s}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    QVERIFY(m_topo.dns().queries().isEmpty());
}

// C2: the wildcard truth table for policy "*.pkg.test" (docs/policy.md).
void TestRedteamNames::C2_data()
{
    QTest::addColumn<QByteArray>("sni");
    QTest::addColumn<QByteArray>("host");
    QTest::addColumn<int>("status"); // 0: deny-tls
    QTest::addColumn<QString>("reason");
    QTest::newRow("apex pkg.test: not matched") << "pkg.test"_ba
                                                << "pkg.test"_ba << 0 << u"host_not_allowed"_s;
    QTest::newRow("a.pkg.test") << "a.pkg.test"_ba
                                << "a.pkg.test"_ba << 200 << QString();
    QTest::newRow("a.b.pkg.test") << "a.b.pkg.test"_ba
                                  << "a.b.pkg.test"_ba << 200 << QString();
    QTest::newRow("literal *.pkg.test SNI") << "*.pkg.test"_ba
                                            << "a.pkg.test"_ba << 0 << u"bad_sni"_s;
    QTest::newRow("literal *.pkg.test Host") << "a.pkg.test"_ba
                                             << "*.pkg.test"_ba << 400 << u"malformed_host"_s;
}

void TestRedteamNames::C2()
{
    QFETCH(QByteArray, sni);
    QFETCH(QByteArray, host);
    QFETCH(int, status);
    QFETCH(QString, reason);
    const QJsonObject wildcard {
        {u"version"_s, 1},
        {u"rules"_s,
         QJsonArray {QJsonObject {{u"host"_s, u"*.pkg.test"_s}, {u"ports"_s, QJsonArray {443}}}}}};
    auto restore = qScopeGuard([this] {
        if (!applyPolicy(GatewayTopology::redteamPolicy(), u"pkg.test"_s, true))
            qWarning("could not restore the base policy");
    });
    QVERIFY2(applyPolicy(wildcard, u"pkg.test"_s, false),
             "the policy message did not take effect (pkg.test still resolves)");
    m_topo.resetObservations();
    // Dial the address the guest gets for the SNI name, or for a.pkg.test when the SNI name
    // does not resolve (what an attacker would reuse).
    const QHostAddress allowed = m_topo.resolveAddress(u"a.pkg.test"_s);
    QVERIFY2(!allowed.isNull(), "a.pkg.test does not resolve under *.pkg.test");
    QHostAddress address = m_topo.resolveAddress(QString::fromLatin1(sni));
    if (address.isNull())
        address = allowed;
    bool handshake = false;
    auto connection = openTls(address, sni, &handshake);
    QVERIFY(connection);
    if (status == 0) {
        QVERIFY2(!handshake, "TLS completed; deny-tls expected");
        REDTEAM_CHECK(
            expectEgress(m_topo.gateway(), u"denied"_s, {reason, u"destination_mismatch"_s}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
        return;
    }
    QVERIFY2(handshake, qPrintable(connection->lastError()));
    QVERIFY(connection->send("GET /c2 HTTP/1.1\r\nHost: " + host + "\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    if (status == 400) {
        REDTEAM_CHECK(expectDenyHttp(response, {400}, {reason}));
        REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
        return;
    }
    QVERIFY2(response.status == 200, response.head.constData());
    const auto records = m_topo.upstream().connections(u"pkg"_s);
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().sni, QString::fromLatin1(sni));
}

// docs/reviews/2026-11-30-redteam-pass.md#f6: a wildcard on a public suffix (Public Suffix List)
// would allow every domain registered under it, and DNS exfiltration to anyone owning one. The
// gateway refuses such a policy (pattern_too_broad); the policy in force stays.
void TestRedteamNames::C2_publicSuffixWildcardRefused_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::newRow("*.co.uk") << u"*.co.uk"_s;
    QTest::newRow("*.github.io") << u"*.github.io"_s;
    QTest::newRow("*.compute.amazonaws.com") << u"*.compute.amazonaws.com"_s;
}

void TestRedteamNames::C2_publicSuffixWildcardRefused()
{
    QFETCH(QString, pattern);
    QJsonObject policy = GatewayTopology::redteamPolicy();
    QJsonArray rules = policy.value(u"rules"_s).toArray();
    rules.append(QJsonObject {{u"host"_s, pattern}, {u"ports"_s, QJsonArray {443}}});
    policy.insert(u"rules"_s, rules);
    while (m_topo.gateway().waitForMessage(u"error"_s, 0)) { } // earlier answers
    QVERIFY(m_topo.setPolicy(policy));
    const auto refused = m_topo.gateway().waitForMessage(u"error"_s, 3000);
    QVERIFY2(refused, "the gateway accepted the policy");
    QVERIFY2(refused->value(u"error"_s).toString().contains(u"pattern_too_broad"_s),
             qPrintable(refused->value(u"error"_s).toString()));
    // Still the base policy: pkg.test resolves, a name under the suffix does not.
    QVERIFY(!m_topo.resolveAddress(u"pkg.test"_s).isNull());
    const QString below = u"victim."_s + pattern.mid(2);
    const DnsResult answer = m_topo.resolve(below);
    QVERIFY2(answer.answered && answer.addresses.isEmpty(), qPrintable(below));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
}

// C3: a pattern must be matched against the name, not the URL.
void TestRedteamNames::C3_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("TLS pkg.test, Host pkg.test.evil.test")
        << u"tls:pkg.test"_s << "GET / HTTP/1.1\r\nHost: pkg.test.evil.test\r\n\r\n"_ba;
    QTest::newRow("proxy: http://evil.test/?x=.pkg.test")
        << u"proxy"_s << "GET http://evil.test/?x=.pkg.test HTTP/1.1\r\nHost: evil.test\r\n\r\n"_ba;
    QTest::newRow("port 80: /?x=.pkg.test, Host evil.test")
        << u"http:evil.test"_s << "GET /?x=.pkg.test HTTP/1.1\r\nHost: evil.test\r\n\r\n"_ba;
}

void TestRedteamNames::C3()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, request);
    QString problem;
    const HttpResponse response = requestVia(mode, request, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    REDTEAM_CHECK(
        expectDenyHttp(response, {400, 403, 421}, {u"host_not_allowed"_s, u"sni_host_mismatch"_s}));
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {}));
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream()));
    for (const auto &query : m_topo.dns().queries())
        QVERIFY2(!query.name.contains(u"evil"_s), qPrintable(query.name));
}

QTEST_GUILESS_MAIN(TestRedteamNames)
#include "tst_redteam_names.moc"
