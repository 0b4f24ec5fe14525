// Which resolver airlockd hands its gateways (core/daemon/upstreamdns.h, docs/dns.md): the
// --upstream-dns text, the host's resolv.conf(5), and the fail-closed fallback.
#include "core/daemon/upstreamdns.h"

#include <QTemporaryDir>
#include <QTest>

using namespace airlock;
using namespace Qt::Literals::StringLiterals;

class TestUpstreamDns : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fromText_data();
    void fromText();
    void firstNameserver_data();
    void firstNameserver();
    void hostResolverReadsTheFile();
    void choose_data();
    void choose();
};

void TestUpstreamDns::fromText_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("address"); // empty: refused
    QTest::addColumn<int>("port");
    QTest::newRow("address") << u"192.0.2.53"_s << u"192.0.2.53"_s << 53;
    QTest::newRow("address and port") << u"127.0.0.1:5353"_s << u"127.0.0.1"_s << 5353;
    QTest::newRow("lowest port") << u"10.0.0.1:1"_s << u"10.0.0.1"_s << 1;
    QTest::newRow("highest port") << u"10.0.0.1:65535"_s << u"10.0.0.1"_s << 65535;
    QTest::newRow("bare IPv6") << u"::1"_s << u"::1"_s << 53;
    QTest::newRow("port 0") << u"10.0.0.1:0"_s << QString() << 0;
    QTest::newRow("port too high") << u"10.0.0.1:65536"_s << QString() << 0;
    QTest::newRow("port not a number") << u"10.0.0.1:dns"_s << QString() << 0;
    QTest::newRow("bracketed IPv6 with port") << u"[::1]:53"_s << QString() << 0;
    QTest::newRow("host name") << u"dns.example"_s << QString() << 0;
    QTest::newRow("empty") << QString() << QString() << 0;
}

void TestUpstreamDns::fromText()
{
    QFETCH(QString, text);
    QFETCH(QString, address);
    QFETCH(int, port);
    const QJsonObject upstream = upstreamdns::fromText(text);
    if (address.isEmpty()) {
        QVERIFY2(upstream.isEmpty(), qPrintable(text));
        return;
    }
    QCOMPARE(upstream.value(u"address").toString(), address);
    QCOMPARE(upstream.value(u"port").toInt(), port);
    QCOMPARE(upstream.value(u"timeoutMs").toInt(), 2000);
}

void TestUpstreamDns::firstNameserver_data()
{
    QTest::addColumn<QByteArray>("resolvConf");
    QTest::addColumn<QString>("nameserver");
    QTest::newRow("one") << QByteArray("nameserver 192.0.2.1\n") << u"192.0.2.1"_s;
    QTest::newRow("first of two") << QByteArray("nameserver 192.0.2.1\nnameserver 192.0.2.2\n")
                                  << u"192.0.2.1"_s;
    QTest::newRow("after comments and search")
        << QByteArray("# generated\n; old\nsearch example\noptions edns0\nnameserver 192.0.2.7\n")
        << u"192.0.2.7"_s;
    QTest::newRow("tabs and blanks") << QByteArray("  nameserver\t192.0.2.9  \n") << u"192.0.2.9"_s;
    QTest::newRow("no final newline") << QByteArray("nameserver 192.0.2.3") << u"192.0.2.3"_s;
    QTest::newRow("commented out") << QByteArray("#nameserver 192.0.2.4\n") << QString();
    QTest::newRow("keyword without address") << QByteArray("nameserver\n") << QString();
    QTest::newRow("empty") << QByteArray() << QString();
}

void TestUpstreamDns::firstNameserver()
{
    QFETCH(QByteArray, resolvConf);
    QFETCH(QString, nameserver);
    QCOMPARE(upstreamdns::firstNameserver(resolvConf), nameserver);
}

void TestUpstreamDns::hostResolverReadsTheFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"resolv.conf"_s);
    QCOMPARE(upstreamdns::hostResolver(path), QString()); // missing file
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("search lan\nnameserver 198.51.100.1\n");
    file.close();
    QCOMPARE(upstreamdns::hostResolver(path), u"198.51.100.1"_s);
}

void TestUpstreamDns::choose_data()
{
    QTest::addColumn<QString>("configured");
    QTest::addColumn<bool>("isConfigured");
    QTest::addColumn<QString>("host");
    QTest::addColumn<QString>("chosen");
    QTest::newRow("configured wins")
        << u"127.0.0.1:5353"_s << true << u"192.0.2.1"_s << u"127.0.0.1:5353"_s;
    // An invalid --upstream-dns is passed on so that airlockd refuses it, never replaced.
    QTest::newRow("configured invalid stays")
        << u"nonsense"_s << true << u"192.0.2.1"_s << u"nonsense"_s;
    QTest::newRow("host resolver") << QString() << false << u"192.0.2.1"_s << u"192.0.2.1"_s;
    QTest::newRow("no host resolver fails closed")
        << QString() << false << QString() << u"127.0.0.1"_s;
    QTest::newRow("unusable host resolver fails closed")
        << QString() << false << u"resolver.lan"_s << u"127.0.0.1"_s;
}

void TestUpstreamDns::choose()
{
    QFETCH(QString, configured);
    QFETCH(bool, isConfigured);
    QFETCH(QString, host);
    QFETCH(QString, chosen);
    QCOMPARE(upstreamdns::choose(configured, isConfigured, host), chosen);
}

QTEST_GUILESS_MAIN(TestUpstreamDns)
#include "tst_upstreamdns.moc"
