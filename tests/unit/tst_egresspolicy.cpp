// EgressPolicy JSON format: validation errors name the rule and field, round trip, defaults,
// and the templates in resources/policies/ load.
#include "core/model/egresspolicy.h"
#include "resultcheck.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using airlock::EgressPolicy;
using airlock::EgressRule;

namespace {

QByteArray policyWithRule(const QByteArray &rule)
{
    return QByteArrayLiteral(R"({"version": 1, "rules": [{"host": "ok.test"}, )") + rule
        + QByteArrayLiteral("]}");
}

} // namespace

class TestEgressPolicy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void denyAllIsEmpty();
    void defaults();
    void canonicalizesHostPatterns_data();
    void canonicalizesHostPatterns();
    void invalidRule_data();
    void invalidRule();
    void invalidDocument_data();
    void invalidDocument();
    void roundTrip();
    void validateCatchesHandBuiltRules_data();
    void validateCatchesHandBuiltRules();
    void templates_data();
    void templates();
};

void TestEgressPolicy::denyAllIsEmpty()
{
    const EgressPolicy policy = EgressPolicy::denyAll();
    QVERIFY(policy.rules.isEmpty());
    QVERIFY(policy.validate());
    const auto parsed = EgressPolicy::fromJsonBytes(R"({"version": 1, "rules": []})");
    QVERIFY(parsed);
    QCOMPARE(*parsed, policy);
    QCOMPARE(
        policy.toJson(),
        QJsonObject({{QStringLiteral("version"), 1}, {QStringLiteral("rules"), QJsonArray()}}));
}

void TestEgressPolicy::defaults()
{
    const auto policy = EgressPolicy::fromJsonBytes(R"({"version": 1, "rules": [
        {"host": "pkg.test"}]})");
    QVERIFY_RESULT(policy);
    QCOMPARE(policy->rules.size(), 1);
    const EgressRule &rule = policy->rules.first();
    QCOMPARE(rule.host, QStringLiteral("pkg.test"));
    QCOMPARE(rule.ports, QList<quint16> {443});
    QVERIFY(rule.methods.isEmpty());
    QVERIFY(rule.pathPrefixes.isEmpty());
    QVERIFY(rule.comment.isEmpty());
    QVERIFY(!rule.isWildcard());
}

void TestEgressPolicy::canonicalizesHostPatterns_data()
{
    QTest::addColumn<QString>("written");
    QTest::addColumn<QString>("stored");
    QTest::newRow("B1 trailing dot") << QStringLiteral("pkg.test.") << QStringLiteral("pkg.test");
    QTest::newRow("B2 case") << QStringLiteral("PKG.Test") << QStringLiteral("pkg.test");
    QTest::newRow("wildcard case and dot")
        << QStringLiteral("*.Pkg.TEST.") << QStringLiteral("*.pkg.test");
}

void TestEgressPolicy::canonicalizesHostPatterns()
{
    QFETCH(QString, written);
    QFETCH(QString, stored);
    const QJsonObject object {
        {QStringLiteral("version"), 1},
        {QStringLiteral("rules"), QJsonArray {QJsonObject {{QStringLiteral("host"), written}}}}};
    const auto policy = EgressPolicy::fromJson(object);
    QVERIFY_RESULT(policy);
    QCOMPARE(policy->rules.first().host, stored);
}

