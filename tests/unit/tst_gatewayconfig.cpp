// GatewayConfig::fromJson (docs/gateway.md, "Control messages"): a valid config, and one row
// per kind of invalid field, each error naming the dotted field.
#include "core/gateway/gatewayconfig.h"
#include "resultcheck.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace airlock;
using namespace airlock::gateway;
using namespace Qt::StringLiterals;

namespace {

QJsonObject validConfig()
{
    return QJsonDocument::fromJson(R"({"type":"config","version":1,"sandbox":"demo",
        "listen":{"tcp":"127.0.0.1:15001","dns":"10.77.0.1:53"},
        "link":{"gateway":"10.77.0.1","guest":"10.77.0.2","prefixLength":30},
        "explicitProxyPort":3128,"syntheticPool":"100.112.0.0/16",
        "upstreamDns":{"address":"127.0.0.53","port":53,"timeoutMs":2000},
        "trustStore":{"caFile":"/tmp/ca.pem"},
        "ca":{"certificatePem":"C","keyPem":"K"},
        "policy":{"version":1,"rules":[{"host":"pkg.test"}]},
        "limits":{"maxConnections":10,"idleTimeoutMs":5000,"maxHeaderBytes":8192}})")
        .object();
}

// Sets `path` ("a.b") in `object` to `value`; an undefined value removes the key.
void set(QJsonObject &object, const QString &path, const QJsonValue &value)
{
    const qsizetype dot = path.indexOf(u'.');
    if (dot < 0) {
        if (value.isUndefined())
            object.remove(path);
        else
            object.insert(path, value);
        return;
    }
    QJsonObject inner = object.value(path.left(dot)).toObject();
    set(inner, path.mid(dot + 1), value);
    object.insert(path.left(dot), inner);
}

} // namespace

class TestGatewayConfig : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void valid();
    void inheritedFds();
    void defaults();
    void invalid_data();
    void invalid();
};

void TestGatewayConfig::valid()
{
    const auto config = GatewayConfig::fromJson(validConfig());
    QVERIFY_RESULT(config);
    QCOMPARE(config->sandbox, u"demo"_s);
    QCOMPARE(config->listen.tcp->port, quint16(15001));
    QCOMPARE(config->listen.dns->address, QHostAddress(u"10.77.0.1"_s));
    QVERIFY(!config->listen.tcpFd);
    QCOMPARE(config->linkRange().toString(), u"10.77.0.0/30"_s);
    QCOMPARE(config->upstreamDnsAddress, QHostAddress(u"127.0.0.53"_s));
    QCOMPARE(config->trustStore.caFile, u"/tmp/ca.pem"_s);
    QCOMPARE(config->policy.rules.size(), 1);
    QCOMPARE(config->limits.maxConnections, 10);
    QCOMPARE(config->limits.maxHeaderBytes, 8192);
}

void TestGatewayConfig::inheritedFds()
{
    QJsonObject json = validConfig();
    json.insert(u"listen"_s, QJsonObject {{u"tcpFd"_s, 5}, {u"dnsUdpFd"_s, 6}, {u"dnsTcpFd"_s, 7}});
    const auto config = GatewayConfig::fromJson(json);
    QVERIFY_RESULT(config);
    QCOMPARE(*config->listen.tcpFd, 5);
    QCOMPARE(*config->listen.dnsTcpFd, 7);
    QVERIFY(!config->listen.tcp);
}

void TestGatewayConfig::defaults()
{
    QJsonObject json = validConfig();
    json.remove(u"limits"_s);
    json.remove(u"trustStore"_s);
    json.remove(u"explicitProxyPort"_s);
    set(json, u"upstreamDns.port"_s, QJsonValue::Undefined);
    const auto config = GatewayConfig::fromJson(json);
    QVERIFY(config);
    QCOMPARE(config->limits.maxConnections, 1024);
    QCOMPARE(config->limits.idleTimeoutMs, 60000);
    QVERIFY(config->trustStore.caFile.isEmpty());
    QCOMPARE(config->explicitProxyPort, quint16(3128));
    QCOMPARE(config->upstreamDnsPort, quint16(53));
    QVERIFY(config->refusedRanges.contains(QHostAddress(u"127.0.0.1"_s)));
    QVERIFY(config->refuseHostAddresses);
    json.insert(u"refuseHostAddresses"_s, false);
    QVERIFY(!GatewayConfig::fromJson(json)->refuseHostAddresses);
}

