// The default (busybox) guest image as a new user first meets it, booted once under TCG behind
// the real gateway:
// - its boot console is clean: none of the errors earlier builds printed on every boot (x86's PCI
//   init on a machine without PCI, the partition probe of the short seed disk, rcS calling a
//   `mountpoint` that busybox lacks);
// - curl (Debian's, in the initramfs) trusts the sandbox CA from the seed disk and reaches
//   https://pkg.test/ (a local HTTPS server under a test CA in an "upstream" namespace), while
//   https://evil.test/ is denied by the gateway and never reached; both decisions arrive over RPC
//   as egress.event;
// - busybox's crashing wget is not what `wget` runs.
//
//   guest ──tap── [helper ns: airlockd, gateway, table] ──veth 198.51.100.0/24── [upstream ns:
//   pkg.test 198.51.100.10:443, evil.test 198.51.100.66:443, DNS 198.51.100.53]
//
// 198.51.100.0/24 is TEST-NET-2 (RFC 5737), assigned here inside namespaces the test made; no
// namespace has a default route, so nothing can leave the machine (GatewayTopology).

#include "gatewaytopology.h"
#include "guestconsole.h"
#include "rpctestclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <algorithm>
#include <unistd.h>

using airlock::test::GatewayTopology;
using airlock::test::GuestConsole;
using airlock::test::RpcTestClient;
using airlock::test::ServerEndpoint;
namespace topo = airlock::test::topo;

namespace {

const QString kName = QStringLiteral("first");
const QHostAddress kPkgAddress = topo::PkgServer;
const QHostAddress kEvilAddress = topo::EvilServer;
constexpr int kBootTimeoutMs = 120000;

} // namespace