void TestEgressPolicy::invalidRule_data()
{
    QTest::addColumn<QByteArray>("rule");
    QTest::addColumn<QString>("message"); // must appear in the error (rule index is 1)
    QTest::newRow("missing host") << QByteArray(R"({"ports": [443]})")
                                  << QStringLiteral("rule 1, field 'host': missing");
    QTest::newRow("host not a string")
        << QByteArray(R"({"host": 7})") << QStringLiteral("rule 1, field 'host': must be a string");
    QTest::newRow("D1 IPv4 host") << QByteArray(R"({"host": "192.0.2.7"})")
                                  << QStringLiteral("rule 1, field 'host': ip_literal");
    QTest::newRow("short IPv4 host")
        << QByteArray(R"({"host": "127.1"})") << QStringLiteral("rule 1, field 'host': ip_literal");
    QTest::newRow("IPv6 host") << QByteArray(R"({"host": "[::1]"})")
                               << QStringLiteral("rule 1, field 'host': ip_literal");
    QTest::newRow("B1 two trailing dots") << QByteArray(R"({"host": "pkg.test.."})")
                                          << QStringLiteral("rule 1, field 'host': trailing_dots");
    QTest::newRow("B3 host with port") << QByteArray(R"({"host": "pkg.test:443"})")
                                       << QStringLiteral("rule 1, field 'host': port");
    QTest::newRow("B4 userinfo") << QByteArray(R"({"host": "u@pkg.test"})")
                                 << QStringLiteral("rule 1, field 'host': userinfo");
    QTest::newRow("non-ASCII") << QByteArray(R"({"host": "b\u00fccher.test"})")
                               << QStringLiteral("rule 1, field 'host': non_ascii");
    QTest::newRow("C2 bare star") << QByteArray(R"({"host": "*"})")
                                  << QStringLiteral("rule 1, field 'host': bad_pattern");
    QTest::newRow("C2 inner star") << QByteArray(R"({"host": "a.*.test"})")
                                   << QStringLiteral("rule 1, field 'host': bad_pattern");
    QTest::newRow("C2 whole TLD") << QByteArray(R"({"host": "*.test"})")
                                  << QStringLiteral("rule 1, field 'host': pattern_too_broad");
    QTest::newRow("URL as host") << QByteArray(R"({"host": "https://pkg.test/"})")
                                 << QStringLiteral("rule 1, field 'host': ");
    QTest::newRow("underscore") << QByteArray(R"({"host": "a_b.test"})")
                                << QStringLiteral("rule 1, field 'host': bad_character");
    QTest::newRow("ports not an array") << QByteArray(R"({"host": "pkg.test", "ports": 443})")
                                        << QStringLiteral("rule 1, field 'ports'");
    QTest::newRow("ports empty") << QByteArray(R"({"host": "pkg.test", "ports": []})")
                                 << QStringLiteral("rule 1, field 'ports': must list at least");
    QTest::newRow("port 0") << QByteArray(R"({"host": "pkg.test", "ports": [0]})")
                            << QStringLiteral("rule 1, field 'ports'");
    QTest::newRow("port 65536") << QByteArray(R"({"host": "pkg.test", "ports": [65536]})")
                                << QStringLiteral("rule 1, field 'ports'");
    QTest::newRow("port as string") << QByteArray(R"({"host": "pkg.test", "ports": ["443"]})")
                                    << QStringLiteral("rule 1, field 'ports'");
    QTest::newRow("port fractional") << QByteArray(R"({"host": "pkg.test", "ports": [443.5]})")
                                     << QStringLiteral("rule 1, field 'ports'");
    QTest::newRow("duplicate port") << QByteArray(R"({"host": "pkg.test", "ports": [443, 443]})")
                                    << QStringLiteral("rule 1, field 'ports': port 443 is listed "
                                                      "twice");
    QTest::newRow("lower-case method")
        << QByteArray(R"({"host": "pkg.test", "methods": ["get"]})")
        << QStringLiteral("rule 1, field 'methods': 'get' is not an upper-case");
    QTest::newRow("method with space") << QByteArray(R"({"host": "pkg.test", "methods": ["GET "]})")
                                       << QStringLiteral("rule 1, field 'methods'");
    QTest::newRow("empty method") << QByteArray(R"({"host": "pkg.test", "methods": [""]})")
                                  << QStringLiteral("rule 1, field 'methods'");
    QTest::newRow("methods empty") << QByteArray(R"({"host": "pkg.test", "methods": []})")
                                   << QStringLiteral("rule 1, field 'methods': must not be empty");
    QTest::newRow("duplicate method")
        << QByteArray(R"({"host": "pkg.test", "methods": ["GET", "GET"]})")
        << QStringLiteral("rule 1, field 'methods': 'GET' is listed twice");
    QTest::newRow("methods not strings")
        << QByteArray(R"({"host": "pkg.test", "methods": [1]})")
        << QStringLiteral("rule 1, field 'methods': must be an array of strings");
    QTest::newRow("prefix without slash")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["api"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes': 'api': must start with '/'");
    QTest::newRow("prefix with dot-dot")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a/../b"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefix with dot-dot params")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a/..;x/b"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefix with percent")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a%2fb"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefix with backslash")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a\\b"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefix with query")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a?b"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefix with space")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": ["/a b"]})")
        << QStringLiteral("rule 1, field 'pathPrefixes'");
    QTest::newRow("prefixes empty")
        << QByteArray(R"({"host": "pkg.test", "pathPrefixes": []})")
        << QStringLiteral("rule 1, field 'pathPrefixes': must not be empty");
    QTest::newRow("comment not a string") << QByteArray(R"({"host": "pkg.test", "comment": 1})")
                                          << QStringLiteral("rule 1, field 'comment'");
    QTest::newRow("unknown field (typo)") << QByteArray(R"({"host": "pkg.test", "port": [22]})")
                                          << QStringLiteral("rule 1, field 'port': unknown field");
    QTest::newRow("rule not an object")
        << QByteArray(R"("pkg.test")") << QStringLiteral("rule 1: must be an object");
}

