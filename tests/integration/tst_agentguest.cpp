// exec.* and files.* (docs/protocol.md, "Exec and files") through a real airlockd into real TCG
// guests of both images, over the guest agent's virtio-serial channel: output and exit codes,
// stderr apart, a timeout kill, the unprivileged `agent` user and its /workspace, a 16 MiB file
// round trip with checksum, file operations and their errors, a fork that answers exec with
// its own identity, a guest restored in place that answers from the snapshot's state,
// `airlockctl exec -t` on a terminal whose size the guest's PTY follows, and a workspace pushed
// in, changed by the agent and pulled out with what a hostile root planted (symlinks leaving
// the target, a FIFO, a setuid file, a hard link) refused and named. The
// sandboxes' egress policy stays the default deny-all: none of this uses the network.
#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "testfolders.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

constexpr int kBootTimeoutMs = 180000;
constexpr int kCallTimeoutMs = 60000;
constexpr qint64 kChunkBytes = 512 * 1024;
const QString kSmall = QStringLiteral("work");
const QString kDebian = QStringLiteral("work-deb");
const QString kFork = QStringLiteral("work-fork");

/// What one exec did.
struct ExecRun
{
    QString errorKind; ///< of exec.start; empty when it ran
    QByteArray out;
    QByteArray err;
    QJsonObject exit; ///< exec.exit params; empty when none came
};

} // namespace

class TestAgentGuest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void execReportsOutputAndExitCode_data();
    void execReportsOutputAndExitCode();
    void execTimeoutKillsTheProcessGroup();
    void agentUserOwnsTheWorkspace_data();
    void agentUserOwnsTheWorkspace();
    void fileRoundTripOf16MiB();
    void fileOperationsAndErrors();
    void workspaceRoundTripRefusesWhatTheGuestPlanted_data();
    void workspaceRoundTripRefusesWhatTheGuestPlanted();
    void execTtyFollowsTheTerminalSize();
    void forkAnswersWithItsOwnIdentity();
    void restoreInPlaceAnswersAgain();

private:
    ExecRun exec(const QString &sandbox, QJsonObject params);
    QJsonObject call(const QString &method, QJsonObject params, const QString &sandbox = kSmall);
    bool boot(const QString &name, const QString &image);
    /// Runs airlockctl against the helper; exit code (-1 when it did not end), stdout, stderr.
    std::tuple<int, QByteArray, QByteArray> airlockctl(const QStringList &arguments);

    std::unique_ptr<HelperProcess> m_helper;
};