void TestGatewayConfig::invalid_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QJsonValue>("value"); // Undefined: removed
    QTest::addColumn<QString>("field"); // named in the error
    const QJsonValue removed(QJsonValue::Undefined);
    QTest::newRow("version 2") << u"version"_s << QJsonValue(2) << u"version"_s;
    QTest::newRow("no sandbox") << u"sandbox"_s << removed << u"sandbox"_s;
    QTest::newRow("unknown key") << u"colour"_s << QJsonValue(1) << u"colour"_s;
    QTest::newRow("unknown nested key") << u"link.mtu"_s << QJsonValue(1500) << u"link.mtu"_s;
    QTest::newRow("bad gateway") << u"link.gateway"_s << QJsonValue(u"10.77.0.300"_s)
                                 << u"link.gateway"_s;
    QTest::newRow("guest outside link")
        << u"link.guest"_s << QJsonValue(u"10.78.0.2"_s) << u"link.guest"_s;
    QTest::newRow("prefix 32") << u"link.prefixLength"_s << QJsonValue(32)
                               << u"link.prefixLength"_s;
    QTest::newRow("listen tcp no port")
        << u"listen.tcp"_s << QJsonValue(u"127.0.0.1"_s) << u"listen.tcp"_s;
    QTest::newRow("listen tcp ipv6")
        << u"listen.tcp"_s << QJsonValue(u"::1:80"_s) << u"listen.tcp"_s;
    QTest::newRow("listen both") << u"listen.tcpFd"_s << QJsonValue(5) << u"listen"_s;
    QTest::newRow("pool /31") << u"syntheticPool"_s << QJsonValue(u"100.112.0.0/31"_s)
                              << u"syntheticPool"_s;
    QTest::newRow("pool host bits")
        << u"syntheticPool"_s << QJsonValue(u"100.112.0.1/16"_s) << u"syntheticPool"_s;
    QTest::newRow("dns port 0") << u"upstreamDns.port"_s << QJsonValue(0) << u"upstreamDns.port"_s;
    QTest::newRow("dns timeout string")
        << u"upstreamDns.timeoutMs"_s << QJsonValue(u"2000"_s) << u"upstreamDns.timeoutMs"_s;
    QTest::newRow("refused not array")
        << u"refusedRanges"_s << QJsonValue(u"10.0.0.0/8"_s) << u"refusedRanges"_s;
    QTest::newRow("refused bad range")
        << u"refusedRanges"_s << QJsonValue(QJsonArray {u"10.0.0.1/8"_s}) << u"refusedRanges"_s;
    QTest::newRow("refuse host addresses not a bool")
        << u"refuseHostAddresses"_s << QJsonValue(u"yes"_s) << u"refuseHostAddresses"_s;
    QTest::newRow("no ca key") << u"ca.keyPem"_s << removed << u"ca.keyPem"_s;
    QTest::newRow("policy wildcard too broad")
        << u"policy"_s
        << QJsonValue(
               QJsonObject {{u"version"_s, 1},
                            {u"rules"_s, QJsonArray {QJsonObject {{u"host"_s, u"*.test"_s}}}}})
        << u"rule 0"_s;
    QTest::newRow("limits zero connections")
        << u"limits.maxConnections"_s << QJsonValue(0) << u"limits.maxConnections"_s;
    QTest::newRow("limits fraction")
        << u"limits.idleTimeoutMs"_s << QJsonValue(1000.5) << u"limits.idleTimeoutMs"_s;
}

void TestGatewayConfig::invalid()
{
    QFETCH(QString, path);
    QFETCH(QJsonValue, value);
    QFETCH(QString, field);
    QJsonObject json = validConfig();
    set(json, path, value);
    const auto config = GatewayConfig::fromJson(json);
    QVERIFY(!config);
    QCOMPARE(config.error().kind, ErrorKind::InvalidParams);
    QVERIFY2(config.error().message.contains(field), qPrintable(config.error().message));
}

QTEST_APPLESS_MAIN(TestGatewayConfig)
#include "tst_gatewayconfig.moc"
