// AgentClient against the real airlock-agent binary run natively on the host (root, in a
// temporary folder; no guest, no QEMU): exec (output, exit codes, errors, timeout kill,
// signals, stdin round trip, user, env, cwd, PTY size and resize), 64 MiB of stdout to a slow
// reader with the client's buffers bounded, files (16 MiB round trip with checksum, stat, list,
// mkdir, rename, remove and their errors), a recursive folder watch (create, write, rename,
// remove, a folder made later, the folder itself going, a file refused), archives out (a
// planted tree with a symlink pointing out, a FIFO, a setuid file and a hard link, typed so
// that the host refuses them) and in, process list and reattach after a reconnect, and the
// identity refresh.
#include "core/agent/agentprocess.h"
#include "core/agent/agentreadstream.h"
#include "core/agent/agentwritestream.h"
#include "core/agentwire/archiveextractor.h"
#include "core/agentwire/archivewalker.h"
#include "nativeagent.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QTest>
#include <QTimer>

#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace airlock::agent;
using namespace airlock::agentwire;
using airlock::test::NativeAgent;

namespace {

constexpr int kWaitMs = 30000;

template<typename T, typename Issue>
AgentResult<T> await(Issue issue)
{
    std::optional<AgentResult<T>> result;
    issue([&result](const AgentResult<T> &answer) { result = answer; });
    if (!QTest::qWaitFor([&] { return result.has_value(); }, kWaitMs))
        return std::unexpected(AgentError::timeout(QStringLiteral("no answer in the test")));
    return *result;
}

/// Everything one process did.
struct Run
{
    QByteArray out;
    QByteArray err;
    std::optional<ExitStatus> exit;
    std::optional<AgentError> error;
    quint32 pid = 0;
};

/// Runs `request` to its end, reading as output comes, writing `input` (then closing stdin).
Run run(AgentClient &client, const ExecRequest &request, const QByteArray &input = {})
{
    Run result;
    AgentProcess *process = client.exec(request);
    qsizetype written = 0;
    const auto feed = [&] {
        while (written < input.size()) {
            const qint64 n = process->writeStdin(QByteArrayView(input).sliced(written));
            if (n == 0)
                return;
            written += n;
        }
        if (request.stdinOpen || request.pty)
            process->closeStdin();
    };
    QObject::connect(process, &AgentProcess::started, process, [&](quint32 pid) {
        result.pid = pid;
        feed();
    });
    QObject::connect(process, &AgentProcess::stdinWritten, process, feed);
    QObject::connect(process, &AgentProcess::readyReadStdout, process,
                     [&] { result.out += process->readStdout(); });
    QObject::connect(process, &AgentProcess::readyReadStderr, process,
                     [&] { result.err += process->readStderr(); });
    QObject::connect(process, &AgentProcess::finished, process,
                     [&](const ExitStatus &status) { result.exit = status; });
    QObject::connect(process, &AgentProcess::failed, process,
                     [&](const AgentError &error) { result.error = error; });
    if (!QTest::qWaitFor([&] { return result.exit || result.error; }, kWaitMs))
        result.error = AgentError::timeout(QStringLiteral("the test gave up waiting"));
    result.out += process->readStdout();
    result.err += process->readStderr();
    delete process;
    return result;
}

ExecRequest command(std::vector<std::string> argv)
{
    ExecRequest request;
    request.argv = std::move(argv);
    return request;
}

ExecRequest shell(const std::string &line)
{
    ExecRequest request;
    request.argv = {line};
    request.shell = true;
    return request;
}

QByteArray randomBytes(qsizetype size)
{
    QByteArray out(size, Qt::Uninitialized);
    QRandomGenerator generator(42);
    generator.fillRange(reinterpret_cast<quint32 *>(out.data()), size / 4);
    return out;
}

qint64 rssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    }
    return 0;
}

unsigned modeOf(const QString &path)
{
    struct stat st
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return 0;
    return st.st_mode & 07777;
}

std::string stdPath(const QString &path)
{
    return QFile::encodeName(path).toStdString();
}

} // namespace

class TestAgentClient : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void handshake();
    void execEcho();
    void execExitCodeAndSeparateStreams();
    void execErrors();
    void execTimeoutKillsTheGroup();
    void execSignal();
    void execUserEnvCwd();
    void stdinRoundTrip();
    void ptySizeAndResize();
    void slowReaderStaysBounded();
    void fileRoundTrip16MiB();
    void fileOperations();
    void watchFolder();
    void archiveOutTypesWhatTheHostMustRefuse();
    void archiveIn();
    void listAndReattachAfterReconnect();
    void identityRefresh();
    void identityRefreshNamesTheFailedStep();
    void resyncAfterAStaleHalfFrame();