void TestAgentGuest::initTestCase()
{
    m_helper = std::make_unique<HelperProcess>();
    for (const char *image : {"default", "debian"})
        QVERIFY2(QFileInfo::exists(m_helper->imageStore() + u'/' + QLatin1String(image)
                                   + QStringLiteral("/image.json")),
                 "no guest image (the guest_image fixtures build them)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    QVERIFY(boot(kSmall, QStringLiteral("default")));
    QVERIFY(boot(kDebian, QStringLiteral("debian")));
}

void TestAgentGuest::cleanupTestCase()
{
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

bool TestAgentGuest::boot(const QString &name, const QString &image)
{
    RpcTestClient client(m_helper->socketPath());
    if (!client
             .call(QStringLiteral("sandbox.create"),
                   {{QStringLiteral("name"), name}, {QStringLiteral("image"), image}})
             .contains(QStringLiteral("result")))
        return false;
    const QJsonObject started =
        client.call(QStringLiteral("sandbox.start"), {{QStringLiteral("name"), name}}, 120000);
    if (RpcTestClient::result(started).value(QStringLiteral("state")) != QLatin1String("running"))
        return false;
    // The guest's init prints this after it started the agent.
    GuestConsole console(m_helper->socketPath(), name);
    return console.waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0;
}

QJsonObject TestAgentGuest::call(const QString &method, QJsonObject params, const QString &sandbox)
{
    params.insert(QStringLiteral("name"), sandbox);
    RpcTestClient client(m_helper->socketPath());
    return client.call(method, params, kCallTimeoutMs);
}

ExecRun TestAgentGuest::exec(const QString &sandbox, QJsonObject params)
{
    params.insert(QStringLiteral("name"), sandbox);
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(QStringLiteral("exec.start"), params, kCallTimeoutMs);
    ExecRun run;
    run.errorKind = RpcTestClient::errorKind(answer);
    const qint64 pid = RpcTestClient::result(answer).value(QStringLiteral("pid")).toInteger();
    if (pid == 0) {
        if (run.errorKind.isEmpty())
            run.errorKind = QStringLiteral("no answer");
        return run;
    }
    // The notifications of this connection, in order, up to the exit.
    while (run.exit.isEmpty()) {
        const std::optional<QJsonObject> message = client.readMessage(kCallTimeoutMs);
        if (!message)
            break;
        const QJsonObject p = message->value(QStringLiteral("params")).toObject();
        if (p.value(QStringLiteral("pid")).toInteger() != pid)
            continue;
        const QString method = message->value(QStringLiteral("method")).toString();
        if (method == QLatin1String("exec.output"))
            (p.value(QStringLiteral("stream")) == QLatin1String("stdout") ? run.out : run.err) +=
                QByteArray::fromBase64(p.value(QStringLiteral("data")).toString().toLatin1());
        else if (method == QLatin1String("exec.exit"))
            run.exit = p;
    }
    return run;
}

void TestAgentGuest::execReportsOutputAndExitCode_data()
{
    QTest::addColumn<QString>("sandbox");
    QTest::newRow("small image") << kSmall;
    QTest::newRow("debian image") << kDebian;
}

void TestAgentGuest::execReportsOutputAndExitCode()
{
    QFETCH(QString, sandbox);
    const ExecRun echo =
        exec(sandbox,
             {{QStringLiteral("argv"), QJsonArray {QStringLiteral("echo"), QStringLiteral("hi")}}});
    QCOMPARE(echo.errorKind, QString());
    QCOMPARE(echo.out, QByteArray("hi\n"));
    QCOMPARE(echo.exit.value(QStringLiteral("exitCode")).toInt(-1), 0);

    const ExecRun failing = exec(
        sandbox, {{QStringLiteral("command"), QStringLiteral("echo out; echo err >&2; exit 7")}});
    QCOMPARE(failing.out, QByteArray("out\n"));
    QCOMPARE(failing.err, QByteArray("err\n"));
    QCOMPARE(failing.exit.value(QStringLiteral("exitCode")).toInt(-1), 7);

    // The guest is the one the hostname says: the agent runs in it, not on the host.
    const ExecRun host =
        exec(sandbox, {{QStringLiteral("argv"), QJsonArray {QStringLiteral("hostname")}}});
    QCOMPARE(host.out.trimmed(), sandbox.toUtf8());

    const ExecRun missing =
        exec(sandbox, {{QStringLiteral("argv"), QJsonArray {QStringLiteral("/no/such/program")}}});
    QVERIFY2(!missing.errorKind.isEmpty()
                 || missing.exit.value(QStringLiteral("exitCode")).toInt() == 127,
             qPrintable(missing.errorKind));
}

void TestAgentGuest::execTimeoutKillsTheProcessGroup()
{
    // A shell whose child would outlive it: the deadline kills the group, so the exit comes.
    const ExecRun run = exec(kSmall,
                             {{QStringLiteral("command"), QStringLiteral("sleep 300 & sleep 300")},
                              {QStringLiteral("timeoutMs"), 1000}});
    QCOMPARE(run.exit.value(QStringLiteral("signal")).toInt(), 9);
    QVERIFY(run.exit.value(QStringLiteral("timedOut")).toBool());
    const ExecRun left = exec(
        kSmall,
        {{QStringLiteral("command"), QStringLiteral("ps -o args | grep -c '^sleep 300' || true")}});
    QCOMPARE(left.out.trimmed(), QByteArray("0"));
}

void TestAgentGuest::agentUserOwnsTheWorkspace_data()
{
    execReportsOutputAndExitCode_data();
}

void TestAgentGuest::agentUserOwnsTheWorkspace()
{
    QFETCH(QString, sandbox);
    const ExecRun run = exec(sandbox,
                             {{QStringLiteral("command"),
                               QStringLiteral("id -un; pwd; touch /workspace/mine && "
                                              "stat -c %U /workspace/mine; touch /root/x")},
                              {QStringLiteral("user"), QStringLiteral("agent")},
                              {QStringLiteral("cwd"), QStringLiteral("/workspace")}});
    QCOMPARE(run.out, QByteArray("agent\n/workspace\nagent\n"));
    QVERIFY(run.err.contains("Permission denied")); // not root
    QVERIFY(run.exit.value(QStringLiteral("exitCode")).toInt() != 0);
}

void TestAgentGuest::fileRoundTripOf16MiB()
{
    QByteArray content(16 * 1024 * 1024, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(content.data()),
                                          content.size() / 4);
    const QString path = QStringLiteral("/workspace/big/file.bin");
    for (qsizetype at = 0; at < content.size(); at += kChunkBytes) {
        const QByteArray part = content.mid(at, kChunkBytes);
        const QJsonObject answer =
            call(QStringLiteral("files.write"),
                 {{QStringLiteral("path"), path},
                  {QStringLiteral("data"), QString::fromLatin1(part.toBase64())},
                  {QStringLiteral("createParents"), true},
                  {QStringLiteral("append"), at > 0}});
        QVERIFY2(answer.contains(QStringLiteral("result")),
                 QJsonDocument(answer).toJson().constData());
    }
    const ExecRun sum =
        exec(kSmall, {{QStringLiteral("command"), QStringLiteral("sha256sum ") + path}});
    QCOMPARE(sum.out.left(64),
             QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
    QByteArray back;
    for (bool eof = false; !eof;) {
        const QJsonObject answer =
            call(QStringLiteral("files.read"),
                 {{QStringLiteral("path"), path}, {QStringLiteral("offset"), back.size()}});
        const QJsonObject chunk = RpcTestClient::result(answer);
        QVERIFY2(!chunk.isEmpty(), QJsonDocument(answer).toJson().constData());
        back += QByteArray::fromBase64(chunk.value(QStringLiteral("data")).toString().toLatin1());
        eof = chunk.value(QStringLiteral("eof")).toBool();
        QVERIFY(back.size() <= content.size());
    }
    QVERIFY(back == content);
    const QJsonObject info =
        RpcTestClient::result(call(QStringLiteral("files.stat"), {{QStringLiteral("path"), path}}));
    QCOMPARE(info.value(QStringLiteral("size")).toInteger(), content.size());
}

void TestAgentGuest::fileOperationsAndErrors()
{
    const QString root = QStringLiteral("/workspace/ops");
    QVERIFY(call(QStringLiteral("files.mkdir"),
                 {{QStringLiteral("path"), root + QStringLiteral("/a/b")},
                  {QStringLiteral("parents"), true}})
                .contains(QStringLiteral("result")));
    QVERIFY(call(QStringLiteral("files.write"),
                 {{QStringLiteral("path"), root + QStringLiteral("/a/one")},
                  {QStringLiteral("data"), QString::fromLatin1(QByteArray("1").toBase64())}})
                .contains(QStringLiteral("result")));
    QVERIFY(call(QStringLiteral("files.rename"),
                 {{QStringLiteral("from"), root + QStringLiteral("/a/one")},
                  {QStringLiteral("to"), root + QStringLiteral("/a/b/two")}})
                .contains(QStringLiteral("result")));
    const QJsonArray entries =
        RpcTestClient::result(call(QStringLiteral("files.list"),
                                   {{QStringLiteral("path"), root}, {QStringLiteral("depth"), 3}}))
            .value(QStringLiteral("entries"))
            .toArray();
    QStringList names;
    for (const QJsonValue &entry : entries)
        names << entry.toObject().value(QStringLiteral("name")).toString();
    names.sort();
    QCOMPARE(names,
             (QStringList {QStringLiteral("a"), QStringLiteral("a/b"), QStringLiteral("a/b/two")}));
    QCOMPARE(
        RpcTestClient::errorKind(call(QStringLiteral("files.read"),
                                      {{QStringLiteral("path"), root + QStringLiteral("/nope")}})),
        QStringLiteral("not_found"));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("files.read"), {{QStringLiteral("path"), root}})),
             QStringLiteral("is_a_directory"));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("files.remove"), {{QStringLiteral("path"), root}})),
             QStringLiteral("not_empty"));
    QVERIFY(call(QStringLiteral("files.remove"),
                 {{QStringLiteral("path"), root}, {QStringLiteral("recursive"), true}})
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("files.stat"), {{QStringLiteral("path"), root}})),
             QStringLiteral("not_found"));
    // A stopped sandbox has no agent to ask.
    QCOMPARE(
        RpcTestClient::errorKind(call(QStringLiteral("files.stat"),
                                      {{QStringLiteral("path"), root}}, QStringLiteral("nosuch"))),
        QStringLiteral("not_found"));
}

