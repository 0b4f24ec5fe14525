// SshEndpoint: parsing `[USER@]HOST[:PORT]` (airlockctl --host) and the remote bridge command.

#include "core/ssh/sshendpoint.h"

#include <QTest>

using airlock::SshEndpoint;

class TestSshEndpoint : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parse_data();
    void parse();
    void displayName();
    void bridgeCommandQuotes();
};

void TestSshEndpoint::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("user");
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    auto row = [](const char *tag, const char *text, bool valid, const char *user = "",
                  const char *host = "", int port = 0) {
        QTest::newRow(tag) << QString::fromUtf8(text) << valid << QString::fromUtf8(user)
                           << QString::fromUtf8(host) << port;
    };
    row("host", "build", true, "", "build", 22);
    row("user@host", "alice@build.example.org", true, "alice", "build.example.org", 22);
    row("user@host:port", "alice@10.0.0.5:2222", true, "alice", "10.0.0.5", 2222);
    row("ipv6 bare", "::1", true, "", "::1", 22);
    row("ipv6 bracketed with port", "bob@[fe80::1%eth0]:22022", true, "bob", "fe80::1%eth0", 22022);
    row("user with @", "a@b@host", true, "a@b", "host", 22);
    row("empty", "", false);
    row("empty user", "@host", false);
    row("no host", "alice@:22", false);
    row("port zero", "host:0", false);
    row("port too big", "host:65536", false);
    row("port not a number", "host:ssh", false);
    row("unclosed bracket", "[::1:22", false);
    row("shell characters", "host;rm", false);
    row("space", "my host", false);
}

void TestSshEndpoint::parse()
{
    QFETCH(QString, text);
    QFETCH(bool, valid);
    const auto endpoint = SshEndpoint::parse(text);
    QCOMPARE(endpoint.has_value(), valid);
    if (!valid) {
        QCOMPARE(endpoint.error().kind, airlock::ErrorKind::InvalidParams);
        QVERIFY(!endpoint.error().message.isEmpty());
        return;
    }
    QTEST(endpoint->user, "user");
    QTEST(endpoint->host, "host");
    QTEST(int(endpoint->port), "port");
}

void TestSshEndpoint::displayName()
{
    SshEndpoint endpoint = *SshEndpoint::parse(QStringLiteral("alice@[::1]:2222"));
    QCOMPARE(endpoint.displayName(), QStringLiteral("alice@[::1]:2222"));
    endpoint.port = 22;
    QCOMPARE(endpoint.displayName(), QStringLiteral("alice@[::1]"));
    QVERIFY(!SshEndpoint::parse(QStringLiteral("host"))->effectiveUser().isEmpty());
}

void TestSshEndpoint::bridgeCommandQuotes()
{
    SshEndpoint endpoint;
    endpoint.socketPath = QStringLiteral("/run/it's here/airlockd.sock");
    endpoint.remoteCommand = QStringLiteral("/opt/air lock/airlockctl");
    QCOMPARE(
        endpoint.bridgeCommand(),
        QStringLiteral("'/opt/air lock/airlockctl' --socket '/run/it'\\''s here/airlockd.sock' "
                       "bridge"));
}

QTEST_APPLESS_MAIN(TestSshEndpoint)
#include "tst_sshendpoint.moc"
