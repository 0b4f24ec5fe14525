// A hostile guest agent inside a real TCG guest (trust boundary 1, docs/architecture.md;
// docs/agent-protocol.md "The hostile guest"): the test replaces /sbin/airlock-agent of two
// guests with airlock-hostile-agent (tests/agent/hostileagent.cpp) through the real agent, kills
// the real one, and the guests' init starts the hostile one on the port. It stalls (exec), lies
// about a frame's length (files.stat), floods the port with stray frames (files.list) and sends
// an oversized frame (files.mkdir). Each hostile sandbox's requests end with a clear error
// (timeout, protocol_error, then agent_unavailable) while airlockd keeps serving other clients
// and a third, well-behaved sandbox's exec. The functions run in order: the flood completes the
// lie of the first.
#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "sanitizer.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

constexpr int kBootTimeoutMs = 180000;
constexpr int kCallTimeoutMs = 60000;
/// The helper's deadline for an agent answer (AgentClient::Limits), and then some.
constexpr int kAgentTimeoutWaitMs = 90000;
constexpr qint64 kChunkBytes = 512 * 1024;
const QString kGood = QStringLiteral("good");
const QString kStalling = QStringLiteral("hostile-a");
const QString kOversized = QStringLiteral("hostile-b");

/// A request sent now whose answer is read later (the hostile ones take long to fail).
class PendingCall
{
public:
    PendingCall(const QString &socket, const QString &method, const QJsonObject &params)
        : m_client(socket)
    {
        const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                   {QStringLiteral("id"), 1},
                                   {QStringLiteral("method"), method},
                                   {QStringLiteral("params"), params}};
        m_client.sendRaw(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
    }
    /// The answer (not a notification); empty after `timeoutMs`.
    QJsonObject answer(int timeoutMs)
    {
        while (auto message = m_client.readMessage(timeoutMs)) {
            if (!message->contains(QStringLiteral("method")))
                return *message;
        }
        return {};
    }
    /// True when an answer is already waiting on the socket (without blocking).
    bool answered() { return m_client.socket().bytesAvailable() > 0; }

private:
    RpcTestClient m_client;
};

} // namespace

class TestAgentHostileGuest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void stallAndLyingLengthTimeOut();
    void floodIsAProtocolErrorThenUnavailable();
    void oversizedFrameIsAProtocolError();

private:
    QJsonObject call(const QString &method, QJsonObject params, const QString &sandbox);
    /// exec of a shell line in `sandbox`: its stdout, or a null array (the reason is logged).
    QByteArray run(const QString &sandbox, const QString &command);
    /// The good sandbox still runs commands, and another client is served.
    void othersAreServed();
    bool makeHostile(const QString &sandbox);

    std::unique_ptr<HelperProcess> m_helper;
};

void TestAgentHostileGuest::initTestCase()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("the hostile agent is a dynamic, instrumented binary in this "
                                "build; the busybox guest has no sanitizer runtime");
    QVERIFY2(QFileInfo::exists(QStringLiteral(AIRLOCK_HOSTILE_AGENT)), AIRLOCK_HOSTILE_AGENT);
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    RpcTestClient client(m_helper->socketPath());
    // All three boot at once; each is waited for after.
    for (const QString &name : {kGood, kStalling, kOversized}) {
        QVERIFY(client.call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), name}})
                    .contains(QStringLiteral("result")));
        const QJsonObject started =
            client.call(QStringLiteral("sandbox.start"), {{QStringLiteral("name"), name}}, 120000);
        QCOMPARE(RpcTestClient::result(started).value(QStringLiteral("state")).toString(),
                 QStringLiteral("running"));
    }
    for (const QString &name : {kGood, kStalling, kOversized}) {
        GuestConsole console(m_helper->socketPath(), name);
        QVERIFY2(console.waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0, qPrintable(name));
    }
    QVERIFY(makeHostile(kStalling));
    QVERIFY(makeHostile(kOversized));
}

void TestAgentHostileGuest::cleanupTestCase()
{
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

QJsonObject TestAgentHostileGuest::call(const QString &method, QJsonObject params,
                                        const QString &sandbox)
{
    params.insert(QStringLiteral("name"), sandbox);
    RpcTestClient client(m_helper->socketPath());
    return client.call(method, params, kCallTimeoutMs);
}

QByteArray TestAgentHostileGuest::run(const QString &sandbox, const QString &command)
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(
        QStringLiteral("exec.start"),
        {{QStringLiteral("name"), sandbox}, {QStringLiteral("command"), command}}, kCallTimeoutMs);
    const qint64 pid = RpcTestClient::result(answer).value(QStringLiteral("pid")).toInteger();
    if (pid == 0) {
        qWarning("exec in %s: %s", qPrintable(sandbox),
                 QJsonDocument(answer).toJson(QJsonDocument::Compact).constData());
        return {};
    }
    QByteArray out("");
    while (auto message = client.readMessage(kCallTimeoutMs)) {
        const QJsonObject p = message->value(QStringLiteral("params")).toObject();
        const QString method = message->value(QStringLiteral("method")).toString();
        if (method == u"exec.output")
            out += QByteArray::fromBase64(p.value(QStringLiteral("data")).toString().toLatin1());
        else if (method == u"exec.exit")
            return p.value(QStringLiteral("exitCode")).toInt(-1) == 0 ? out : QByteArray();
    }
    return {};
}