std::tuple<int, QByteArray, QByteArray> TestAgentGuest::airlockctl(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"),
                  QStringList {QStringLiteral("--socket"), m_helper->socketPath()} + arguments);
    if (!process.waitForFinished(kCallTimeoutMs) || process.exitStatus() != QProcess::NormalExit)
        return {-1, process.readAllStandardOutput(), process.readAllStandardError()};
    return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
}

void TestAgentGuest::workspaceRoundTripRefusesWhatTheGuestPlanted_data()
{
    execReportsOutputAndExitCode_data();
}

void TestAgentGuest::workspaceRoundTripRefusesWhatTheGuestPlanted()
{
    QFETCH(QString, sandbox);
    QTemporaryDir project;
    const auto write = [](const QString &path, const QByteArray &content) {
        QDir().mkpath(QFileInfo(path).path());
        QFile file(path);
        return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
    };
    QVERIFY(write(project.filePath(QStringLiteral("app.py")), "print('hello')\n"));
    QVERIFY(write(project.filePath(QStringLiteral("src/lib.py")), "X = 1\n"));
    const QString guest = QStringLiteral("/workspace/project");
    auto [pushed, pushOut, pushErr] = airlockctl(
        {QStringLiteral("workspace"), QStringLiteral("push"), sandbox, project.path(), guest});
    QVERIFY2(pushed == 0, pushErr.constData());
    QVERIFY2(pushOut.startsWith("pushed 3 entries"), pushOut.constData());

    // The agent works as `agent`; then a hostile root plants what must not come out.
    const ExecRun work =
        exec(sandbox,
             {{QStringLiteral("user"), QStringLiteral("agent")},
              {QStringLiteral("cwd"), guest},
              {QStringLiteral("command"),
               QStringLiteral("echo \"print('hello agent')\" > app.py && echo ok > NEW.md")}});
    QVERIFY2(work.exit.value(QStringLiteral("exitCode")).toInt(-1) == 0,
             (work.err
              + exec(sandbox,
                     {{QStringLiteral("command"), QStringLiteral("ls -lan /workspace/project")}})
                    .out)
                 .constData());
    const ExecRun plant =
        exec(sandbox,
             {{QStringLiteral("cwd"), guest},
              {QStringLiteral("command"),
               QStringLiteral("ln -s /etc/passwd passwd && ln -s ../../../.. src/up && "
                              "mkfifo pipe && echo x > suid && chmod 4755 suid && "
                              "ln src/lib.py src/zz-alias")}});
    QVERIFY2(plant.exit.value(QStringLiteral("exitCode")).toInt(-1) == 0, plant.err.constData());

    auto [differs, diffOut, diffErr] = airlockctl(
        {QStringLiteral("workspace"), QStringLiteral("diff"), sandbox, project.path(), guest});
    QVERIFY2(differs == 1, diffErr.constData());
    QVERIFY2(diffOut.contains("-print('hello')\n+print('hello agent')\n"), diffOut.constData());
    QVERIFY(diffOut.contains("+++ b/NEW.md"));
    QVERIFY(diffOut.contains("refused passwd: symlink_escapes"));
    QVERIFY(diffOut.contains("refused pipe: fifo"));
    QVERIFY(diffOut.contains("refused suid: setuid"));

    QTemporaryDir parent;
    QVERIFY(write(parent.filePath(QStringLiteral("sentinel")), "mine\n"));
    const QString target = parent.filePath(QStringLiteral("out"));
    auto [pulled, pullOut, pullErr] =
        airlockctl({QStringLiteral("--json"), QStringLiteral("workspace"), QStringLiteral("pull"),
                    sandbox, target, guest});
    QVERIFY2(pulled == 0, pullErr.constData());
    QMap<QString, QString> refused;
    for (const QJsonValue &entry :
         QJsonDocument::fromJson(pullOut).object().value(QStringLiteral("refused")).toArray())
        refused.insert(entry[QStringLiteral("path")].toString(),
                       entry[QStringLiteral("reason")].toString());
    QCOMPARE(
        refused,
        (QMap<QString, QString> {{QStringLiteral("passwd"), QStringLiteral("symlink_escapes")},
                                 {QStringLiteral("src/up"), QStringLiteral("symlink_escapes")},
                                 {QStringLiteral("pipe"), QStringLiteral("fifo")},
                                 {QStringLiteral("suid"), QStringLiteral("setuid")},
                                 {QStringLiteral("src/zz-alias"), QStringLiteral("hardlink")}}));
    const QStringList written = airlock::test::entriesBelow(parent.path());
    QCOMPARE(written,
             (QStringList {QStringLiteral("out"), QStringLiteral("out/NEW.md"),
                           QStringLiteral("out/app.py"), QStringLiteral("out/src"),
                           QStringLiteral("out/src/lib.py"), QStringLiteral("sentinel")}));
    QFile app(target + QStringLiteral("/app.py"));
    QVERIFY(app.open(QIODevice::ReadOnly));
    QCOMPARE(app.readAll(), QByteArray("print('hello agent')\n"));
}