void TestEgressPolicy::invalidRule()
{
    QFETCH(QByteArray, rule);
    QFETCH(QString, message);
    const auto policy = EgressPolicy::fromJsonBytes(policyWithRule(rule));
    QVERIFY(!policy);
    QCOMPARE(policy.error().kind, airlock::ErrorKind::InvalidParams);
    QVERIFY2(policy.error().message.startsWith(message), qPrintable(policy.error().message));
}

void TestEgressPolicy::invalidDocument_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<airlock::ErrorKind>("kind");
    QTest::addColumn<QString>("message");
    QTest::newRow("not JSON") << QByteArray("{") << airlock::ErrorKind::ParseError
                              << QStringLiteral("not valid JSON");
    QTest::newRow("array") << QByteArray("[]") << airlock::ErrorKind::InvalidParams
                           << QStringLiteral("a policy must be a JSON object");
    QTest::newRow("no version") << QByteArray(R"({"rules": []})")
                                << airlock::ErrorKind::InvalidParams
                                << QStringLiteral("field 'version': missing");
    QTest::newRow("version 2") << QByteArray(R"({"version": 2, "rules": []})")
                               << airlock::ErrorKind::InvalidParams
                               << QStringLiteral("field 'version': must be 1");
    QTest::newRow("version string")
        << QByteArray(R"({"version": "1", "rules": []})") << airlock::ErrorKind::InvalidParams
        << QStringLiteral("field 'version': must be 1");
    QTest::newRow("no rules") << QByteArray(R"({"version": 1})")
                              << airlock::ErrorKind::InvalidParams
                              << QStringLiteral("field 'rules': missing");
    QTest::newRow("rules object") << QByteArray(R"({"version": 1, "rules": {}})")
                                  << airlock::ErrorKind::InvalidParams
                                  << QStringLiteral("field 'rules': must be an array");
    QTest::newRow("unknown top-level key")
        << QByteArray(R"({"version": 1, "rules": [], "default": "allow"})")
        << airlock::ErrorKind::InvalidParams << QStringLiteral("field 'default': unknown field");
    QTest::newRow("first rule index is 0")
        << QByteArray(R"({"version": 1, "rules": [{"host": "*"}]})")
        << airlock::ErrorKind::InvalidParams << QStringLiteral("rule 0, field 'host'");
    QTest::newRow("too large") << QByteArray(EgressPolicy::kMaxJsonBytes + 1, ' ')
                               << airlock::ErrorKind::InvalidParams
                               << QStringLiteral("the policy is");
}

void TestEgressPolicy::invalidDocument()
{
    QFETCH(QByteArray, json);
    QFETCH(airlock::ErrorKind, kind);
    QFETCH(QString, message);
    const auto policy = EgressPolicy::fromJsonBytes(json);
    QVERIFY(!policy);
    QCOMPARE(int(policy.error().kind), int(kind));
    QVERIFY2(policy.error().message.startsWith(message), qPrintable(policy.error().message));
}

