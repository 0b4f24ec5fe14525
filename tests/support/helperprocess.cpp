#include "helperprocess.h"

#include "rpctestclient.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QLocalSocket>
#include <QSet>
#include <QTest>

#include <csignal>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::test {

namespace {

QString airlockdPath()
{
    const QString fromEnv = qEnvironmentVariable("AIRLOCK_AIRLOCKD");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockd/airlockd");
}

/// Runs `ip ARGS`; true on exit status 0.
bool runIp(const QStringList &arguments)
{
    QProcess ip;
    ip.setProcessChannelMode(QProcess::ForwardedChannels);
    ip.start(QStringLiteral("ip"), arguments);
    return ip.waitForFinished(10000) && ip.exitStatus() == QProcess::NormalExit
        && ip.exitCode() == 0;
}

int g_namespaceCounter = 0;

QByteArray commandLine(const QString &pid)
{
    QFile file(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

} // namespace

HelperProcess::HelperProcess(QStringList extraArguments)
    : m_tempDir(QDir::tempPath() + QStringLiteral("/airlock-test-XXXXXX"))
    , m_extraArguments(std::move(extraArguments))
{
    ::chmod(QFile::encodeName(m_tempDir.path()).constData(), 0711);
    m_process.setProcessChannelMode(QProcess::ForwardedChannels);
    // If the test process dies, so does its helper (guests are killed by the destructor; a
    // crashing test leaves them, which is why the test runner uses fresh state dirs).
    m_process.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
}

HelperProcess::~HelperProcess()
{
    if (isRunning())
        stop(5000);
    killLeftoverProcesses();
    if (!m_namespace.isEmpty() && m_ownsNamespace)
        runIp({QStringLiteral("netns"), QStringLiteral("delete"), m_namespace});
    // Guest RAM files live on tmpfs outside the state dir (SandboxService::memoryDir): the
    // killed guests' files would outlive the test.
    const QByteArray hash = QCryptographicHash::hash(
        QFile::encodeName(QDir(stateDir()).absolutePath()), QCryptographicHash::Sha256);
    QDir(QStringLiteral("/dev/shm/airlock-") + QString::fromLatin1(hash.toHex().left(12)))
        .removeRecursively();
}

bool HelperProcess::start(int timeoutMs)
{
    if (!m_tempDir.isValid()) {
        m_lastError = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    if (isRunning()) {
        m_lastError = QStringLiteral("airlockd is already running");
        return false;
    }
    const QString program = airlockdPath();
    if (!QFileInfo(program).isExecutable()) {
        m_lastError =
            QStringLiteral("airlockd not found at %1 (set AIRLOCK_AIRLOCKD)").arg(program);
        return false;
    }
    QStringList arguments {QStringLiteral("--socket"),      socketPath(),
                           QStringLiteral("--state-dir"),   stateDir(),
                           QStringLiteral("--image-store"), imageStore(),
                           QStringLiteral("--log-level"),   QStringLiteral("debug")};
    const QString gateway = qEnvironmentVariable("AIRLOCK_GATEWAY");
    if (!gateway.isEmpty() && !m_extraArguments.contains(QStringLiteral("--gateway")))
        arguments << QStringLiteral("--gateway") << gateway;
    // No background template preparation (an extra TCG boot per test) unless a test asks.
    if (!m_extraArguments.contains(QStringLiteral("--templates")))
        arguments << QStringLiteral("--templates") << QStringLiteral("off");
    arguments += m_extraArguments;
    {
        if (m_namespace.isEmpty()) {
            const QString name = QStringLiteral("alt-h-%1-%2")
                                     .arg(QCoreApplication::applicationPid())
                                     .arg(++g_namespaceCounter);
            runIp({QStringLiteral("netns"), QStringLiteral("delete"), name});
            if (!runIp({QStringLiteral("netns"), QStringLiteral("add"), name})) {
                m_lastError = QStringLiteral("cannot create network namespace %1").arg(name);
                return false;
            }
            m_namespace = name;
            runIp({QStringLiteral("-n"), name, QStringLiteral("link"), QStringLiteral("set"),
                   QStringLiteral("lo"), QStringLiteral("up")});
        }
        // `ip netns exec` execs airlockd in place (no fork), so pid() stays airlockd's.
        arguments.prepend(program);
        arguments =
            QStringList {QStringLiteral("netns"), QStringLiteral("exec"), m_namespace} + arguments;
        m_process.start(QStringLiteral("ip"), arguments);
    }
    if (!m_process.waitForStarted(5000)) {
        m_lastError = QStringLiteral("cannot start %1: %2").arg(program, m_process.errorString());
        return false;
    }
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (m_process.state() != QProcess::Running) {
            m_lastError = QStringLiteral("airlockd exited with status %1 before listening")
                              .arg(m_process.exitCode());
            return false;
        }
        QLocalSocket probe;
        probe.connectToServer(socketPath());
        if (probe.waitForConnected(200)) {
            probe.abort();
            return !m_waitForAdoption
                || waitForAdoption(int(qMax<qint64>(1, timeoutMs - timer.elapsed())));
        }
        m_process.waitForFinished(50);
    }
    m_lastError = QStringLiteral("airlockd did not listen on %1 within %2 ms")
                      .arg(socketPath())
                      .arg(timeoutMs);
    return false;
}

bool HelperProcess::waitForAdoption(int timeoutMs)
{
    // Subscribed first: a sandbox listed as adopting announces its next state.
    RpcTestClient client(socketPath());
    // A helper that refuses this client (a test of its access policy) has nothing to wait for
    // here; the test's own calls find out.
    if (!client.hello()
        || !client.call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")))
        return true;
    QSet<QString> adopting;
    const QJsonArray sandboxes = RpcTestClient::result(client.call(QStringLiteral("sandbox.list")))
                                     .value(QStringLiteral("sandboxes"))
                                     .toArray();
    for (const QJsonValue &sandbox : sandboxes) {
        if (sandbox[QStringLiteral("state")].toString() == u"adopting")
            adopting.insert(sandbox[QStringLiteral("name")].toString());
    }
    QElapsedTimer timer;
    timer.start();
    while (!adopting.isEmpty()) {
        const auto changed = client.waitForNotification(
            QStringLiteral("sandbox.changed"),
            [&adopting](const QJsonObject &params) {
                const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
                return adopting.contains(sandbox.value(QStringLiteral("name")).toString())
                    && sandbox.value(QStringLiteral("state")).toString() != u"adopting";
            },
            int(qMax<qint64>(1, timeoutMs - timer.elapsed())));
        if (!changed) {
            m_lastError = QStringLiteral("sandboxes still adopting after %1 ms: %2")
                              .arg(timeoutMs)
                              .arg(QStringList(adopting.cbegin(), adopting.cend()).join(u' '));
            return false;
        }
        adopting.remove(changed->value(QStringLiteral("params"))
                            .toObject()
                            .value(QStringLiteral("sandbox"))
                            .toObject()
                            .value(QStringLiteral("name"))
                            .toString());
    }
    return true;
}

bool HelperProcess::stop(int timeoutMs)
{
    if (!isRunning())
        return false;
    m_process.terminate();
    if (!m_process.waitForFinished(timeoutMs)) {
        m_lastError = QStringLiteral("airlockd ignored SIGTERM for %1 ms; killed").arg(timeoutMs);
        m_process.kill();
        m_process.waitForFinished(5000);
        return false;
    }
    return m_process.exitStatus() == QProcess::NormalExit && m_process.exitCode() == 0;
}

void HelperProcess::kill9()
{
    if (!isRunning())
        return;
    m_process.kill();
    m_process.waitForFinished(5000);
}

bool HelperProcess::restart(int timeoutMs)
{
    if (isRunning() && !stop())
        return false;
    return start(timeoutMs);
}

int HelperProcess::killLeftoverProcesses()
{
    // Every VMM of this helper names its runtime dir (under our unique state dir) on its
    // command line; pid files alone would miss a VMM that died before writing one.
    const QByteArray marker = QFile::encodeName(stateDir());
    const qint64 helperPid = pid();
    int killed = 0;
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : pids) {
        bool isPid = false;
        const qint64 pid = entry.toLongLong(&isPid);
        if (!isPid || pid == helperPid || pid == ::getpid())
            continue;
        if (!commandLine(entry).contains(marker))
            continue;
        if (::kill(pid_t(pid), SIGKILL) == 0)
            ++killed;
    }
    // Until they are gone (reaped), so callers can assert that nothing is left.
    if (killed > 0) {
        const bool reaped = QTest::qWaitFor(
            [&] {
                for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
                    bool isPid = false;
                    entry.toLongLong(&isPid);
                    if (isPid && commandLine(entry).contains(marker))
                        return false;
                }
                return true;
            },
            1000);
        if (!reaped)
            qWarning("helperprocess: processes of %s still there after SIGKILL",
                     marker.constData());
    }
    return killed;
}

bool HelperProcess::isRunning() const
{
    return m_process.state() != QProcess::NotRunning;
}

qint64 HelperProcess::pid() const
{
    return isRunning() ? m_process.processId() : 0;
}

QString HelperProcess::socketPath() const
{
    return m_tempDir.filePath(QStringLiteral("airlockd.sock"));
}

QString HelperProcess::stateDir() const
{
    return m_tempDir.filePath(QStringLiteral("state"));
}

QString HelperProcess::imageStore() const
{
    if (!m_imageStore.isEmpty())
        return m_imageStore;
    const QString fromEnv = qEnvironmentVariable("AIRLOCK_TEST_IMAGE_STORE");
    return fromEnv.isEmpty() ? QStringLiteral(AIRLOCK_TEST_IMAGE_STORE) : fromEnv;
}

QString HelperProcess::tempPath() const
{
    return m_tempDir.path();
}

QString HelperProcess::useUnbootableImageStore()
{
    const QString store = tempPath() + QStringLiteral("/images");
    const QString imageDir = store + QStringLiteral("/default");
    if (!QDir().mkpath(imageDir)) {
        m_lastError = QStringLiteral("cannot create %1").arg(imageDir);
        return {};
    }
    const QList<std::pair<QString, QByteArray>> files {
        {QStringLiteral("vmlinux"), QByteArrayLiteral("not a kernel")},
        {QStringLiteral("initrd.img"), QByteArrayLiteral("not an initrd")},
        {QStringLiteral("image.json"),
         QByteArrayLiteral(R"({"description":"test image","kernel":"vmlinux",)"
                           R"("initrd":"initrd.img","kernelArgs":"",)"
                           R"("vmms":["qemu","firecracker"],)"
                           R"("createdAt":"2024-01-01T00:00:00.000Z"})")},
    };
    for (const auto &[name, content] : files) {
        QFile file(imageDir + u'/' + name);
        if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size()) {
            m_lastError = QStringLiteral("cannot write %1").arg(file.fileName());
            return {};
        }
    }
    setImageStore(store);
    return store;
}

} // namespace airlock::test
