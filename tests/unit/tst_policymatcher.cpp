// PolicyMatcher (wildcard truth table, ports, methods, paths) and the request-authority checks
// of core/gateway/http/hostheader.h, one row per docs/redteam-cases.md case of classes A1, A5-A8,
// B1-B4, C1-C3, D1, D2 and D4 that can be decided without I/O.
#include "core/gateway/http/hostheader.h"
#include "core/policy/policymatcher.h"
#include "egressrules.h"

#include <QTest>

using airlock::EgressPolicy;
using airlock::EgressReason;
using airlock::EgressRule;
using airlock::policy::PolicyMatcher;

namespace {

using airlock::test::rule;

// The docs/redteam-cases.md placeholders: pkg.test (443 only), api.test, and a wildcard for C2.
PolicyMatcher casesMatcher()
{
    EgressPolicy policy;
    policy.rules = {
        rule(QStringLiteral("pkg.test")), // 0
        rule(QStringLiteral("*.wild.test")), // 1
        rule(QStringLiteral("api.test"), {443}, {QStringLiteral("GET"), QStringLiteral("POST")},
             {QStringLiteral("/v1"), QStringLiteral("/static/")}), // 2
        rule(QStringLiteral("api.test"), {8443}), // 3
        rule(QStringLiteral("plain.test"), {80}), // 4
    };
    auto matcher = PolicyMatcher::create(policy);
    Q_ASSERT(matcher);
    return *matcher;
}

} // namespace

class TestPolicyMatcher : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void wildcardTruthTable_data();
    void wildcardTruthTable();
    void pathBoundary_data();
    void pathBoundary();
    void pathProblem_data();
    void pathProblem();
    void checkHost_data();
    void checkHost();
    void checkConnection_data();
    void checkConnection();
    void checkRequest_data();
    void checkRequest();
    void denyAllDeniesEverything();
    void createRejectsInvalidPolicy();
    void reasonNames();
    void requestAuthority_data();
    void requestAuthority();
    void connectTarget_data();
    void connectTarget();
};

// docs/policy.md "Wildcard truth table", row by row.
void TestPolicyMatcher::wildcardTruthTable_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("host");
    QTest::addColumn<bool>("matches");
    QTest::newRow("exact: same name") << "pkg.test"
                                      << "pkg.test" << true;
    QTest::newRow("exact: subdomain (C1)") << "pkg.test"
                                           << "a.pkg.test" << false;
    QTest::newRow("exact: evilpkg.test (C1)") << "pkg.test"
                                              << "evilpkg.test" << false;
    QTest::newRow("exact: notpkg.test (C1)") << "pkg.test"
                                             << "notpkg.test" << false;
    QTest::newRow("exact: pkg.test.evil.test (C1, C3)") << "pkg.test"
                                                        << "pkg.test.evil.test" << false;
    QTest::newRow("exact: parent") << "a.pkg.test"
                                   << "pkg.test" << false;
    QTest::newRow("exact: other tld") << "pkg.test"
                                      << "pkg.tes" << false;
    QTest::newRow("wildcard: one label (C2)") << "*.pkg.test"
                                              << "a.pkg.test" << true;
    QTest::newRow("wildcard: two labels (C2)") << "*.pkg.test"
                                               << "a.b.pkg.test" << true;
    QTest::newRow("wildcard: apex not matched (C2)") << "*.pkg.test"
                                                     << "pkg.test" << false;
    QTest::newRow("wildcard: evilpkg.test (C1)") << "*.pkg.test"
                                                 << "evilpkg.test" << false;
    QTest::newRow("wildcard: a.evilpkg.test") << "*.pkg.test"
                                              << "a.evilpkg.test" << false;
    QTest::newRow("wildcard: suffix elsewhere (C3)") << "*.pkg.test"
                                                     << "a.pkg.test.evil.test" << false;
    QTest::newRow("wildcard: parent") << "*.pkg.test"
                                      << "test" << false;
    QTest::newRow("wildcard: empty host") << "*.pkg.test"
                                          << "" << false;
    QTest::newRow("wildcard: literal star host (C2)") << "*.pkg.test"
                                                      << "*.pkg.test" << true;
}

