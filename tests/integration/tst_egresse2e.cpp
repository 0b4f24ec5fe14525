// End to end with a real guest: airlockd (in its own network namespace, HelperProcess), the
// real airlock-gateway and a TCG guest (the busybox image) whose plain HTTP requests go through
// the gateway to local servers in an "upstream" namespace: pkg.test is allowed and answers,
// evil.test is not and is never reached; both decisions arrive over RPC as egress.event. HTTPS
// with curl is tst_defaultimage's (this image) and tst_debianguest's (with python3 too).
//
//   guest ──tap── [helper ns: airlockd, gateway, table] ──veth 198.51.100.0/24── [upstream ns:
//   pkg.test 198.51.100.10:80, evil.test 198.51.100.66:80, DNS 198.51.100.53]
//
// 198.51.100.0/24 is TEST-NET-2 (RFC 5737), assigned here inside namespaces the test made; no
// namespace has a default route, so nothing can leave the machine (GatewayTopology).

#include "gatewaytopology.h"
#include "guestconsole.h"
#include "rpctestclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <unistd.h>

using airlock::test::GatewayTopology;
using airlock::test::GuestConsole;
using airlock::test::RpcTestClient;
using airlock::test::ServerEndpoint;
namespace topo = airlock::test::topo;

namespace {

const QString kName = QStringLiteral("e2e");
const QHostAddress kPkgAddress = topo::PkgServer;
const QHostAddress kEvilAddress = topo::EvilServer;
constexpr int kBootTimeoutMs = 120000;

} // namespace

class TestEgressEndToEnd : public QObject
{
    Q_OBJECT

private:
    /// Runs `fetch ARGS` in the guest; what it printed, up to and with its fetch-rc= line
    /// (null on timeout: the console so far then goes to the log).
    QByteArray fetch(const QByteArray &arguments)
    {
        return m_console->run("fetch " + arguments, 60000);
    }
    /// The first egress event (queued or arriving within `timeoutMs`) matching the fields.
    std::optional<QJsonObject> egress(const QString &name, const QString &layer,
                                      const QString &verdict, int timeoutMs = 15000)
    {
        return egressWhere(
            [&](const QJsonObject &event) {
                return event.value(QStringLiteral("name")).toString() == name
                    && event.value(QStringLiteral("layer")).toString() == layer
                    && event.value(QStringLiteral("verdict")).toString() == verdict;
            },
            timeoutMs);
    }
    /// The first egress.event params whose event satisfies `match`; the ones that do not
    /// stay queued for later checks.
    std::optional<QJsonObject> egressWhere(const std::function<bool(const QJsonObject &)> &match,
                                           int timeoutMs = 15000)
    {
        auto matches = [&](const QJsonObject &params) {
            return match(params.value(QStringLiteral("event")).toObject());
        };
        const auto message =
            m_client->waitForNotification(QStringLiteral("egress.event"), matches, timeoutMs);
        if (!message)
            return std::nullopt;
        return message->value(QStringLiteral("params")).toObject();
    }

    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<RpcTestClient> m_client;
    std::unique_ptr<GuestConsole> m_console;

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("needs root (network namespaces, taps, nftables)");
        if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
            QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
        m_net = std::make_unique<GatewayTopology>(
            GatewayTopology::Options {.tag = QStringLiteral("e"),
                                      .side = GatewayTopology::Side::Helper,
                                      .hosts = {{QStringLiteral("pkg.test"), kPkgAddress},
                                                {QStringLiteral("evil.test"), kEvilAddress}},
                                      .servers = {{QStringLiteral("pkg"),
                                                   kPkgAddress,
                                                   80,
                                                   ServerEndpoint::Kind::Http,
                                                   {},
                                                   ServerEndpoint::Answer::Hello},
                                                  {QStringLiteral("evil"),
                                                   kEvilAddress,
                                                   80,
                                                   ServerEndpoint::Kind::Http,
                                                   {},
                                                   ServerEndpoint::Answer::Hello}}});
        QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