class TestDefaultImage : public QObject
{
    Q_OBJECT

private:
    /// The params of the first egress.event (queued or arriving within `timeoutMs`) whose event
    /// has this name, layer and verdict; the others stay queued for later checks.
    std::optional<QJsonObject> egress(const QString &name, const QString &layer,
                                      const QString &verdict, int timeoutMs = 15000)
    {
        const auto message = m_client->waitForNotification(
            QStringLiteral("egress.event"),
            [&](const QJsonObject &params) {
                const QJsonObject event = params.value(QStringLiteral("event")).toObject();
                return event.value(QStringLiteral("name")).toString() == name
                    && event.value(QStringLiteral("layer")).toString() == layer
                    && event.value(QStringLiteral("verdict")).toString() == verdict;
            },
            timeoutMs);
        if (!message)
            return std::nullopt;
        return message->value(QStringLiteral("params")).toObject();
    }

    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<RpcTestClient> m_client;
    std::unique_ptr<GuestConsole> m_console;
    QByteArray m_boot; ///< the console from power-on to the ready line

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("needs root (network namespaces, taps, nftables)");
        if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
            QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
        m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
            .tag = QStringLiteral("f"),
            .side = GatewayTopology::Side::Helper,
            .hosts = {{QStringLiteral("pkg.test"), kPkgAddress},
                      {QStringLiteral("evil.test"), kEvilAddress}},
            .servers = {{QStringLiteral("pkg"), kPkgAddress, 443, ServerEndpoint::Kind::Https,
                         QStringLiteral("pkg.test"), ServerEndpoint::Answer::Hello},
                        {QStringLiteral("evil"), kEvilAddress, 443, ServerEndpoint::Kind::Https,
                         QStringLiteral("evil.test"), ServerEndpoint::Answer::Hello}}});
        QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

        m_client = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
        QVERIFY(m_client->hello());
        QVERIFY(
            m_client->call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
        // No image named: the default one, as a new user's first sandbox.
        QVERIFY(m_client
                    ->call(QStringLiteral("sandbox.create"),
                           QJsonObject {{QStringLiteral("name"), kName}})
                    .contains(QStringLiteral("result")));
        const QJsonObject policy {
            {QStringLiteral("version"), 1},
            {QStringLiteral("rules"),
             QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}}}};
        QVERIFY(m_client
                    ->call(QStringLiteral("policy.set"),
                           QJsonObject {{QStringLiteral("name"), kName},
                                        {QStringLiteral("policy"), policy}})
                    .contains(QStringLiteral("result")));
        const QJsonObject started = m_client->call(
            QStringLiteral("sandbox.start"), QJsonObject {{QStringLiteral("name"), kName}}, 60000);
        QVERIFY2(started.contains(QStringLiteral("result")),
                 QJsonDocument(started).toJson().constData());
        m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kName);
        const qsizetype ready = m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs);
        QVERIFY(ready >= 0);
        m_boot = m_console->text().left(ready);
        // The shell prompt, so typed commands are not lost to the boot.
        QCOMPARE(m_console->run("echo boot-$((40+2))", 30000).trimmed(), QByteArray("boot-42"));
    }

    void cleanupTestCase()
    {
        m_console.reset();
        m_client.reset();
        m_net.reset(); // airlockd and its guest, the servers, the upstream namespace
    }

    void bootConsoleIsClean()
    {
        // The console's scrollback starts at power-on (the helper keeps it from the VMM's
        // start), so the kernel's errors before the ready line would be in it.
        QVERIFY2(!m_boot.isEmpty(), "nothing on the console before the ready line");
        qInfo("boot console:\n%s", m_boot.constData());
        for (const QByteArray &needle :
             {QByteArray("PCI: Fatal"), QByteArray("unable to read RDB block"),
              QByteArray("not found"), QByteArray("rcS:"), QByteArray("airlock-guest: cannot")})
            QVERIFY2(!m_boot.contains(needle), needle.constData());
        // What the fixes change is in effect: the image's log level, a seed of 64 KiB.
        QVERIFY(m_console->run("cat /proc/cmdline").contains("quiet loglevel=3"));
        QCOMPARE(m_console->run("cat /sys/block/vda/serial; echo; cat /sys/block/vda/size")
                     .replace("\r", ""),
                 QByteArray("airlock-seed\n128\n"));
    }

    void curlTrustsTheSandboxCa()
    {
        const QByteArray counts = m_console->run(
            "grep -c BEGIN /run/airlock/ca.pem /etc/ssl/certs/ca-certificates.crt", 10000);
        QVERIFY2(counts.contains("ca.pem:1") && counts.contains("ca-certificates.crt:1"),
                 counts.constData());
        QVERIFY(m_console->run("curl --version").contains("OpenSSL"));
    }

    void curlReachesAnAllowedHttpsHost()
    {
        // No -k: curl verifies the gateway's leaf for pkg.test against the sandbox CA.
        const QByteArray output =
            m_console->run("curl -sS --max-time 60 https://pkg.test/hello; echo curl-rc=$?", 90000);
        QVERIFY2(output.contains("hello pkg.test /hello"), output.constData());
        QVERIFY2(output.contains("curl-rc=0"), output.constData());
        const auto pkg = m_net->upstream().connections(QStringLiteral("pkg"));
        QVERIFY(std::any_of(pkg.cbegin(), pkg.cend(), [](const airlock::test::ConnectionRecord &c) {
            return c.sni == u"pkg.test";
        }));
        const auto http =
            egress(QStringLiteral("pkg.test"), QStringLiteral("http"), QStringLiteral("allowed"));
        QVERIFY(http);
        QCOMPARE(
            http->value(QStringLiteral("event")).toObject().value(QStringLiteral("status")).toInt(),
            200);
    }

    void curlCannotReachADeniedHost()
    {
        const QByteArray byName =
            m_console->run("curl -sS --max-time 30 https://evil.test/; echo curl-rc=$?", 60000);
        QVERIFY2(byName.contains("curl-rc=") && !byName.contains("curl-rc=0"), byName.constData());
        QVERIFY2(!byName.contains("hello evil.test"), byName.constData());
        QVERIFY(
            egress(QStringLiteral("evil.test"), QStringLiteral("dns"), QStringLiteral("denied")));
        // Its real address dialled directly: redirected to the gateway, refused at the
        // ClientHello.
        const QByteArray direct = m_console->run("curl -sS --max-time 30 --resolve evil.test:443:"
                                                     + kEvilAddress.toString().toLatin1()
                                                     + " https://evil.test/; echo curl-rc=$?",
                                                 60000);
        QVERIFY2(direct.contains("curl-rc=") && !direct.contains("curl-rc=0"), direct.constData());
        QVERIFY(
            egress(QStringLiteral("evil.test"), QStringLiteral("tls"), QStringLiteral("denied")));
        QVERIFY(m_net->settle());
        QCOMPARE(m_net->upstream().connections(QStringLiteral("evil")).size(), 0);
    }

    void noCrashingWget()
    {
        // busybox's wget crashes in this guest: the console's shell says to use curl instead,
        // and exec (through PATH) finds no wget.
        const QByteArray output = m_console->run("wget http://pkg.test/; echo wget-rc=$?", 60000);
        QVERIFY2(output.contains("use curl") && output.contains("wget-rc=127"), output.constData());
        QCOMPARE(
            m_console->run("ls /usr/bin/wget /usr/bin/ssl_client 2>/dev/null | wc -l").trimmed(),
            QByteArray("0"));
    }
};

QTEST_GUILESS_MAIN(TestDefaultImage)
#include "tst_defaultimage.moc"