void TestPolicyMatcher::wildcardTruthTable()
{
    QFETCH(QString, pattern);
    QFETCH(QString, host);
    QFETCH(bool, matches);
    QCOMPARE(PolicyMatcher::hostMatches(pattern, host), matches);
}

void TestPolicyMatcher::pathBoundary_data()
{
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("matches");
    QTest::newRow("equal") << "/api"
                           << "/api" << true;
    QTest::newRow("below") << "/api"
                           << "/api/x" << true;
    QTest::newRow("below, trailing slash") << "/api"
                                           << "/api/" << true;
    QTest::newRow("no segment boundary") << "/api"
                                         << "/apiary" << false;
    QTest::newRow("no boundary, dot") << "/api"
                                      << "/api.json" << false;
    QTest::newRow("no boundary, semicolon") << "/api"
                                            << "/api;x" << false;
    QTest::newRow("no boundary, encoded slash") << "/api"
                                                << "/api%2fx" << false;
    QTest::newRow("slash prefix, child") << "/api/"
                                         << "/api/x" << true;
    QTest::newRow("slash prefix, itself") << "/api/"
                                          << "/api/" << true;
    QTest::newRow("slash prefix, without slash") << "/api/"
                                                 << "/api" << false;
    QTest::newRow("root matches all") << "/"
                                      << "/anything/at/all" << true;
    QTest::newRow("case-sensitive") << "/api"
                                    << "/API" << false;
    QTest::newRow("shorter path") << "/api/v1"
                                  << "/api" << false;
    QTest::newRow("other path") << "/api"
                                << "/secret" << false;
}

void TestPolicyMatcher::pathBoundary()
{
    QFETCH(QString, prefix);
    QFETCH(QString, path);
    QFETCH(bool, matches);
    QCOMPARE(PolicyMatcher::pathMatches(prefix, path), matches);
}

void TestPolicyMatcher::pathProblem_data()
{
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("refused");
    QTest::newRow("root") << "/" << false;
    QTest::newRow("plain") << "/a/b" << false;
    QTest::newRow("query ignored") << "/a?x=../../y" << false;
    QTest::newRow("C3 query with a name") << "/?x=.pkg.test" << false;
    QTest::newRow("npm scoped package") << "/@babel%2fcore" << false;
    QTest::newRow("encoded space") << "/a%20b" << false;
    QTest::newRow("encoded UTF-8") << "/caf%C3%A9" << false;
    QTest::newRow("dots inside names") << "/a..b/.c/d." << false;
    QTest::newRow("empty segments") << "//a//b" << false;
    QTest::newRow("empty") << "" << true;
    QTest::newRow("relative") << "a/b" << true;
    QTest::newRow("asterisk-form") << "*" << true;
    QTest::newRow("absolute-form (gateway converts first)") << "http://evil.test/" << true;
    QTest::newRow("dot-dot") << "/a/../b" << true;
    QTest::newRow("dot") << "/a/./b" << true;
    QTest::newRow("trailing dot-dot") << "/a/.." << true;
    QTest::newRow("encoded dot-dot") << "/a/%2e%2e/b" << true;
    QTest::newRow("encoded dot-dot upper") << "/a/%2E%2E/b" << true;
    QTest::newRow("half-encoded dot-dot") << "/a/.%2e/b" << true;
    QTest::newRow("dot-dot with params") << "/a/..;/b" << true;
    QTest::newRow("dot-dot with named params") << "/a/..;jsessionid=1/b" << true;
    QTest::newRow("encoded slash dot-dot") << "/a/x%2f..%2fb" << true;
    QTest::newRow("backslash") << "/a\\..\\b" << true;
    QTest::newRow("encoded backslash") << "/a%5c..%5cb" << true;
    QTest::newRow("encoded NUL") << "/a%00b" << true;
    QTest::newRow("encoded CR LF") << "/a%0d%0aHost:%20evil.test" << true;
    QTest::newRow("bad percent") << "/a%zz" << true;
    QTest::newRow("truncated percent") << "/a%2" << true;
    QTest::newRow("space") << "/a b" << true;
    QTest::newRow("fragment") << "/a#b" << true;
    QTest::newRow("non-ASCII") << QStringLiteral("/caf\u00e9") << true;
    QTest::newRow("tab") << "/a\tb" << true;
}