private:
    NativeAgent m_agent;
    std::unique_ptr<AgentClient> m_client;
};

void TestAgentClient::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("the native agent tests switch users and plant setuid files: run as root");
    QVERIFY(m_agent.start());
    m_client = m_agent.connectReady();
    QVERIFY(m_client);
}

void TestAgentClient::handshake()
{
    QVERIFY(m_client->isReady());
    QCOMPARE(m_client->guestHello().version, kVersion);
    QVERIFY(m_client->guestHello().software.starts_with("airlock-agent "));
    QVERIFY(m_client->guestHello().capabilities & kCapExec);
    const auto pong =
        await<QByteArray>([&](auto done) { m_client->ping(QByteArray("ping-1234"), done); });
    QVERIFY(pong);
    QCOMPARE(*pong, QByteArray("ping-1234"));
}

void TestAgentClient::execEcho()
{
    const Run result = run(*m_client, command({"echo", "hello", "world"}));
    QVERIFY(!result.error);
    QVERIFY(result.exit);
    QCOMPARE(result.out, QByteArray("hello world\n"));
    QCOMPARE(result.exit->signaled, false);
    QCOMPARE(result.exit->value, 0);
    QVERIFY(result.pid > 0);
}

void TestAgentClient::execExitCodeAndSeparateStreams()
{
    const Run result = run(*m_client, shell("echo out; echo err >&2; exit 3"));
    QVERIFY(result.exit);
    QCOMPARE(result.exit->value, 3);
    QCOMPARE(result.out, QByteArray("out\n"));
    QCOMPARE(result.err, QByteArray("err\n"));
}

void TestAgentClient::execErrors()
{
    const Run missing = run(*m_client, command({"no-such-program-anywhere"}));
    QVERIFY(missing.error);
    QCOMPARE(missing.error->name(), QStringLiteral("not_found"));
    ExecRequest badCwd = command({"true"});
    badCwd.cwd = "/no/such/folder";
    const Run cwd = run(*m_client, badCwd);
    QVERIFY(cwd.error);
    QCOMPARE(cwd.error->name(), QStringLiteral("not_found"));
    QVERIFY(cwd.error->message.contains(QStringLiteral("cwd")));
    ExecRequest badUser = command({"true"});
    badUser.user = "no-such-user";
    const Run user = run(*m_client, badUser);
    QVERIFY(user.error);
    QCOMPARE(user.error->name(), QStringLiteral("not_found"));
    ExecRequest invalid = command({"true"});
    invalid.cwd = "relative";
    const Run bad = run(*m_client, invalid);
    QVERIFY(bad.error);
    QCOMPARE(bad.error->name(), QStringLiteral("invalid_params"));
    // The connection is still fine.
    QCOMPARE(run(*m_client, command({"true"})).exit->value, 0);
}

void TestAgentClient::execTimeoutKillsTheGroup()
{
    // The shell's background child is in the same process group: it dies too.
    const QString marker = m_agent.path() + QStringLiteral("/survivor");
    ExecRequest request = shell("(sleep 2; touch '" + stdPath(marker) + "') & sleep 30");
    request.timeoutMs = 300;
    const Run result = run(*m_client, request);
    QVERIFY(!result.error);
    QVERIFY(result.exit);
    QVERIFY(result.exit->signaled);
    QCOMPARE(result.exit->value, SIGKILL);
    QVERIFY(result.exit->timedOut);
    // Nobody of the group is left to create the marker: the group's processes are gone
    // (zombies waiting for init to reap them do not count).
    const Run group = run(*m_client,
                          shell("ps -eo pgid=,stat= | awk '$1 == " + std::to_string(result.pid)
                                + " && $2 !~ /^Z/' | wc -l"));
    QCOMPARE(group.out.trimmed(), QByteArray("0"));
    QVERIFY(!QFile::exists(marker));
}

void TestAgentClient::execSignal()
{
    AgentProcess *process = m_client->exec(command({"sleep", "30"}));
    std::optional<ExitStatus> exit;
    connect(process, &AgentProcess::started, process, [process] { process->sendSignal(SIGTERM); });
    connect(process, &AgentProcess::finished, process, [&](const ExitStatus &s) { exit = s; });
    QVERIFY(QTest::qWaitFor([&] { return exit.has_value(); }, kWaitMs));
    QVERIFY(exit->signaled);
    QCOMPARE(exit->value, SIGTERM);
    QVERIFY(!exit->timedOut);
    delete process;
}