void TestAgentGuest::execTtyFollowsTheTerminalSize()
{
    // airlockctl on a terminal of 33 x 101 (a pty of ours, its controlling terminal), the
    // command on the guest's PTY: it prints its size, waits until that changes, prints it again.
    const QByteArray ctl = qgetenv("AIRLOCK_AIRLOCKCTL");
    QVERIFY2(!ctl.isEmpty(), "AIRLOCK_AIRLOCKCTL (ctest sets it)");
    const QByteArray socket = m_helper->socketPath().toUtf8();
    const QByteArray name = kSmall.toUtf8();
    std::vector<const char *> argv {ctl.constData(),
                                    "--socket",
                                    socket.constData(),
                                    "exec",
                                    "-t",
                                    name.constData(),
                                    "--",
                                    "sh",
                                    "-c",
                                    "s=$(stty size); echo \"size $s\"; "
                                    "while [ \"$(stty size)\" = \"$s\" ]; do sleep 0.1; done; "
                                    "echo \"size $(stty size)\"",
                                    nullptr};
    winsize size {};
    size.ws_row = 33;
    size.ws_col = 101;
    int master = -1;
    const pid_t child = ::forkpty(&master, nullptr, nullptr, &size);
    QVERIFY(child >= 0);
    if (child == 0) {
        ::execv(argv[0], const_cast<char *const *>(argv.data()));
        ::_exit(127);
    }
    QByteArray seen;
    const auto waitFor = [&](const QByteArray &needle) {
        QElapsedTimer timer;
        timer.start();
        while (!seen.contains(needle) && timer.elapsed() < kCallTimeoutMs) {
            pollfd readable {master, POLLIN, 0};
            if (::poll(&readable, 1, 1000) <= 0)
                continue;
            char buffer[4096];
            const ssize_t n = ::read(master, buffer, sizeof buffer);
            if (n <= 0)
                break; // airlockctl closed the terminal: it ended
            seen.append(buffer, n);
        }
        return seen.contains(needle);
    };
    const bool initial = waitFor("size 33 101");
    // The kernel sends SIGWINCH to airlockctl (the terminal's foreground process group).
    size.ws_row = 40;
    size.ws_col = 120;
    if (initial)
        ::ioctl(master, TIOCSWINSZ, &size);
    const bool resized = initial && waitFor("size 40 120");
    if (!resized)
        ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(master);
    QVERIFY2(initial, seen.constData());
    QVERIFY2(resized, seen.constData());
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
}