void TestPolicyMatcher::pathProblem()
{
    QFETCH(QString, target);
    QFETCH(bool, refused);
    const QString problem = PolicyMatcher::pathProblem(target);
    QVERIFY2(problem.isEmpty() != refused, qPrintable(problem));
}

void TestPolicyMatcher::checkHost_data()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<EgressReason>("reason");
    QTest::addColumn<int>("rule");
    QTest::newRow("allowed") << "pkg.test" << EgressReason::Allowed << 0;
    QTest::newRow("B1 trailing dot") << "pkg.test." << EgressReason::Allowed << 0;
    QTest::newRow("B2 case") << "Pkg.TEST" << EgressReason::Allowed << 0;
    QTest::newRow("B1 two dots") << "pkg.test.." << EgressReason::MalformedHost << -1;
    QTest::newRow("C1 evilpkg.test") << "evilpkg.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("C1 notpkg.test") << "notpkg.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("C1 pkg.test.evil.test")
        << "pkg.test.evil.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("C2 wildcard sub") << "a.wild.test" << EgressReason::Allowed << 1;
    QTest::newRow("C2 wildcard deep") << "a.b.wild.test" << EgressReason::Allowed << 1;
    QTest::newRow("C2 wildcard apex") << "wild.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("C2 literal star") << "*.wild.test" << EgressReason::MalformedHost << -1;
    QTest::newRow("D1 IP") << "192.0.2.7" << EgressReason::MalformedHost << -1;
    QTest::newRow("E1 data name") << "mzxw6ytboi.x.evil.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("tenant.test") << "tenant.test" << EgressReason::HostNotAllowed << -1;
}

void TestPolicyMatcher::checkHost()
{
    QFETCH(QString, host);
    QFETCH(EgressReason, reason);
    QFETCH(int, rule);
    const auto verdict = casesMatcher().checkHost(host);
    QCOMPARE(wireName(verdict.reason), wireName(reason));
    QCOMPARE(verdict.rule, rule);
    QCOMPARE(verdict.allowed(), reason == EgressReason::Allowed);
}

void TestPolicyMatcher::checkConnection_data()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<EgressReason>("reason");
    QTest::addColumn<int>("rule");
    QTest::newRow("pkg.test:443") << "pkg.test" << 443 << EgressReason::Allowed << 0;
    QTest::newRow("D2 pkg.test:22") << "pkg.test" << 22 << EgressReason::PortNotAllowed << 0;
    QTest::newRow("D2 pkg.test:8443") << "pkg.test" << 8443 << EgressReason::PortNotAllowed << 0;
    QTest::newRow("D2 pkg.test:6379") << "pkg.test" << 6379 << EgressReason::PortNotAllowed << 0;
    QTest::newRow("api.test:8443 by second rule")
        << "api.test" << 8443 << EgressReason::Allowed << 3;
    QTest::newRow("api.test:22 names first rule")
        << "api.test" << 22 << EgressReason::PortNotAllowed << 2;
    QTest::newRow("D4 evil.test:80") << "evil.test" << 80 << EgressReason::HostNotAllowed << -1;
    QTest::newRow("A4 IP SNI") << "10.0.0.1" << 443 << EgressReason::MalformedHost << -1;
    QTest::newRow("A4 empty SNI") << "" << 443 << EgressReason::MalformedHost << -1;
}