void TestEgressPolicy::roundTrip()
{
    EgressPolicy policy;
    EgressRule exact;
    exact.host = QStringLiteral("pkg.test");
    EgressRule full;
    full.host = QStringLiteral("*.api.test");
    full.ports = {443, 8443};
    full.methods = {QStringLiteral("GET"), QStringLiteral("HEAD")};
    full.pathPrefixes = {QStringLiteral("/v1/"), QStringLiteral("/health")};
    full.comment = QStringLiteral("the API, read-only");
    policy.rules = {exact, full};
    QVERIFY(policy.validate());

    const QJsonObject json = policy.toJson();
    const QJsonObject first = json.value(QStringLiteral("rules")).toArray().at(0).toObject();
    QVERIFY(!first.contains(QStringLiteral("methods")));
    QVERIFY(!first.contains(QStringLiteral("pathPrefixes")));
    QVERIFY(!first.contains(QStringLiteral("comment")));
    QCOMPARE(first.value(QStringLiteral("ports")).toArray(), QJsonArray {443});

    const auto back = EgressPolicy::fromJson(json);
    QVERIFY_RESULT(back);
    QCOMPARE(*back, policy);
    const auto fromBytes = EgressPolicy::fromJsonBytes(policy.toJsonBytes());
    QVERIFY(fromBytes);
    QCOMPARE(*fromBytes, policy);
}

void TestEgressPolicy::validateCatchesHandBuiltRules_data()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<QList<quint16>>("ports");
    QTest::addColumn<QString>("message");
    QTest::newRow("non-canonical host") << QStringLiteral("PKG.test") << QList<quint16> {443}
                                        << QStringLiteral("rule 0, field 'host': 'PKG.test' is not "
                                                          "canonical; write 'pkg.test'");
    QTest::newRow("trailing dot") << QStringLiteral("pkg.test.") << QList<quint16> {443}
                                  << QStringLiteral("rule 0, field 'host'");
    QTest::newRow("no ports") << QStringLiteral("pkg.test") << QList<quint16> {}
                              << QStringLiteral("rule 0, field 'ports'");
    QTest::newRow("port 0") << QStringLiteral("pkg.test") << QList<quint16> {0}
                            << QStringLiteral("rule 0, field 'ports'");
}

void TestEgressPolicy::validateCatchesHandBuiltRules()
{
    QFETCH(QString, host);
    QFETCH(QList<quint16>, ports);
    QFETCH(QString, message);
    EgressRule rule;
    rule.host = host;
    rule.ports = ports;
    EgressPolicy policy;
    policy.rules = {rule};
    const auto ok = policy.validate();
    QVERIFY(!ok);
    QVERIFY2(ok.error().message.startsWith(message), qPrintable(ok.error().message));
}

void TestEgressPolicy::templates_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("minimumRules");
    QTest::newRow("deny-all") << QStringLiteral("deny-all.json") << 0;
    QTest::newRow("debian-mirrors") << QStringLiteral("debian-mirrors.json") << 1;
    QTest::newRow("pypi") << QStringLiteral("pypi.json") << 2;
    QTest::newRow("npm") << QStringLiteral("npm.json") << 1;
    QTest::newRow("github") << QStringLiteral("github.json") << 2;
}

void TestEgressPolicy::templates()
{
    QFETCH(QString, file);
    QFETCH(int, minimumRules);
    QFile in(QStringLiteral(AIRLOCK_SOURCE_DIR "/resources/policies/") + file);
    QVERIFY2(in.open(QIODevice::ReadOnly), qPrintable(in.fileName()));
    const auto policy = EgressPolicy::fromJsonBytes(in.readAll());
    QVERIFY_RESULT(policy);
    QVERIFY(policy->rules.size() >= minimumRules);
    if (minimumRules == 0)
        QCOMPARE(*policy, EgressPolicy::denyAll());
    // Templates are written in canonical form, so loading and saving changes nothing.
    const auto again = EgressPolicy::fromJson(policy->toJson());
    QVERIFY(again);
    QCOMPARE(*again, *policy);
}

QTEST_APPLESS_MAIN(TestEgressPolicy)
#include "tst_egresspolicy.moc"