void TestAgentClient::execUserEnvCwd()
{
    ExecRequest request = shell("echo $FOO; pwd; id -u; echo $HOME");
    request.env = {{"FOO", "bar baz"}};
    request.cwd = "/tmp";
    const Run root = run(*m_client, request);
    QCOMPARE(root.out, QByteArray("bar baz\n/tmp\n0\n/root\n"));
    request.user = "nobody";
    const Run nobody = run(*m_client, request);
    QVERIFY(nobody.exit);
    QCOMPARE(nobody.out.split('\n').at(2), QByteArray("65534"));
}

void TestAgentClient::stdinRoundTrip()
{
    // 1 MiB through cat: more than any window, so credit must flow both ways.
    const QByteArray input = randomBytes(1 << 20);
    ExecRequest request = command({"cat"});
    request.stdinOpen = true;
    const Run result = run(*m_client, request, input);
    QVERIFY(!result.error);
    QCOMPARE(result.exit->value, 0);
    QCOMPARE(result.out.size(), input.size());
    QVERIFY(result.out == input);
}

void TestAgentClient::ptySizeAndResize()
{
    ExecRequest request = command({"stty", "size"});
    request.pty = true;
    request.rows = 40;
    request.cols = 100;
    const Run size = run(*m_client, request);
    QVERIFY(size.exit);
    QCOMPARE(size.out.trimmed(), QByteArray("40 100"));
    QVERIFY(size.err.isEmpty());

    // Resized while it runs: the process reads a line, then asks again.
    ExecRequest resized = shell("read line; stty size");
    resized.pty = true;
    resized.rows = 24;
    resized.cols = 80;
    AgentProcess *process = m_client->exec(resized);
    QByteArray out;
    std::optional<ExitStatus> exit;
    connect(process, &AgentProcess::started, process, [process] {
        process->resize(50, 120);
        process->writeStdin("go\n");
    });
    connect(process, &AgentProcess::readyReadStdout, process,
            [&] { out += process->readStdout(); });
    connect(process, &AgentProcess::finished, process, [&](const ExitStatus &s) { exit = s; });
    QVERIFY(QTest::qWaitFor([&] { return exit.has_value(); }, kWaitMs));
    QVERIFY(out.contains("50 120"));
    delete process;
}

void TestAgentClient::slowReaderStaysBounded()
{
    // 64 MiB of output to a reader that takes 64 KiB per event loop pass: what the client
    // holds never passes its window, and the process is held back instead.
    const qint64 total = 64ll << 20;
    AgentProcess *process =
        m_client->exec(command({"head", "-c", std::to_string(total), "/dev/zero"}));
    qint64 received = 0;
    qint64 maxBuffered = 0;
    std::optional<ExitStatus> exit;
    const qint64 rssBefore = rssKiB();
    qint64 rssMax = rssBefore;
    QTimer reader;
    reader.setInterval(0);
    connect(&reader, &QTimer::timeout, process, [&] {
        maxBuffered = std::max(maxBuffered, m_client->bufferedBytes());
        received += process->readStdout(64 * 1024).size();
        rssMax = std::max(rssMax, rssKiB());
    });
    connect(process, &AgentProcess::finished, process, [&](const ExitStatus &s) { exit = s; });
    reader.start();
    QVERIFY(QTest::qWaitFor([&] { return exit.has_value() && process->stdoutAvailable() == 0; },
                            120000));
    reader.stop();
    received += process->readStdout().size();
    QCOMPARE(received, total);
    QCOMPARE(exit->value, 0);
    QVERIFY2(maxBuffered <= qint64(m_client->limits().window),
             qPrintable(QStringLiteral("buffered %1").arg(maxBuffered)));
#ifndef __SANITIZE_ADDRESS__
    // AddressSanitizer keeps freed blocks in its quarantine (256 MiB): RSS says nothing there.
    QVERIFY2(rssMax - rssBefore < 16 * 1024,
             qPrintable(QStringLiteral("RSS grew by %1 KiB").arg(rssMax - rssBefore)));
#endif
    qInfo("64 MiB to a slow reader: at most %lld bytes buffered, RSS +%lld KiB", maxBuffered,
          rssMax - rssBefore);
    delete process;
}