void TestPolicyMatcher::checkConnection()
{
    QFETCH(QString, host);
    QFETCH(int, port);
    QFETCH(EgressReason, reason);
    QFETCH(int, rule);
    const auto verdict = casesMatcher().checkConnection(host, quint16(port));
    QCOMPARE(wireName(verdict.reason), wireName(reason));
    QCOMPARE(verdict.rule, rule);
}

void TestPolicyMatcher::checkRequest_data()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("target");
    QTest::addColumn<EgressReason>("reason");
    QTest::addColumn<int>("rule");
    QTest::newRow("pkg.test GET /") << "pkg.test" << 443 << "GET"
                                    << "/" << EgressReason::Allowed << 0;
    QTest::newRow("pkg.test any method") << "pkg.test" << 443 << "DELETE"
                                         << "/x" << EgressReason::Allowed << 0;
    QTest::newRow("B2 Host case") << "PKG.test" << 443 << "GET"
                                  << "/" << EgressReason::Allowed << 0;
    QTest::newRow("D2 port") << "pkg.test" << 22 << "GET"
                             << "/" << EgressReason::PortNotAllowed << 0;
    QTest::newRow("C3 Host pkg.test.evil.test") << "pkg.test.evil.test" << 443 << "GET"
                                                << "/" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("C3 name in the query") << "evil.test" << 443 << "GET"
                                          << "/?x=.pkg.test" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("D4 evil.test on 80") << "evil.test" << 80 << "GET"
                                        << "/log?d=x" << EgressReason::HostNotAllowed << -1;
    QTest::newRow("plain http allowed") << "plain.test" << 80 << "GET"
                                        << "/" << EgressReason::Allowed << 4;
    QTest::newRow("api GET /v1") << "api.test" << 443 << "GET"
                                 << "/v1" << EgressReason::Allowed << 2;
    QTest::newRow("api GET /v1/x?q") << "api.test" << 443 << "GET"
                                     << "/v1/x?q=1" << EgressReason::Allowed << 2;
    QTest::newRow("api POST /static/a") << "api.test" << 443 << "POST"
                                        << "/static/a" << EgressReason::Allowed << 2;
    QTest::newRow("api /v1x (segment boundary)") << "api.test" << 443 << "GET"
                                                 << "/v1x" << EgressReason::PathNotAllowed << 2;
    QTest::newRow("api /static without slash") << "api.test" << 443 << "GET"
                                               << "/static" << EgressReason::PathNotAllowed << 2;
    QTest::newRow("api /v1/../admin") << "api.test" << 443 << "GET"
                                      << "/v1/../admin" << EgressReason::MalformedPath << -1;
    QTest::newRow("api /v1/%2e%2e/admin")
        << "api.test" << 443 << "GET"
        << "/v1/%2e%2e/admin" << EgressReason::MalformedPath << -1;
    QTest::newRow("api /v1%2f..%2fadmin")
        << "api.test" << 443 << "GET"
        << "/v1%2f..%2fadmin" << EgressReason::MalformedPath << -1;
    QTest::newRow("api /admin?/v1") << "api.test" << 443 << "GET"
                                    << "/admin?/v1" << EgressReason::PathNotAllowed << 2;
    QTest::newRow("api DELETE") << "api.test" << 443 << "DELETE"
                                << "/v1" << EgressReason::MethodNotAllowed << 2;
    QTest::newRow("api lower-case get") << "api.test" << 443 << "get"
                                        << "/v1" << EgressReason::MethodNotAllowed << 2;
    QTest::newRow("api method not a token") << "api.test" << 443 << "GE T"
                                            << "/v1" << EgressReason::MalformedMethod << -1;
    QTest::newRow("api empty method") << "api.test" << 443 << ""
                                      << "/v1" << EgressReason::MalformedMethod << -1;
    QTest::newRow("api 8443 any path (rule 3)") << "api.test" << 8443 << "PUT"
                                                << "/admin" << EgressReason::Allowed << 3;
    QTest::newRow("api port 22") << "api.test" << 22 << "GET"
                                 << "/v1" << EgressReason::PortNotAllowed << 2;
    QTest::newRow("B4 userinfo host") << "u@api.test" << 443 << "GET"
                                      << "/v1" << EgressReason::MalformedHost << -1;
    QTest::newRow("D1 IP host") << "192.0.2.7" << 443 << "GET"
                                << "/" << EgressReason::MalformedHost << -1;
}

