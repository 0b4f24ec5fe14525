#include "core/daemon/policydryrun.h"
#include "resultcheck.h"

#include <QJsonArray>
#include <QTest>

using namespace airlock;

Q_DECLARE_METATYPE(airlock::EgressRule)

namespace {

EgressRule rule(const QString &host, QList<quint16> ports = {443}, QStringList methods = {},
                QStringList paths = {})
{
    EgressRule r;
    r.host = host;
    r.ports = ports;
    r.methods = methods;
    r.pathPrefixes = paths;
    return r;
}

EgressRecord record(qint64 seq, const QJsonObject &fields, const QString &time)
{
    QJsonObject event = fields;
    event.insert(QStringLiteral("time"), time);
    event.insert(QStringLiteral("sandbox"), QStringLiteral("agent"));
    return {seq, QStringLiteral("agent"), event};
}

QJsonObject http(const QString &host, const QString &method, const QString &path, bool allowed,
                 const QString &reason)
{
    return {
        {QStringLiteral("layer"), QStringLiteral("http")},
        {QStringLiteral("verdict"), allowed ? QStringLiteral("allowed") : QStringLiteral("denied")},
        {QStringLiteral("reason"), reason},
        {QStringLiteral("name"), host},
        {QStringLiteral("sni"), host},
        {QStringLiteral("host"), host},
        {QStringLiteral("port"), 443},
        {QStringLiteral("method"), method},
        {QStringLiteral("path"), path}};
}

QJsonObject dns(const QString &name, bool allowed)
{
    return {
        {QStringLiteral("layer"), QStringLiteral("dns")},
        {QStringLiteral("verdict"), allowed ? QStringLiteral("allowed") : QStringLiteral("denied")},
        {QStringLiteral("reason"),
         allowed ? QStringLiteral("allowed") : QStringLiteral("host_not_allowed")},
        {QStringLiteral("name"), name},
        {QStringLiteral("dnsType"), QStringLiteral("A")}};
}

} // namespace

/// policy.dryRun's evaluation: which recorded decisions an edited policy would change.
class TestPolicyDryRun : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void changes_data();
    void changes();
    void timeWindow();
    void invalidPolicyIsRefused();
};

void TestPolicyDryRun::changes_data()
{
    QTest::addColumn<QList<EgressRule>>("applied");
    QTest::addColumn<QList<EgressRule>>("edited");
    QTest::addColumn<QJsonObject>("event");
    // "" = no change, "allowed" = newly allowed, "denied" = newly denied, "skip" = not replayed.
    QTest::addColumn<QString>("expected");

    const QList<EgressRule> none;
    const QList<EgressRule> pypi {rule(QStringLiteral("pypi.org"))};
    QTest::newRow("host newly allowed")
        << none << pypi
        << http(QStringLiteral("pypi.org"), QStringLiteral("GET"), QStringLiteral("/simple/"),
                false, QStringLiteral("host_not_allowed"))
        << "allowed";
    QTest::newRow("host newly denied")
        << pypi << none
        << http(QStringLiteral("pypi.org"), QStringLiteral("GET"), QStringLiteral("/simple/"), true,
                QStringLiteral("allowed"))
        << "denied";
    QTest::newRow("unrelated host unchanged")
        << none << pypi
        << http(QStringLiteral("evil.test"), QStringLiteral("GET"), QStringLiteral("/"), false,
                QStringLiteral("host_not_allowed"))
        << "";
    QTest::newRow("wildcard never matches its suffix")
        << none << QList<EgressRule> {rule(QStringLiteral("*.pkg.test"))}
        << http(QStringLiteral("pkg.test"), QStringLiteral("GET"), QStringLiteral("/"), false,
                QStringLiteral("host_not_allowed"))
        << "";
    QTest::newRow("method limit denies POST")
        << pypi
        << QList<EgressRule> {rule(QStringLiteral("pypi.org"), {443}, {QStringLiteral("GET")})}
        << http(QStringLiteral("pypi.org"), QStringLiteral("POST"), QStringLiteral("/legacy/"),
                true, QStringLiteral("allowed"))
        << "denied";
    QTest::newRow("path prefix on a segment boundary")
        << none
        << QList<EgressRule> {rule(QStringLiteral("api.test"), {443}, {}, {QStringLiteral("/api")})}
        << http(QStringLiteral("api.test"), QStringLiteral("GET"), QStringLiteral("/apiary"), false,
                QStringLiteral("host_not_allowed"))
        << "";
    QTest::newRow("dns newly allowed")
        << none << pypi << dns(QStringLiteral("pypi.org"), false) << "allowed";
    QTest::newRow("non-policy refusal is skipped")
        << none << pypi
        << http(QStringLiteral("pypi.org"), QStringLiteral("GET"), QStringLiteral("/"), false,
                QStringLiteral("sni_host_mismatch"))
        << "skip";
}