void TestAgentClient::fileRoundTrip16MiB()
{
    const QByteArray content = randomBytes(16 << 20);
    const QString path = m_agent.path() + QStringLiteral("/files/deep/random.bin");
    AgentWriteStream *writer =
        m_client->writeFile(WriteRequest {stdPath(path), 0600, true, false, false});
    qsizetype written = 0;
    bool finished = false;
    std::optional<AgentError> error;
    const auto feed = [&] {
        while (written < content.size()) {
            const qint64 n = writer->write(QByteArrayView(content).sliced(written));
            if (n == 0)
                return;
            written += n;
        }
        writer->finish();
    };
    connect(writer, &AgentWriteStream::bytesWritten, writer, feed);
    connect(writer, &AgentWriteStream::finished, writer, [&] { finished = true; });
    connect(writer, &AgentWriteStream::failed, writer, [&](const AgentError &e) { error = e; });
    feed();
    QVERIFY(QTest::qWaitFor([&] { return finished || error; }, 60000));
    QVERIFY2(!error, error ? qPrintable(error->message) : "");
    QCOMPARE(writer->bytesSent(), quint64(content.size()));
    delete writer;
    QFileInfo info(path);
    QCOMPARE(info.size(), content.size());
    QCOMPARE(modeOf(path), 0600u);

    AgentReadStream *reader = m_client->readFile(ReadRequest {stdPath(path), 0, 0});
    QCryptographicHash hash(QCryptographicHash::Sha256);
    qint64 size = -1;
    bool ended = false;
    connect(reader, &AgentReadStream::opened, reader,
            [&](quint64 s, quint32) { size = qint64(s); });
    connect(reader, &AgentReadStream::readyRead, reader, [&] { hash.addData(reader->read()); });
    connect(reader, &AgentReadStream::finished, reader, [&] { ended = true; });
    connect(reader, &AgentReadStream::failed, reader, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return ended || error; }, 60000));
    QVERIFY(!error);
    hash.addData(reader->read());
    QCOMPARE(size, content.size());
    QCOMPARE(hash.result(), QCryptographicHash::hash(content, QCryptographicHash::Sha256));
    delete reader;
}

void TestAgentClient::fileOperations()
{
    const std::string base = stdPath(m_agent.path() + QStringLiteral("/ops"));
    const auto ok = [&](auto issue) { return await<void>(issue); };
    QVERIFY(ok([&](auto done) {
        m_client->mkdir(MkdirRequest {base + "/a/b", 0755, true}, done);
    }));
    QVERIFY(ok([&](auto done) {
        m_client->mkdir(MkdirRequest {base + "/a/b", 0755, true}, done);
    }));
    const auto exists = ok([&](auto done) {
        m_client->mkdir(MkdirRequest {base + "/a", 0755, false}, done);
    });
    QCOMPARE(exists.error().name(), QStringLiteral("exists"));
    QVERIFY(QFile(QString::fromStdString(base + "/a/b/f.txt")).open(QIODevice::WriteOnly));

    const auto stat = await<FileInfo>([&](auto done) {
        m_client->stat(StatRequest {base + "/a", false}, done);
    });
    QVERIFY(stat);
    QCOMPARE(stat->kind, FileKind::Directory);
    QCOMPARE(stat->name, std::string("a"));
    const auto missing = await<FileInfo>([&](auto done) {
        m_client->stat(StatRequest {base + "/nope", false}, done);
    });
    QCOMPARE(missing.error().name(), QStringLiteral("not_found"));

    const auto list = await<ListResult>([&](auto done) {
        m_client->list(ListRequest {base, 3, 100}, done);
    });
    QVERIFY(list);
    QCOMPARE(list->entries.size(), std::size_t(3));
    QCOMPARE(list->entries[0].name, std::string("a"));
    QCOMPARE(list->entries[1].name, std::string("a/b"));
    QCOMPARE(list->entries[2].name, std::string("a/b/f.txt"));
    QCOMPARE(list->entries[2].kind, FileKind::File);
    QVERIFY(!list->truncated);
    const auto cut = await<ListResult>([&](auto done) {
        m_client->list(ListRequest {base, 3, 2}, done);
    });
    QVERIFY(cut->truncated);
    QCOMPARE(cut->entries.size(), std::size_t(2));
    const auto notDir = await<ListResult>([&](auto done) {
        m_client->list(ListRequest {base + "/a/b/f.txt", 1, 10}, done);
    });
    QCOMPARE(notDir.error().name(), QStringLiteral("not_a_directory"));

    QVERIFY(ok([&](auto done) {
        m_client->rename(RenameRequest {base + "/a/b/f.txt", base + "/g.txt", false}, done);
    }));
    QVERIFY(QFile::exists(QString::fromStdString(base + "/g.txt")));
    QVERIFY(QFile(QString::fromStdString(base + "/h.txt")).open(QIODevice::WriteOnly));
    const auto noReplace = ok([&](auto done) {
        m_client->rename(RenameRequest {base + "/g.txt", base + "/h.txt", true}, done);
    });
    QCOMPARE(noReplace.error().name(), QStringLiteral("exists"));

    const auto notEmpty = ok([&](auto done) {
        m_client->remove(RemoveRequest {base + "/a", false}, done);
    });
    QCOMPARE(notEmpty.error().name(), QStringLiteral("not_empty"));
    QVERIFY(ok([&](auto done) { m_client->remove(RemoveRequest {base + "/a", true}, done); }));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(base + "/a")));
    QVERIFY(ok([&](auto done) { m_client->remove(RemoveRequest {base + "/g.txt", false}, done); }));
    const auto gone = ok([&](auto done) {
        m_client->remove(RemoveRequest {base + "/g.txt", false}, done);
    });
    QCOMPARE(gone.error().name(), QStringLiteral("not_found"));
    const auto root = ok([&](auto done) { m_client->remove(RemoveRequest {"/", true}, done); });
    QCOMPARE(root.error().name(), QStringLiteral("invalid"));

    // A directory where a file is expected, and a file where a directory is.
    std::optional<AgentError> error;
    AgentReadStream *readDir = m_client->readFile(ReadRequest {base, 0, 0});
    connect(readDir, &AgentReadStream::failed, readDir, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("is_a_directory"));
    delete readDir;
    error.reset();
    AgentWriteStream *writeDir =
        m_client->writeFile(WriteRequest {base, 0644, false, false, false});
    connect(writeDir, &AgentWriteStream::failed, writeDir, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("is_a_directory"));
    delete writeDir;
    const auto underFile = ok([&](auto done) {
        m_client->mkdir(MkdirRequest {base + "/h.txt/x", 0755, false}, done);
    });
    QCOMPARE(underFile.error().name(), QStringLiteral("not_a_directory"));
}