void TestAgentGuest::forkAnswersWithItsOwnIdentity()
{
    // A file written before the snapshot is in the fork; the fork's agent (restored from the
    // snapshot's memory, mid-connection) answers a new host connection under its own name.
    QVERIFY(call(QStringLiteral("files.write"),
                 {{QStringLiteral("path"), QStringLiteral("/workspace/before-fork")},
                  {QStringLiteral("data"), QString::fromLatin1(QByteArray("kept").toBase64())}})
                .contains(QStringLiteral("result")));
    const QJsonObject snapshot = RpcTestClient::result(call(QStringLiteral("snapshot.create"), {}));
    const QString id = snapshot.value(QStringLiteral("id")).toString();
    QVERIFY(!id.isEmpty());
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject fork =
        client.call(QStringLiteral("snapshot.fork"),
                    {{QStringLiteral("snapshot"), id}, {QStringLiteral("name"), kFork}}, 180000);
    QVERIFY2(fork.contains(QStringLiteral("result")), QJsonDocument(fork).toJson().constData());
    const ExecRun host =
        exec(kFork, {{QStringLiteral("argv"), QJsonArray {QStringLiteral("hostname")}}});
    QCOMPARE(host.errorKind, QString());
    QCOMPARE(host.out.trimmed(), kFork.toUtf8());
    const QJsonObject kept = RpcTestClient::result(
        call(QStringLiteral("files.read"),
             {{QStringLiteral("path"), QStringLiteral("/workspace/before-fork")}}, kFork));
    QCOMPARE(QByteArray::fromBase64(kept.value(QStringLiteral("data")).toString().toLatin1()),
             QByteArray("kept"));
    // The original still answers too.
    const ExecRun original =
        exec(kSmall, {{QStringLiteral("argv"), QJsonArray {QStringLiteral("hostname")}}});
    QCOMPARE(original.out.trimmed(), kSmall.toUtf8());
}