void TestPolicyDryRun::changes()
{
    QFETCH(QList<EgressRule>, applied);
    QFETCH(QList<EgressRule>, edited);
    QFETCH(QJsonObject, event);
    QFETCH(QString, expected);

    const QList<EgressRecord> records {
        record(7, event, QStringLiteral("2026-01-02T03:04:05.000Z"))};
    auto result =
        PolicyDryRun::evaluate(EgressPolicy {applied}, EgressPolicy {edited}, records, {});
    QVERIFY_RESULT(result);
    const QJsonArray changes = result->value(QStringLiteral("changes")).toArray();
    if (expected == QLatin1String("skip")) {
        QCOMPARE(result->value(QStringLiteral("skipped")).toInt(), 1);
        QCOMPARE(result->value(QStringLiteral("evaluated")).toInt(), 0);
        return;
    }
    QCOMPARE(result->value(QStringLiteral("evaluated")).toInt(), 1);
    if (expected.isEmpty()) {
        QVERIFY(changes.isEmpty());
        return;
    }
    QCOMPARE(changes.size(), 1);
    const QJsonObject change = changes.first().toObject();
    QCOMPARE(change.value(QStringLiteral("seq")).toInteger(), 7);
    QCOMPARE(change.value(QStringLiteral("after"))
                 .toObject()
                 .value(QStringLiteral("verdict"))
                 .toString(),
             expected);
    QVERIFY(change.value(QStringLiteral("before"))
                .toObject()
                .value(QStringLiteral("verdict"))
                .toString()
            != expected);
    QCOMPARE(change.value(QStringLiteral("event")).toObject().value(QStringLiteral("name")),
             event.value(QStringLiteral("name")));
}

void TestPolicyDryRun::timeWindow()
{
    const QJsonObject event = http(QStringLiteral("pypi.org"), QStringLiteral("GET"),
                                   QStringLiteral("/"), false, QStringLiteral("host_not_allowed"));
    const QList<EgressRecord> records {
        record(1, event, QStringLiteral("2026-01-01T10:00:00.000Z")),
        record(2, event, QStringLiteral("2026-01-01T11:00:00.000Z")),
        record(3, event, QStringLiteral("2026-01-01T12:00:00.000Z"))};
    PolicyDryRun::Window window;
    window.since =
        QDateTime::fromString(QStringLiteral("2026-01-01T11:00:00.000Z"), Qt::ISODateWithMs);
    window.until =
        QDateTime::fromString(QStringLiteral("2026-01-01T12:00:00.000Z"), Qt::ISODateWithMs);
    auto result = PolicyDryRun::evaluate({}, EgressPolicy {{rule(QStringLiteral("pypi.org"))}},
                                         records, window);
    QVERIFY(result);
    const QJsonArray changes = result->value(QStringLiteral("changes")).toArray();
    QCOMPARE(changes.size(), 1);
    QCOMPARE(changes.first().toObject().value(QStringLiteral("seq")).toInteger(), 2);
}

void TestPolicyDryRun::invalidPolicyIsRefused()
{
    EgressPolicy bad {{rule(QStringLiteral("*.test"))}};
    auto result = PolicyDryRun::evaluate({}, bad, {}, {});
    QVERIFY(!result);
    QCOMPARE(result.error().kind, ErrorKind::InvalidParams);
}

QTEST_GUILESS_MAIN(TestPolicyDryRun)
#include "tst_policydryrun.moc"