void TestAgentClient::watchFolder()
{
    const QString base = m_agent.path() + QStringLiteral("/watched");
    QVERIFY(QDir().mkpath(base + QStringLiteral("/sub")));
    AgentReadStream *watch = m_client->watch(WatchRequest {stdPath(base), true});
    bool opened = false;
    std::vector<WatchRecord> records;
    WatchRecordDecoder decoder;
    connect(watch, &AgentReadStream::opened, watch, [&] { opened = true; });
    connect(watch, &AgentReadStream::readyRead, watch, [&] {
        const QByteArray bytes = watch->read();
        QVERIFY(decoder.feed(ByteView(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                                      std::size_t(bytes.size())),
                             records));
    });
    QVERIFY(QTest::qWaitFor([&] { return opened; }, kWaitMs));
    const auto has = [&](WatchOp op, const std::string &name) {
        return std::any_of(records.begin(), records.end(), [&](const WatchRecord &record) {
            return record.op == op && record.name == name;
        });
    };
    QFile file(base + QStringLiteral("/a.txt"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("a");
    file.close();
    QVERIFY(QTest::qWaitFor([&] { return has(WatchOp::Write, "a.txt"); }, kWaitMs));
    QVERIFY(has(WatchOp::Create, "a.txt"));
    // In a subfolder, and in one made after the watch began (recursive).
    QVERIFY(QDir().mkpath(base + QStringLiteral("/sub/new")));
    QVERIFY(QTest::qWaitFor([&] { return has(WatchOp::Create, "sub/new"); }, kWaitMs));
    QFile deep(base + QStringLiteral("/sub/new/b.txt"));
    QVERIFY(deep.open(QIODevice::WriteOnly));
    deep.close();
    QVERIFY(QTest::qWaitFor([&] { return has(WatchOp::Create, "sub/new/b.txt"); }, kWaitMs));
    QVERIFY(QFile::rename(base + QStringLiteral("/a.txt"), base + QStringLiteral("/c.txt")));
    QVERIFY(QTest::qWaitFor([&] { return has(WatchOp::Rename, "a.txt"); }, kWaitMs));
    QVERIFY(QFile::remove(base + QStringLiteral("/c.txt")));
    QVERIFY(QTest::qWaitFor([&] { return has(WatchOp::Remove, "c.txt"); }, kWaitMs));

    // The watched folder going ends the stream with not_found.
    std::optional<AgentError> error;
    connect(watch, &AgentReadStream::failed, watch, [&](const AgentError &e) { error = e; });
    QVERIFY(QDir(base).removeRecursively());
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("not_found"));
    delete watch;

    // A file is not a folder to watch.
    QFile plain(m_agent.path() + QStringLiteral("/plain"));
    QVERIFY(plain.open(QIODevice::WriteOnly));
    plain.close();
    error.reset();
    AgentReadStream *wrong = m_client->watch(WatchRequest {stdPath(plain.fileName()), false});
    connect(wrong, &AgentReadStream::failed, wrong, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("not_a_directory"));
    delete wrong;
}

void TestAgentClient::archiveOutTypesWhatTheHostMustRefuse()
{
    // What a hostile guest plants in its workspace.
    const QString tree = m_agent.path() + QStringLiteral("/planted");
    QVERIFY(QDir().mkpath(tree + QStringLiteral("/src")));
    QFile file(tree + QStringLiteral("/src/main.c"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("int main() { return 0; }\n");
    file.close();
    QFile suid(tree + QStringLiteral("/suid"));
    QVERIFY(suid.open(QIODevice::WriteOnly));
    suid.close();
    QCOMPARE(::chmod(QFile::encodeName(tree + QStringLiteral("/suid")).constData(), 04755), 0);
    QCOMPARE(::symlink("/etc/shadow", QFile::encodeName(tree + QStringLiteral("/out")).constData()),
             0);
    QCOMPARE(::symlink("src/main.c", QFile::encodeName(tree + QStringLiteral("/in")).constData()),
             0);
    QCOMPARE(::mkfifo(QFile::encodeName(tree + QStringLiteral("/fifo")).constData(), 0600), 0);

    AgentReadStream *stream = m_client->archiveOut(ArchiveOutRequest {stdPath(tree)});
    const QString target = m_agent.path() + QStringLiteral("/pulled");
    QVERIFY(QDir().mkpath(target));
    const int targetFd = ::open(QFile::encodeName(target).constData(), O_RDONLY | O_DIRECTORY);
    ArchiveExtractor extractor(targetFd, ArchivePolicy {});
    ArchiveDecoder decoder(extractor);
    bool ended = false;
    bool decoded = true;
    std::optional<AgentError> error;
    connect(stream, &AgentReadStream::readyRead, stream, [&] {
        const QByteArray bytes = stream->read();
        decoded = decoded
            && decoder.feed(ByteView(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                                     std::size_t(bytes.size())));
    });
    connect(stream, &AgentReadStream::finished, stream, [&] { ended = true; });
    connect(stream, &AgentReadStream::failed, stream, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return ended || error; }, kWaitMs));
    QVERIFY(!error);
    QVERIFY(decoded);
    QVERIFY(decoder.finished());
    ::close(targetFd);
    delete stream;

    std::map<std::string, std::string> refused;
    for (const ArchiveRefusal &refusal : extractor.refusals())
        refused[refusal.path] = refusal.reason;
    const std::map<std::string, std::string> expected {
        {"out", "symlink_escapes"}, {"fifo", "fifo"}, {"suid", "setuid"}};
    QCOMPARE(refused, expected);
    QVERIFY(QFileInfo(target + QStringLiteral("/src/main.c")).isFile());
    QVERIFY(QFileInfo(target + QStringLiteral("/in")).isSymLink());
    QVERIFY(!QFileInfo(target + QStringLiteral("/out")).isSymLink());
    QVERIFY(!QFileInfo::exists(target + QStringLiteral("/fifo")));
    QVERIFY(!QFileInfo::exists(target + QStringLiteral("/suid")));
}

void TestAgentClient::archiveIn()
{
    const QString source = m_agent.path() + QStringLiteral("/project");
    QVERIFY(QDir().mkpath(source + QStringLiteral("/lib")));
    QFile file(source + QStringLiteral("/lib/code.py"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(randomBytes(300000));
    file.close();
    QCOMPARE(
        ::symlink("lib/code.py", QFile::encodeName(source + QStringLiteral("/link")).constData()),
        0);

    auto walker = ArchiveWalker::open(stdPath(source));
    QVERIFY(walker);
    const QString target = m_agent.path() + QStringLiteral("/workspace");
    AgentWriteStream *stream = m_client->archiveIn(ArchiveInRequest {stdPath(target), "nobody"});
    bool finished = false;
    bool walked = false;
    std::optional<AgentError> error;
    const auto feed = [&] {
        while (!walked && stream->room() > 0) {
            Bytes chunk;
            auto more = (*walker)->produce(chunk, std::size_t(stream->room()));
            QVERIFY(more);
            stream->write(QByteArrayView(reinterpret_cast<const char *>(chunk.data()),
                                         qsizetype(chunk.size())));
            if (!*more) {
                walked = true;
                stream->finish();
            }
        }
    };
    connect(stream, &AgentWriteStream::bytesWritten, stream, feed);
    connect(stream, &AgentWriteStream::finished, stream, [&] { finished = true; });
    connect(stream, &AgentWriteStream::failed, stream, [&](const AgentError &e) { error = e; });
    feed();
    QVERIFY(QTest::qWaitFor([&] { return finished || error; }, kWaitMs));
    QVERIFY2(!error, error ? qPrintable(error->message) : "");
    QVERIFY(stream->archiveResult());
    QCOMPARE(stream->archiveResult()->entries, quint64(3));
    QCOMPARE(stream->archiveResult()->refusedCount, quint32(0));
    delete stream;
    QFile copy(target + QStringLiteral("/lib/code.py"));
    QVERIFY(copy.open(QIODevice::ReadOnly));
    QVERIFY(copy.readAll() == randomBytes(300000));
    QCOMPARE(QFileInfo(target + QStringLiteral("/lib/code.py")).ownerId(), 65534u);
    QCOMPARE(QFileInfo(target + QStringLiteral("/link")).symLinkTarget(),
             target + QStringLiteral("/lib/code.py"));
}

void TestAgentClient::listAndReattachAfterReconnect()
{
    ExecRequest request = shell("echo one; read line; echo two $line");
    request.stdinOpen = true;
    AgentProcess *process = m_client->exec(request);
    QByteArray out;
    connect(process, &AgentProcess::readyReadStdout, process,
            [&] { out += process->readStdout(); });
    QVERIFY(QTest::qWaitFor([&] { return out == "one\n"; }, kWaitMs));
    const quint32 pid = process->pid();

    // The host goes away (airlockd restarts): the process runs on in the guest.
    m_client.reset();
    m_client = m_agent.connectReady();
    QVERIFY(m_client);
    const auto list = await<ProcessList>([&](auto done) { m_client->listProcesses(done); });
    QVERIFY(list);
    const auto it = std::find_if(list->processes.begin(), list->processes.end(),
                                 [pid](const ProcessInfo &p) { return p.pid == pid; });
    QVERIFY(it != list->processes.end());
    QVERIFY(it->running);
    QVERIFY(!it->attached);
    QCOMPARE(it->command, std::string("echo one; read line; echo two $line"));

    AgentProcess *again = m_client->attach(pid);
    QByteArray rest;
    std::optional<ExitStatus> exit;
    connect(again, &AgentProcess::started, again, [again] { again->writeStdin("back\n"); });
    connect(again, &AgentProcess::readyReadStdout, again, [&] { rest += again->readStdout(); });
    connect(again, &AgentProcess::finished, again, [&](const ExitStatus &s) { exit = s; });
    QVERIFY(QTest::qWaitFor([&] { return exit.has_value(); }, kWaitMs));
    QCOMPARE(rest, QByteArray("two back\n"));
    QCOMPARE(exit->value, 0);
    delete again;

    // Attached twice: busy; gone: not_found.
    const Run unknown = [&] {
        Run result;
        AgentProcess *p = m_client->attach(pid);
        connect(p, &AgentProcess::failed, p, [&](const AgentError &e) { result.error = e; });
        if (!QTest::qWaitFor([&] { return result.error.has_value(); }, kWaitMs))
            result.exit = ExitStatus {};
        delete p;
        return result;
    }();
    QVERIFY(unknown.error);
    QCOMPARE(unknown.error->name(), QStringLiteral("not_found"));
}

void TestAgentClient::identityRefresh()
{
    const QString root = m_agent.sysroot();
    QVERIFY(QDir().mkpath(root + QStringLiteral("/etc/ssl/certs")));
    QVERIFY(QDir().mkpath(root + QStringLiteral("/run/airlock")));
    QVERIFY(QDir().mkpath(root + QStringLiteral("/dev"))); // urandom is a plain file here
    QFile bundle(root + QStringLiteral("/etc/ssl/certs/ca-certificates.crt"));
    QVERIFY(bundle.open(QIODevice::WriteOnly));
    bundle.write("DISTRO CA\n# airlock sandbox CA {\nOLD CA\n# }\nOTHER CA\n");
    bundle.close();
    QFile stale(root + QStringLiteral("/run/airlock/stale"));
    QVERIFY(stale.open(QIODevice::WriteOnly));
    stale.close();

    IdentityRequest identity;
    identity.hostname = "fork1";
    identity.mac = "02:61:6c:00:00:01";
    identity.address = "100.96.0.6";
    identity.prefixLength = 30;
    identity.gateway = "100.96.0.5";
    identity.dns = "100.96.0.5";
    identity.entropy = Bytes(64, 0xee);
    const std::string ca = "-----BEGIN CERTIFICATE-----\nNEW\n-----END CERTIFICATE-----\n";
    const std::vector<IdentityFile> files {{"ca.pem", 0644, Bytes(ca.begin(), ca.end())},
                                           {"env", 0600, Bytes {'A', '=', '1', '\n'}}};
    const auto result =
        await<void>([&](auto done) { m_client->refreshIdentity(identity, files, done); });
    QVERIFY2(result, result ? "" : qPrintable(result.error().message));

    const auto read = [&](const QString &path) {
        QFile f(root + path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(missing)");
    };
    QCOMPARE(read(QStringLiteral("/etc/hostname")), QByteArray("fork1\n"));
    QCOMPARE(read(QStringLiteral("/etc/resolv.conf")), QByteArray("nameserver 100.96.0.5\n"));
    QCOMPARE(read(QStringLiteral("/run/airlock/ca.pem")), QByteArray::fromStdString(ca));
    QCOMPARE(read(QStringLiteral("/run/airlock/env")), QByteArray("A=1\n"));
    QVERIFY(!QFile::exists(root + QStringLiteral("/run/airlock/stale")));
    QCOMPARE(modeOf(root + QStringLiteral("/run/airlock/env")), 0600u);
    QCOMPARE(read(QStringLiteral("/etc/ssl/certs/ca-certificates.crt")),
             "DISTRO CA\nOTHER CA\n# airlock sandbox CA {\n" + QByteArray::fromStdString(ca)
                 + "# }\n");
    QCOMPARE(read(QStringLiteral("/dev/urandom")), QByteArray(64, char(0xee)));
    QFile log(m_agent.ipLog());
    QVERIFY(log.open(QIODevice::ReadOnly));
    QCOMPARE(log.readAll(),
             QByteArray("addr flush dev eth0\n"
                        "neigh flush dev eth0\n"
                        "link set eth0 address 02:61:6c:00:00:01\n"
                        "link set eth0 up\n"
                        "addr add 100.96.0.6/30 dev eth0\n"
                        "route replace default via 100.96.0.5\n"));
    // The exec environment carries the seed's env file, as the console shell does.
    const Run env = run(*m_client, shell("echo $A"));
    QCOMPARE(env.out, QByteArray("1\n"));
}

void TestAgentClient::identityRefreshNamesTheFailedStep()
{
    QFile fail(m_agent.ipFail());
    QVERIFY(fail.open(QIODevice::WriteOnly));
    fail.close();
    IdentityRequest identity;
    identity.hostname = "fork2";
    identity.address = "100.96.0.10";
    identity.prefixLength = 30;
    identity.gateway = "100.96.0.9";
    const auto result =
        await<void>([&](auto done) { m_client->refreshIdentity(identity, {}, done); });
    QVERIFY(!result);
    QCOMPARE(result.error().kind, AgentError::Kind::IdentityFailed);
    QCOMPARE(result.error().detail, QStringLiteral("network"));
    // The steps before it ran anyway.
    QFile hostname(m_agent.sysroot() + QStringLiteral("/etc/hostname"));
    QVERIFY(hostname.open(QIODevice::ReadOnly));
    QCOMPARE(hostname.readAll(), QByteArray("fork2\n"));
    QFile::remove(m_agent.ipFail());
}

void TestAgentClient::resyncAfterAStaleHalfFrame()
{
    // A restored guest whose agent was inside a frame of the previous host: here the agent
    // gets the first 1000 bytes of a 60000-byte frame on a new connection. Without the
    // preamble our Hellos would be eaten as that frame's payload (checked by hand: the
    // handshake times out); with it, the guest completes the frame, fails on the zeros and
    // finds our Hello.
    m_client.reset();
    const Bytes half = encodeFrame(MessageType::Data, 5, 5, Bytes(60000, 'x'));
    AgentClient::Limits limits;
    limits.resyncPreambleBytes = AgentClient::kResyncPreambleBytes;
    m_client =
        m_agent.connectReady(limits, QByteArray(reinterpret_cast<const char *>(half.data()), 1000));
    QVERIFY(m_client);
    QCOMPARE(run(*m_client, command({"echo", "resynced"})).out, QByteArray("resynced\n"));
}

QTEST_GUILESS_MAIN(TestAgentClient)
#include "tst_agentclient.moc"