void TestPolicyMatcher::checkRequest()
{
    QFETCH(QString, host);
    QFETCH(int, port);
    QFETCH(QString, method);
    QFETCH(QString, target);
    QFETCH(EgressReason, reason);
    QFETCH(int, rule);
    const auto verdict = casesMatcher().checkRequest(host, quint16(port), method, target);
    QCOMPARE(wireName(verdict.reason), wireName(reason));
    QCOMPARE(verdict.rule, rule);
    QCOMPARE(verdict.detail.isEmpty(), reason == EgressReason::Allowed);
}

void TestPolicyMatcher::denyAllDeniesEverything()
{
    const auto matcher = PolicyMatcher::create(EgressPolicy::denyAll());
    QVERIFY(matcher);
    QCOMPARE(matcher->checkHost(u"pkg.test").reason, EgressReason::HostNotAllowed);
    QCOMPARE(matcher->checkConnection(u"pkg.test", 443).reason, EgressReason::HostNotAllowed);
    QCOMPARE(matcher->checkRequest(u"pkg.test", 443, u"GET", u"/").reason,
             EgressReason::HostNotAllowed);
}

void TestPolicyMatcher::createRejectsInvalidPolicy()
{
    EgressPolicy policy;
    policy.rules = {rule(QStringLiteral("pkg.test")), rule(QStringLiteral("Evil.Test"))};
    const auto matcher = PolicyMatcher::create(policy);
    QVERIFY(!matcher);
    QVERIFY2(matcher.error().message.startsWith(QStringLiteral("rule 1, field 'host'")),
             qPrintable(matcher.error().message));
}

void TestPolicyMatcher::reasonNames()
{
    QCOMPARE(wireName(EgressReason::Allowed), QStringLiteral("allowed"));
    QCOMPARE(wireName(EgressReason::HostNotAllowed), QStringLiteral("host_not_allowed"));
    QCOMPARE(wireName(EgressReason::PortNotAllowed), QStringLiteral("port_not_allowed"));
    QCOMPARE(wireName(EgressReason::MethodNotAllowed), QStringLiteral("method_not_allowed"));
    QCOMPARE(wireName(EgressReason::PathNotAllowed), QStringLiteral("path_not_allowed"));
    QCOMPARE(wireName(EgressReason::MalformedHost), QStringLiteral("malformed_host"));
    QCOMPARE(wireName(EgressReason::MalformedMethod), QStringLiteral("malformed_method"));
    QCOMPARE(wireName(EgressReason::MalformedPath), QStringLiteral("malformed_path"));
}