        m_client = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
        QVERIFY(m_client->hello());
        QVERIFY(
            m_client->call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
        QVERIFY(m_client
                    ->call(QStringLiteral("sandbox.create"),
                           QJsonObject {{QStringLiteral("name"), kName}})
                    .contains(QStringLiteral("result")));
        const QJsonObject policy {
            {QStringLiteral("version"), 1},
            {QStringLiteral("rules"),
             QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")},
                                      {QStringLiteral("ports"), QJsonArray {80, 443}}}}}};
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
        QVERIFY(m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
        // The shell prompt, so typed commands are not lost to the boot.
        QCOMPARE(m_console->run("echo boot-$((40+2))", 30000).trimmed(), QByteArray("boot-42"));
    }

    void cleanupTestCase()
    {
        m_console.reset();
        m_client.reset();
        m_net.reset(); // airlockd and its guests, the servers, the upstream namespace
    }

    void guestTrustsTheSandboxCa()
    {
        const QByteArray counts = m_console->run(
            "grep -c BEGIN /run/airlock/ca.pem /etc/ssl/certs/ca-certificates.crt", 10000);
        QVERIFY2(counts.contains("ca-certificates.crt:1"), counts.constData());
    }

    void defineFetch()
    {
        // busybox-static's wget crashes resolving names (static glibc cannot load NSS), and
        // its TLS client (ssl_client) offers no signature algorithm for the gateway's ECDSA
        // leaves (handshake_failure). So the guest resolves with nslookup (through the
        // gateway's DNS) and speaks plain HTTP on port 80 with nc: the same path through DNS,
        // the synthetic address, the table's redirect, the policy and the upstream connection.
        // HTTPS with curl is tst_defaultimage's part. `fetch NAME PATH [ADDRESS]` prints the
        // response and then fetch-rc=<status> (fetch-rc=dns when the name did not resolve).
        const QByteArray fetchFunction =
            "fetch() { a=$(nslookup -type=a \"$1\" 2>/dev/null | awk '/^Address/ {x=$NF} END "
            "{print x}');"
            " case \"$a\" in *:53|'') a=\"${3:-}\";; esac; [ -n \"$a\" ] || { echo fetch-rc=dns;"
            " return; }; printf 'GET %s HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n'"
            " \"$2\" \"$1\" | nc -w 20 \"$a\" 80; echo fetch-rc=$?; }";
        QVERIFY(
            m_console->run(fetchFunction + "; echo fetch-$((6*7))", 10000).contains("fetch-42"));
    }

    void allowedNameIsReached()
    {
        const QByteArray output = fetch("pkg.test /hello");
        const QJsonObject history = RpcTestClient::result(m_client->call(
            QStringLiteral("egress.history"), QJsonObject {{QStringLiteral("name"), kName}}));
        QVERIFY2(output.contains("HTTP/1.1 200"),
                 (output + QJsonDocument(history).toJson(QJsonDocument::Compact)).constData());
        QVERIFY2(output.contains("hello pkg.test /hello"), output.constData());
        QVERIFY(m_net->upstream().requests(QStringLiteral("pkg")).size() >= 1);
        QVERIFY(
            egress(QStringLiteral("pkg.test"), QStringLiteral("dns"), QStringLiteral("allowed")));
        const auto http =
            egress(QStringLiteral("pkg.test"), QStringLiteral("http"), QStringLiteral("allowed"));
        QVERIFY(http);
        const QJsonObject event = http->value(QStringLiteral("event")).toObject();
        QCOMPARE(event.value(QStringLiteral("method")).toString(), QStringLiteral("GET"));
        QCOMPARE(event.value(QStringLiteral("path")).toString(), QStringLiteral("/hello"));
        QCOMPARE(event.value(QStringLiteral("status")).toInt(), 200);
    }

    void deniedNameIsNeverReached()
    {
        const QByteArray byName = fetch("evil.test /");
        QVERIFY2(byName.contains("fetch-rc=dns"), byName.constData());
        QVERIFY(
            egress(QStringLiteral("evil.test"), QStringLiteral("dns"), QStringLiteral("denied")));
        // Dialing evil.test's real address directly is redirected to the gateway and refused
        // there (403: no rule for the name), still without reaching it.
        const QByteArray direct = fetch("evil.test / " + kEvilAddress.toString().toLatin1());
        QVERIFY2(direct.contains("fetch-rc=") && !direct.contains("HTTP/1.1 200"),
                 direct.constData());
        QVERIFY2(direct.contains("HTTP/1.1 403"), direct.constData());
        const auto event = egressWhere(
            [](const QJsonObject &e) {
                return e.value(QStringLiteral("layer")).toString() == u"http"
                    && e.value(QStringLiteral("verdict")).toString() == u"denied"
                    && e.value(QStringLiteral("name")).toString() == u"evil.test";
            },
            5000);
        QVERIFY(event);
        QCOMPARE(event->value(QStringLiteral("event"))
                     .toObject()
                     .value(QStringLiteral("reason"))
                     .toString(),
                 QStringLiteral("host_not_allowed"));
        QVERIFY(m_net->settle());
        QCOMPARE(m_net->upstream().connections(QStringLiteral("evil")).size(), 0);
        // Both decisions are in the helper's history too.
        const QJsonObject history = RpcTestClient::result(m_client->call(
            QStringLiteral("egress.history"),
            QJsonObject {{QStringLiteral("name"), kName}, {QStringLiteral("limit"), 1000}}));
        const QByteArray text = QJsonDocument(history).toJson(QJsonDocument::Compact);
        QVERIFY(text.contains("\"name\":\"pkg.test\""));
        QVERIFY(text.contains("\"name\":\"evil.test\""));
    }
};

QTEST_GUILESS_MAIN(TestEgressEndToEnd)
#include "tst_egresse2e.moc"
