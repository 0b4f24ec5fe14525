#include "core/model/sandbox.h"
#include "resultcheck.h"

#include <QJsonDocument>
#include <QTest>

using airlock::Sandbox;
using airlock::SandboxSpec;

class TestSandboxJson : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void specDefaults();
    void sandboxRoundTrip_data();
    void sandboxRoundTrip();
    void wrongTypes_data();
    void wrongTypes();
    void validation_data();
    void validation();
};

void TestSandboxJson::specDefaults()
{
    const auto spec =
        SandboxSpec::fromJson(QJsonObject {{QStringLiteral("name"), QStringLiteral("d")}});
    QVERIFY(spec);
    QCOMPARE(spec->vcpus, 1);
    QCOMPARE(spec->memoryMib, 256);
    QCOMPARE(spec->image, QStringLiteral("default"));
    QVERIFY(spec->validate());
    QCOMPARE(SandboxSpec::fromJson(spec->toJson()).value(), *spec);
}

void TestSandboxJson::sandboxRoundTrip_data()
{
    QTest::addColumn<Sandbox>("sandbox");
    Sandbox stopped;
    stopped.spec = SandboxSpec {QStringLiteral("demo"), 2, 1024, QStringLiteral("debian")};
    stopped.createdAt =
        QDateTime::fromString(QStringLiteral("2024-01-02T03:04:05.678Z"), Qt::ISODateWithMs);
    stopped.stateReason = QStringLiteral("VMM exited while airlockd was not running");
    QTest::newRow("stopped") << stopped;

    Sandbox running = stopped;
    running.state = airlock::SandboxState::Running;
    running.stateReason.clear();
    running.acceleration = airlock::Acceleration::Tcg;
    running.accelerationWarning = QStringLiteral("nested KVM failed");
    running.startedAt =
        QDateTime::fromString(QStringLiteral("2024-01-02T03:05:00.001Z"), Qt::ISODateWithMs);
    running.vmmPid = 12345;
    QTest::newRow("running") << running;

    Sandbox stopping = running;
    stopping.state = airlock::SandboxState::Stopping;
    stopping.acceleration = airlock::Acceleration::Kvm;
    stopping.accelerationWarning.clear();
    QTest::newRow("stopping, kvm") << stopping;

    Sandbox forked = running;
    forked.spec.boot = airlock::BootMode::Cold;
    forked.startedFrom = airlock::StartSource::Snapshot;
    forked.identityWarning = QStringLiteral("the guest did not confirm its new identity");
    QTest::newRow("forked, cold boot, identity warning") << forked;
}

void TestSandboxJson::sandboxRoundTrip()
{
    QFETCH(Sandbox, sandbox);
    const QJsonObject json = sandbox.toJson();
    // Through text, as on the wire.
    const QJsonObject reparsed = QJsonDocument::fromJson(QJsonDocument(json).toJson()).object();
    const auto back = Sandbox::fromJson(reparsed);
    QVERIFY_RESULT(back);
    QCOMPARE(*back, sandbox);
    if (!sandbox.startedAt.isValid())
        QVERIFY(json.value(QStringLiteral("startedAt")).isNull());
    QVERIFY(json.value(QStringLiteral("createdAt")).toString().endsWith(u'Z'));
}