void TestAgentGuest::restoreInPlaceAnswersAgain()
{
    // The restored guest's agent resumes from the snapshot's memory: the helper's new VMM
    // connection must resynchronise with it, and what it serves is the snapshot's state.
    const auto write = [this](const QByteArray &text) {
        return call(QStringLiteral("files.write"),
                    {{QStringLiteral("path"), QStringLiteral("/workspace/state")},
                     {QStringLiteral("data"), QString::fromLatin1(text.toBase64())}})
            .contains(QStringLiteral("result"));
    };
    QVERIFY(write("before"));
    const QString id = RpcTestClient::result(call(QStringLiteral("snapshot.create"), {}))
                           .value(QStringLiteral("id"))
                           .toString();
    QVERIFY(!id.isEmpty());
    QVERIFY(write("after"));
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject restored =
        client.call(QStringLiteral("snapshot.restore"),
                    {{QStringLiteral("name"), kSmall}, {QStringLiteral("snapshot"), id}}, 180000);
    QVERIFY2(restored.contains(QStringLiteral("result")),
             QJsonDocument(restored).toJson().constData());
    const ExecRun run = exec(
        kSmall, {{QStringLiteral("command"), QStringLiteral("cat /workspace/state; hostname")}});
    QCOMPARE(run.errorKind, QString());
    QCOMPARE(run.out, QByteArray("before") + kSmall.toUtf8() + '\n');
    QCOMPARE(run.exit.value(QStringLiteral("exitCode")).toInt(-1), 0);
}

QTEST_GUILESS_MAIN(TestAgentGuest)
#include "tst_agentguest.moc"