void TestAgentHostileGuest::othersAreServed()
{
    QCOMPARE(run(kGood, QStringLiteral("echo served; hostname")),
             QByteArray("served\n") + kGood.toUtf8() + '\n');
    RpcTestClient other(m_helper->socketPath());
    const QJsonArray sandboxes =
        RpcTestClient::result(other.call(QStringLiteral("sandbox.list"), {}))
            .value(QStringLiteral("sandboxes"))
            .toArray();
    QCOMPARE(sandboxes.size(), 3);
}

bool TestAgentHostileGuest::makeHostile(const QString &sandbox)
{
    QFile binary(QStringLiteral(AIRLOCK_HOSTILE_AGENT));
    if (!binary.open(QIODevice::ReadOnly))
        return false;
    const QByteArray content = binary.readAll();
    for (qsizetype at = 0; at < content.size(); at += kChunkBytes) {
        const QJsonObject written = call(
            QStringLiteral("files.write"),
            {{QStringLiteral("path"), QStringLiteral("/sbin/airlock-hostile")},
             {QStringLiteral("data"), QString::fromLatin1(content.mid(at, kChunkBytes).toBase64())},
             {QStringLiteral("append"), at > 0},
             {QStringLiteral("mode"), 0755}},
            sandbox);
        if (!written.contains(QStringLiteral("result"))) {
            qWarning("%s", QJsonDocument(written).toJson(QJsonDocument::Compact).constData());
            return false;
        }
    }
    // The running binary cannot be overwritten (ETXTBSY), but renamed over; then the real
    // agent dies, init starts /sbin/airlock-agent again, and its unasked Hello makes airlockd
    // fail what was in flight on the channel: this exec.
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject started = client.call(
        QStringLiteral("exec.start"),
        {{QStringLiteral("name"), sandbox},
         {QStringLiteral("command"),
          QStringLiteral("mv -f /sbin/airlock-hostile /sbin/airlock-agent && kill -9 $PPID")}},
        kCallTimeoutMs);
    if (RpcTestClient::errorKind(started) == u"agent_unavailable")
        return true; // killed before its Started went out
    if (!started.contains(QStringLiteral("result"))) {
        qWarning("%s", QJsonDocument(started).toJson(QJsonDocument::Compact).constData());
        return false;
    }
    const auto exit = client.waitForNotification(
        QStringLiteral("exec.exit"), [](const QJsonObject &) { return true; }, kCallTimeoutMs);
    if (!exit)
        return false;
    const QJsonObject params = exit->value(QStringLiteral("params")).toObject();
    const QString kind =
        params.value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString();
    if (kind != u"agent_unavailable")
        qWarning("%s", QJsonDocument(params).toJson(QJsonDocument::Compact).constData());
    return kind == u"agent_unavailable";
}

void TestAgentHostileGuest::stallAndLyingLengthTimeOut()
{
    // exec: never answered. stat: a header announcing 60000 bytes, 10 of them, then silence:
    // the channel is stuck inside that frame, which costs only this sandbox's requests.
    PendingCall stalled(m_helper->socketPath(), QStringLiteral("exec.start"),
                        {{QStringLiteral("name"), kStalling},
                         {QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}}});
    PendingCall lied(
        m_helper->socketPath(), QStringLiteral("files.stat"),
        {{QStringLiteral("name"), kStalling}, {QStringLiteral("path"), QStringLiteral("/")}});
    othersAreServed();
    // Served while both hostile requests still wait (their deadline is seconds away).
    QVERIFY(!stalled.answered());
    QVERIFY(!lied.answered());
    for (PendingCall *pending : {&stalled, &lied}) {
        const QJsonObject answer = pending->answer(kAgentTimeoutWaitMs);
        QCOMPARE(RpcTestClient::errorKind(answer), QStringLiteral("timeout"));
    }
    othersAreServed();
}

void TestAgentHostileGuest::floodIsAProtocolErrorThenUnavailable()
{
    // list: the rest of the lie, then 4 KiB Pong frames under the timed-out stat's id, as fast
    // as the port takes them: strays, until the host's budget ends the connection.
    PendingCall flooded(
        m_helper->socketPath(), QStringLiteral("files.list"),
        {{QStringLiteral("name"), kStalling}, {QStringLiteral("path"), QStringLiteral("/")}});
    othersAreServed();
    QCOMPARE(RpcTestClient::errorKind(flooded.answer(kCallTimeoutMs)),
             QStringLiteral("protocol_error"));
    // The channel is gone: no more requests reach that guest, and none waits.
    QCOMPARE(
        RpcTestClient::errorKind(call(QStringLiteral("files.stat"),
                                      {{QStringLiteral("path"), QStringLiteral("/")}}, kStalling)),
        QStringLiteral("agent_unavailable"));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("exec.start"),
                      {{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}}}, kStalling)),
             QStringLiteral("agent_unavailable"));
    othersAreServed();
}

void TestAgentHostileGuest::oversizedFrameIsAProtocolError()
{
    QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("files.mkdir"),
                                           {{QStringLiteral("path"), QStringLiteral("/tmp/x")}},
                                           kOversized)),
             QStringLiteral("protocol_error"));
    QCOMPARE(
        RpcTestClient::errorKind(call(QStringLiteral("files.stat"),
                                      {{QStringLiteral("path"), QStringLiteral("/")}}, kOversized)),
        QStringLiteral("agent_unavailable"));
    othersAreServed();
    // The sandbox itself is still the helper's to stop.
    QVERIFY(
        call(QStringLiteral("sandbox.kill"), {}, kOversized).contains(QStringLiteral("result")));
}

QTEST_GUILESS_MAIN(TestAgentHostileGuest)
#include "tst_agenthostileguest.moc"