void TestSandboxJson::wrongTypes_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::addColumn<QString>("field");
    const QJsonObject base {{QStringLiteral("name"), QStringLiteral("demo")}};
    auto with = [&](const char *key, const QJsonValue &value) {
        QJsonObject object = base;
        object.insert(QLatin1String(key), value);
        return object;
    };
    QTest::newRow("missing name") << QJsonObject {} << QStringLiteral("name");
    QTest::newRow("name a number") << with("name", 5) << QStringLiteral("name");
    QTest::newRow("vcpus a string")
        << with("vcpus", QStringLiteral("2")) << QStringLiteral("vcpus");
    QTest::newRow("vcpus fractional") << with("vcpus", 1.5) << QStringLiteral("vcpus");
    QTest::newRow("memory a bool") << with("memoryMib", true) << QStringLiteral("memoryMib");
    // The real ranges, not INT_MIN..INT_MAX (docs/reviews/2026-12-01-newuser-pass.md#l5).
    QTest::newRow("vcpus 1e30") << with("vcpus", 1e30) << QStringLiteral("between 1 and 32");
    QTest::newRow("memory 1e12") << with("memoryMib", 1e12)
                                 << QStringLiteral("between 64 and 65536");
    QTest::newRow("image an object") << with("image", QJsonObject {}) << QStringLiteral("image");
    QTest::newRow("state unknown")
        << with("state", QStringLiteral("exploded")) << QStringLiteral("exploded");
    QTest::newRow("state a number") << with("state", 1) << QStringLiteral("state");
    QTest::newRow("createdAt not a time")
        << with("createdAt", QStringLiteral("yesterday")) << QStringLiteral("createdAt");
    QTest::newRow("vmmPid negative") << with("vmmPid", -1) << QStringLiteral("vmmPid");
    QTest::newRow("boot unknown") << with("boot", QStringLiteral("warm")) << QStringLiteral("boot");
    QTest::newRow("boot a bool") << with("boot", true) << QStringLiteral("boot");
    QTest::newRow("identityWarning a number")
        << with("identityWarning", 3) << QStringLiteral("identityWarning");
}

void TestSandboxJson::wrongTypes()
{
    QFETCH(QJsonObject, json);
    QFETCH(QString, field);
    const auto sandbox = Sandbox::fromJson(json);
    QVERIFY(!sandbox);
    QCOMPARE(int(sandbox.error().kind), int(airlock::ErrorKind::InvalidParams));
    QVERIFY2(sandbox.error().message.contains(field), qPrintable(sandbox.error().message));
}

void TestSandboxJson::validation_data()
{
    QTest::addColumn<SandboxSpec>("spec");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("field");
    const SandboxSpec ok {QStringLiteral("ok"), 1, 256, QStringLiteral("default")};
    QTest::newRow("valid") << ok << -1 << QString();
    SandboxSpec s = ok;
    s.name = QStringLiteral("Bad");
    QTest::newRow("bad name") << s << int(airlock::ErrorKind::InvalidName)
                              << QStringLiteral("name");
    s = ok;
    s.image = QStringLiteral("../../etc");
    QTest::newRow("image path") << s << int(airlock::ErrorKind::InvalidName)
                                << QStringLiteral("image id");
    s = ok;
    s.vcpus = 0;
    QTest::newRow("0 vcpus") << s << int(airlock::ErrorKind::InvalidParams)
                             << QStringLiteral("vcpus");
    s.vcpus = 33;
    QTest::newRow("33 vcpus") << s << int(airlock::ErrorKind::InvalidParams)
                              << QStringLiteral("vcpus");
    s = ok;
    s.memoryMib = 63;
    QTest::newRow("63 MiB") << s << int(airlock::ErrorKind::InvalidParams)
                            << QStringLiteral("memoryMib");
    s.memoryMib = 65537;
    QTest::newRow("65537 MiB") << s << int(airlock::ErrorKind::InvalidParams)
                               << QStringLiteral("memoryMib");
    s.memoryMib = 65536;
    QTest::newRow("65536 MiB") << s << -1 << QString();
}

void TestSandboxJson::validation()
{
    QFETCH(SandboxSpec, spec);
    QFETCH(int, kind);
    QFETCH(QString, field);
    const auto result = spec.validate();
    if (kind < 0) {
        QVERIFY(result);
        return;
    }
    QVERIFY(!result);
    QCOMPARE(int(result.error().kind), kind);
    QVERIFY2(result.error().message.contains(field), qPrintable(result.error().message));
}

QTEST_APPLESS_MAIN(TestSandboxJson)
#include "tst_sandboxjson.moc"