void TestPolicyMatcher::requestAuthority_data()
{
    QTest::addColumn<bool>("tls");
    QTest::addColumn<QString>("sni");
    QTest::addColumn<int>("port");
    QTest::addColumn<QStringList>("hostFields");
    QTest::addColumn<QString>("absolute"); // "scheme://authority" or empty for origin-form
    QTest::addColumn<EgressReason>("reason");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("host"); // canonical host when Ok

    const QString pkg = QStringLiteral("pkg.test");
    QTest::newRow("same name") << true << pkg << 443 << QStringList {pkg} << QString()
                               << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("A1 fronting") << true << pkg << 443
                                 << QStringList {QStringLiteral("tenant.test")} << QString()
                                 << EgressReason::SniHostMismatch << 421 << QString();
    QTest::newRow("A6 second request other Host")
        << true << pkg << 443 << QStringList {QStringLiteral("tenant.test")} << QString()
        << EgressReason::SniHostMismatch << 421 << QString();
    QTest::newRow("A7 absolute http vs Host")
        << false << QString() << 80 << QStringList {QStringLiteral("evil.test")}
        << QStringLiteral("http://pkg.test") << EgressReason::AuthorityMismatch << 400 << QString();
    QTest::newRow("A7 reverse") << false << QString() << 80 << QStringList {pkg}
                                << QStringLiteral("http://evil.test")
                                << EgressReason::AuthorityMismatch << 400 << QString();
    QTest::newRow("A7 https target inside TLS")
        << true << pkg << 443 << QStringList {pkg} << QStringLiteral("https://evil.test")
        << EgressReason::AuthorityMismatch << 400 << QString();
    QTest::newRow("A7 http scheme inside TLS")
        << true << pkg << 443 << QStringList {pkg} << QStringLiteral("http://pkg.test")
        << EgressReason::AuthorityMismatch << 400 << QString();
    QTest::newRow("absolute form agreeing")
        << true << pkg << 443 << QStringList {pkg} << QStringLiteral("HTTPS://PKG.test:443")
        << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("A8 two Host fields")
        << true << pkg << 443 << QStringList {pkg, QStringLiteral("evil.test")} << QString()
        << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("A8 two equal Host fields")
        << true << pkg << 443 << QStringList {pkg, pkg} << QString() << EgressReason::MalformedHost
        << 400 << QString();
    QTest::newRow("A8 list") << true << pkg << 443
                             << QStringList {QStringLiteral("pkg.test, evil.test")} << QString()
                             << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("A8 folded") << true << pkg << 443
                               << QStringList {QStringLiteral("pkg.test\r\n evil.test")}
                               << QString() << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("missing Host") << true << pkg << 443 << QStringList {} << QString()
                                  << EgressReason::MissingHost << 400 << QString();
    QTest::newRow("B1 Host trailing dot")
        << true << pkg << 443 << QStringList {QStringLiteral("pkg.test.")} << QString()
        << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("B1 SNI trailing dot")
        << true << QStringLiteral("pkg.test.") << 443 << QStringList {pkg} << QString()
        << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("B1 two dots") << true << pkg << 443 << QStringList {QStringLiteral("pkg.test..")}
                                 << QString() << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("B2 case") << true << QStringLiteral("Pkg.TEST") << 443
                             << QStringList {QStringLiteral("PKG.test")} << QString()
                             << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("B3 :443") << true << pkg << 443 << QStringList {QStringLiteral("pkg.test:443")}
                             << QString() << EgressReason::Allowed << 0 << pkg;
    QTest::newRow("B3 :8443") << true << pkg << 443 << QStringList {QStringLiteral("pkg.test:8443")}
                              << QString() << EgressReason::PortMismatch << 421 << QString();
    QTest::newRow("B3 :0443") << true << pkg << 443 << QStringList {QStringLiteral("pkg.test:0443")}
                              << QString() << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("B3 empty port")
        << true << pkg << 443 << QStringList {QStringLiteral("pkg.test:")} << QString()
        << EgressReason::MalformedHost << 400 << QString();
    QTest::newRow("Host :443 on port 80")
        << false << QString() << 80 << QStringList {QStringLiteral("pkg.test:443")} << QString()
        << EgressReason::PortMismatch << 421 << QString();
    QTest::newRow("B4 Host userinfo")
        << true << pkg << 443 << QStringList {QStringLiteral("u@pkg.test")} << QString()
        << EgressReason::Userinfo << 400 << QString();
    QTest::newRow("B4 absolute userinfo")
        << false << QString() << 80 << QStringList {QStringLiteral("evil.test")}
        << QStringLiteral("http://pkg.test@evil.test") << EgressReason::Userinfo << 400
        << QString();
    QTest::newRow("C3 Host pkg.test.evil.test")
        << true << pkg << 443 << QStringList {QStringLiteral("pkg.test.evil.test")} << QString()
        << EgressReason::SniHostMismatch << 421 << QString();
    QTest::newRow("D1 Host IPv4") << false << QString() << 80
                                  << QStringList {QStringLiteral("169.254.169.254")} << QString()
                                  << EgressReason::IpLiteral << 403 << QString();
    QTest::newRow("D1 Host IPv6") << false << QString() << 80
                                  << QStringList {QStringLiteral("[fd00:ec2::254]")} << QString()
                                  << EgressReason::IpLiteral << 403 << QString();
    QTest::newRow("A4 IP SNI") << true << QStringLiteral("192.0.2.7") << 443 << QStringList {pkg}
                               << QString() << EgressReason::BadSni << 421 << QString();
    QTest::newRow("A4 no SNI") << true << QString() << 443 << QStringList {pkg} << QString()
                               << EgressReason::BadSni << 421 << QString();
    QTest::newRow("plain http") << false << QString() << 80 << QStringList {pkg} << QString()
                                << EgressReason::Allowed << 0 << pkg;
}

void TestPolicyMatcher::requestAuthority()
{
    QFETCH(bool, tls);
    QFETCH(QString, sni);
    QFETCH(int, port);
    QFETCH(QStringList, hostFields);
    QFETCH(QString, absolute);
    QFETCH(EgressReason, reason);
    QFETCH(int, status);
    QFETCH(QString, host);

    airlock::gateway::RequestAuthority request;
    request.tls = tls;
    request.sni = sni;
    request.connectionPort = quint16(port);
    request.hostFields = hostFields;
    if (!absolute.isEmpty()) {
        const qsizetype separator = absolute.indexOf(QStringLiteral("://"));
        request.absoluteScheme = absolute.left(separator);
        request.absoluteAuthority = absolute.mid(separator + 3);
    }
    const auto check = airlock::gateway::checkRequestAuthority(request);
    QCOMPARE(wireName(check.reason), wireName(reason));
    QCOMPARE(denialStatus(check.reason), status);
    if (check.ok()) {
        QCOMPARE(check.authority.host, host);
        QCOMPARE(int(check.authority.port), port);
    } else {
        QVERIFY(!check.detail.isEmpty());
    }
}

void TestPolicyMatcher::connectTarget_data()
{
    QTest::addColumn<QString>("target");
    QTest::addColumn<EgressReason>("reason");
    QTest::newRow("A5 CONNECT pkg.test:443") << "pkg.test:443" << EgressReason::Allowed;
    QTest::newRow("B1 CONNECT trailing dot") << "pkg.test.:443" << EgressReason::Allowed;
    QTest::newRow("D1 CONNECT IPv4") << "192.0.2.7:443" << EgressReason::IpLiteral;
    QTest::newRow("D1 CONNECT IPv6") << "[2001:db8::7]:443" << EgressReason::IpLiteral;
    QTest::newRow("B4 CONNECT userinfo") << "pkg.test@evil.test:443" << EgressReason::Userinfo;
    QTest::newRow("CONNECT without port") << "pkg.test" << EgressReason::MalformedHost;
    QTest::newRow("CONNECT :0443") << "pkg.test:0443" << EgressReason::MalformedHost;
    QTest::newRow("CONNECT literal star") << "*.pkg.test:443" << EgressReason::MalformedHost;
}

void TestPolicyMatcher::connectTarget()
{
    QFETCH(QString, target);
    QFETCH(EgressReason, reason);
    const auto check = airlock::gateway::checkConnectTarget(target);
    QCOMPARE(wireName(check.reason), wireName(reason));
    if (check.ok()) {
        QCOMPARE(check.authority.host, QStringLiteral("pkg.test"));
        QCOMPARE(check.authority.port, quint16(443));
    }
}

QTEST_APPLESS_MAIN(TestPolicyMatcher)
#include "tst_policymatcher.moc"
