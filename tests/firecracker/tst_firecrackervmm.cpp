// FirecrackerVmm (airlockd's side) and the real airlock-fcctl against the conformance server
// (fake-firecracker.py): every request airlock-fcctl sends is checked against Firecracker's API
// description, and any the description does not allow fails the test (the server's violations file
// must stay empty). Also the planted-wrong-field proof: the server catches requests that break the
// description.

#include "core/fcctl/firecrackerapiclient.h"
#include "core/fcctl/firecrackerapitypes.h"
#include "core/vmm/firecrackervmm.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/vmmcgroup.h"
#include "core/vmm/vmmprocess.h"
#include "core/vmm/vsockconnector.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <QDeadlineTimer>

#include <csignal>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace airlock;

namespace {

const QString kFake = QStringLiteral(AIRLOCK_SOURCE_DIR "/tests/firecracker/fake-firecracker.py");
// The real airlock-fcctl of this build: it, not the test, speaks HTTP to the server.
const QString kFcctl = QStringLiteral(AIRLOCK_FCCTL);
// The real airlock-console of this build: it holds Firecracker's stdio and serves console.sock.
const QString kConsole = QStringLiteral(AIRLOCK_CONSOLE);

/// The first `bytes` bytes of a file (a guest memory file is as large as the guest's memory).
QByteArray readHead(const QString &path, qint64 bytes)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.read(bytes) : QByteArray();
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// A non-blocking client of the Unix socket at `path`, -1 when it cannot connect.
int connectRaw(const QString &path)
{
    sockaddr_un address {};
    address.sun_family = AF_UNIX;
    const QByteArray name = QFile::encodeName(path);
    std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0
        || ::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        if (fd >= 0)
            ::close(fd);
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/// Reads `fd` until what came contains `needle` or `timeoutMs` pass; what came.
QByteArray readUntil(int fd, const QByteArray &needle, int timeoutMs)
{
    QByteArray seen;
    const QDeadlineTimer deadline(timeoutMs);
    while (!seen.contains(needle) && !deadline.hasExpired()) {
        pollfd readable {fd, POLLIN, 0};
        if (::poll(&readable, 1, int(deadline.remainingTime())) <= 0)
            continue;
        char buffer[65536];
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got <= 0)
            break;
        seen.append(buffer, qsizetype(got));
    }
    return seen;
}

/// Whether `fd` reaches end of file within `timeoutMs` (what comes before is discarded).
bool endsWithin(int fd, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        pollfd readable {fd, POLLIN, 0};
        if (::poll(&readable, 1, int(deadline.remainingTime())) <= 0)
            continue;
        char buffer[65536];
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return true;
    }
    return false;
}

/// A field of /proc/PID/status ("VmRSS" gives kB), -1 when the process is gone.
qint64 statusField(pid_t pid, const QByteArray &field)
{
    for (const QByteArray &line : readAll(QStringLiteral("/proc/%1/status").arg(pid)).split('\n'))
        if (line.startsWith(field + ':'))
            return line.mid(field.size() + 1).simplified().split(' ').value(0).toLongLong();
    return -1;
}

/// Whether `pid` is gone (or a zombie nobody reaped yet).
bool isGone(pid_t pid)
{
    const auto state = VmmProcess::readState(pid);
    return !state || *state == 'Z';
}

} // namespace

class TestFirecrackerVmm : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_violations;

    /// A "firecracker" binary: a script that starts the conformance server with `knobs`.
    QString fakeBinary(const QStringList &knobs = {})
    {
        static int count = 0;
        const QString path = m_dir.filePath(QStringLiteral("firecracker-%1").arg(++count));
        QFile script(path);
        if (!script.open(QIODevice::WriteOnly))
            return {};
        script.write("#!/bin/sh\nexec python3 '" + kFake.toUtf8() + "' --violations '"
                     + m_violations.toUtf8() + "' " + knobs.join(u' ').toUtf8() + " \"$@\"\n");
        script.close();
        script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner
                              | QFileDevice::ExeOwner);
        return path;
    }

    /// The fake is a wrapper script here and a Python server in the source tree, and it writes
    /// its findings here: a jailed Firecracker (the test runs as root) must see both.
    void shareWithTheJail(FirecrackerVmm &vmm)
    {
        vmm.setJailSharedPaths({QFileInfo(kFake).path(), m_dir.path()});
    }

    VmmLaunchConfig launchConfig(const QString &name)
    {
        VmmLaunchConfig config;
        config.sandboxName = name;
        config.vcpus = 2;
        config.memoryMib = 256;
        config.kernelPath = m_dir.filePath(QStringLiteral("vmlinux"));
        config.initrdPath = m_dir.filePath(QStringLiteral("initrd.img"));
        config.rootDiskPath = m_dir.filePath(QStringLiteral("root.raw"));
        config.seedImagePath = m_dir.filePath(QStringLiteral("seed.img"));
        config.memoryPath = m_dir.filePath(QStringLiteral("memory-%1").arg(name));
        config.acceleration = Acceleration::Kvm;
        config.network.tapName = QStringLiteral("al-test0");
        config.network.mac = QStringLiteral("02:61:6c:00:00:02");
        config.network.guestAddress = QStringLiteral("100.96.0.2");
        config.network.gateway = QStringLiteral("100.96.0.1");
        const QString run = m_dir.filePath(QStringLiteral("run-") + name);
        QDir().mkpath(run);
        config.runtimeDir = run;
        QFile memory(config.memoryPath);
        memory.open(QIODevice::WriteOnly);
        return config;
    }

    Result<VmmRuntimeInfo> startAndWait(FirecrackerVmm &vmm, const VmmLaunchConfig &config)
    {
        std::optional<Result<VmmRuntimeInfo>> started;
        vmm.start(config, [&](const Result<VmmRuntimeInfo> &result) { started = result; });
        if (!QTest::qWaitFor([&] { return started.has_value(); }, 20000))
            return fail(ErrorKind::Timeout, QStringLiteral("the start did not end"));
        return *started;
    }

    template<typename T>
    static std::optional<Result<T>>
    await(const std::function<void(std::function<void(const Result<T> &)>)> &call)
    {
        std::optional<Result<T>> outcome;
        call([&](const Result<T> &result) { outcome = result; });
        // An outcome that never came is nullopt, which the caller's QVERIFY reports.
        (void)QTest::qWaitFor([&] { return outcome.has_value(); }, 15000);
        return outcome;
    }

    static std::optional<Result<void>> awaitVoid(const std::function<void(Vmm::Done)> &call)
    {
        std::optional<Result<void>> outcome;
        call([&](const Result<void> &result) { outcome = result; });
        // An outcome that never came is nullopt, which the caller's QVERIFY reports.
        (void)QTest::qWaitFor([&] { return outcome.has_value(); }, 15000);
        return outcome;
    }

    /// The cgroup directories of `sandbox`'s VMMs ("airlock/SANDBOX.PID") in every hierarchy.
    static QStringList cgroupsOf(const QString &sandbox)
    {
        QStringList found;
        const auto hierarchy = VmmCgroup::findHierarchy();
        if (!hierarchy)
            return found;
        for (const QString &parent : hierarchy->parents()) {
            for (const QString &name :
                 QDir(parent).entryList({sandbox + QStringLiteral(".*")}, QDir::Dirs))
                found.append(QDir(parent).filePath(name));
        }
        return found;
    }

    /// The requests the conformance server refused; empty when all conformed.
    QByteArray violations() const { return readAll(m_violations); }

    /// The bodies of the requests to `path` in a --requests file, in order.
    static QList<QJsonObject> bodiesOf(const QString &requests, QLatin1StringView path)
    {
        QList<QJsonObject> bodies;
        for (const QByteArray &line : readAll(requests).trimmed().split('\n')) {
            const QJsonObject request = QJsonDocument::fromJson(line).object();
            if (request.value(QStringLiteral("path")).toString() == path)
                bodies.append(QJsonDocument::fromJson(
                                  request.value(QStringLiteral("body")).toString().toUtf8())
                                  .object());
        }
        return bodies;
    }

    /// The snapshot types PUT /snapshot/create asked for, in order.
    static QStringList snapshotTypes(const QString &requests)
    {
        QStringList types;
        for (const QJsonObject &body : bodiesOf(requests, QLatin1StringView("/snapshot/create")))
            types.append(body.value(QStringLiteral("snapshot_type")).toString());
        return types;
    }

    /// Pauses `vmm` (when it runs) and saves its device state into `state`; the error text.
    QString snapshot(FirecrackerVmm &vmm, int state)
    {
        const auto running = await<bool>([&](auto done) { vmm.queryRunning(done); });
        if (!running || !*running)
            return QStringLiteral("state query failed");
        if (**running) {
            const auto paused = awaitVoid([&](Vmm::Done done) { vmm.pause(done); });
            if (!paused || !*paused)
                return QStringLiteral("pause failed");
        }
        // copyFile writes at the descriptor's offset: the state of this snapshot only.
        if (::ftruncate(state, 0) != 0 || ::lseek(state, 0, SEEK_SET) != 0)
            return QStringLiteral("cannot empty the state file");
        const auto saved = awaitVoid([&](Vmm::Done done) { vmm.saveDeviceState(state, done); });
        if (!saved)
            return QStringLiteral("no answer");
        return *saved ? QString() : saved->error().message;
    }

    /// Lets the paused guest run (the fake then writes pages) and pauses it again.
    bool runAgain(FirecrackerVmm &vmm)
    {
        const auto resumed = awaitVoid([&](Vmm::Done done) { vmm.resume(done); });
        const auto paused = awaitVoid([&](Vmm::Done done) { vmm.pause(done); });
        return resumed && *resumed && paused && *paused;
    }

    /// The fake's whole memory as of its last snapshot (fake-memory.expected in RUNDIR).
    static QByteArray fakeMemory(const VmmLaunchConfig &config)
    {
        return readAll(QDir(config.runtimeDir).filePath(QStringLiteral("fake-memory.expected")));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (QProcess::execute(QStringLiteral("python3"),
                              {QStringLiteral("-c"), QStringLiteral("import yaml")})
            != 0)
            QFAIL("python3 with PyYAML (Debian python3-yaml) is needed by the conformance server");
        for (const char *file : {"vmlinux", "initrd.img", "root.raw", "seed.img"}) {
            QFile out(m_dir.filePath(QString::fromLatin1(file)));
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QByteArray(file) + QByteArray(4096, '\0'));
        }
        QFile qcow(m_dir.filePath(QStringLiteral("root.qcow2")));
        QVERIFY(qcow.open(QIODevice::WriteOnly));
        qcow.write(QByteArray("QFI\xfb\0\0\0\3", 8));
    }

    void init()
    {
        static int count = 0;
        m_violations = m_dir.filePath(QStringLiteral("violations-%1.jsonl").arg(++count));
    }

    void cleanup()
    {
        // Every request of every test but the planted ones conformed to the description.
        if (QTest::currentTestFunction() != QByteArrayView("plantedWrongFieldsAreCaught"))
            QCOMPARE(violations(), QByteArray());
    }

    void bootsPausesSnapshotsAndStops()
    {
        FirecrackerVmm vmm(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(vmm);
        QByteArray console;
        connect(&vmm, &Vmm::consoleOutput, this,
                [&](const QByteArray &bytes) { console += bytes; });
        QSignalSpy exited(&vmm, &Vmm::exited);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-boot"));
        const auto started = startAndWait(vmm, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        QVERIFY(started->pid > 0);
        // What CrashRecovery finds a VMM by when its start was never recorded.
        QCOMPARE(readAll(QDir(config.runtimeDir).filePath(FirecrackerVmm::kPidFile)),
                 QByteArray::number(started->pid) + ' '
                     + QByteArray::number(started->startTimeTicks) + '\n');
        QCOMPARE(vmm.firecrackerVersion(), QStringLiteral("1.17.0-dev"));
        QVERIFY(vmm.isRunning());
        // The API was spoken by airlock-fcctl, which can never gain privileges (its uid is the
        // VMM's; here the test's own).
        QVERIFY(vmm.controllerPid() > 0);
        const QByteArray status =
            readAll(QStringLiteral("/proc/%1/status").arg(vmm.controllerPid()));
        QVERIFY2(status.contains("NoNewPrivs:\t1"), status.constData());

        // Console: Firecracker's stdout, in; its stdin, out.
        QTRY_VERIFY(console.contains("airlock-guest: console ready"));
        vmm.writeConsole("echo-me\n");
        QTRY_VERIFY(console.contains("echo-me\n"));

        // The agent's vsock port starts listening after the boot; the connector retries.
        QTRY_VERIFY_WITH_TIMEOUT(vmm.agent() != nullptr, 10000);

        auto paused = awaitVoid([&](Vmm::Done done) { vmm.pause(done); });
        QVERIFY(paused && *paused);
        auto running = await<bool>([&](auto done) { vmm.queryRunning(done); });
        QVERIFY(running && *running);
        QCOMPARE(**running, false);

        const int state = ::memfd_create("state", MFD_CLOEXEC);
        QVERIFY(state >= 0);
        auto saved = awaitVoid([&](Vmm::Done done) { vmm.saveDeviceState(state, done); });
        QVERIFY2(saved && *saved,
                 qPrintable(saved && !*saved ? saved->error().message : QString()));
        QFile stateFile;
        QVERIFY(stateFile.open(state, QIODevice::ReadOnly, QFileDevice::DontCloseHandle));
        stateFile.seek(0);
        QVERIFY(stateFile.readAll().startsWith("FAKE-VMSTATE"));
        QVERIFY(readHead(config.memoryPath, 11) == "FAKE-MEMORY");
        QCOMPARE(QFileInfo(config.memoryPath).size(), qint64(config.memoryMib) * 1024 * 1024);
        QVERIFY(!QFile::exists(config.memoryPath + QStringLiteral(".next")));

        auto resumed = awaitVoid([&](Vmm::Done done) { vmm.resume(done); });
        QVERIFY(resumed && *resumed);
        running = await<bool>([&](auto done) { vmm.queryRunning(done); });
        QVERIFY(running && *running && **running);

        // A snapshot of a running guest is refused by Airlock before Firecracker sees it.
        saved = awaitVoid([&](Vmm::Done done) { vmm.saveDeviceState(state, done); });
        QVERIFY(saved && !*saved);
        QCOMPARE(saved->error().kind, ErrorKind::InvalidState);

        // Restore into a second VMM from the saved state and memory.
        FirecrackerVmm restored(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(restored);
        VmmLaunchConfig restoreConfig = launchConfig(QStringLiteral("fc-restored"));
        QFile::remove(restoreConfig.memoryPath);
        QVERIFY(QFile::copy(config.memoryPath, restoreConfig.memoryPath));
        restoreConfig.incomingStateFd = state;
        const auto restoredStart = startAndWait(restored, restoreConfig);
        QVERIFY2(restoredStart,
                 qPrintable(restoredStart ? QString() : restoredStart.error().message));
        // A restored guest's agent listened when it was saved: the start waited for it.
        QVERIFY(restored.agent() != nullptr);
        running = await<bool>([&](auto done) { restored.queryRunning(done); });
        QVERIFY(running && *running && **running);
        QSignalSpy restoredExited(&restored, &Vmm::exited);
        restored.kill();
        QVERIFY(restoredExited.wait(10000));
        QCOMPARE(restoredExited.first().first().toString(), QString());
        ::close(state);

        // stop(): Ctrl+Alt+Del, which ends Firecracker as a guest reboot does.
        vmm.stop(10000);
        QVERIFY(exited.wait(10000));
        QCOMPARE(exited.first().first().toString(), QString());
        QVERIFY(!vmm.isRunning());
    }

    void aForkInTheJailOpensItsOwnDisks()
    {
        // Firecracker's snapshot names the drives by the paths it opened them by, and a load
        // opens them again (no override exists). In the jail those paths are the same for
        // every sandbox, so a fork's Firecracker reaches the fork's disks, not the original's.
        if (!FirecrackerJail::available())
            QSKIP("the jail needs CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        const auto disk = [this](const QString &name, const QByteArray &marker) {
            const QString path = m_dir.filePath(name);
            QFile file(path);
            if (!file.open(QIODevice::WriteOnly) || file.write(marker + QByteArray(4096, '\0')) < 0)
                return QString();
            return path;
        };
        FirecrackerVmm original(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(original);
        VmmLaunchConfig config = launchConfig(QStringLiteral("fc-original"));
        config.rootDiskPath = disk(QStringLiteral("root-original.raw"), "ROOT-OF-THE-ORIGINAL");
        config.seedImagePath = disk(QStringLiteral("seed-original.img"), "SEED-OF-THE-ORIGINAL");
        QVERIFY(!config.rootDiskPath.isEmpty() && !config.seedImagePath.isEmpty());
        const auto started = startAndWait(original, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        QVERIFY(original.isJailed());
        const auto paused = awaitVoid([&](Vmm::Done done) { original.pause(done); });
        QVERIFY(paused && *paused);
        const int state = ::memfd_create("state", MFD_CLOEXEC);
        QVERIFY(state >= 0);
        const auto closeState = qScopeGuard([state] { ::close(state); });
        const auto saved =
            awaitVoid([&](Vmm::Done done) { original.saveDeviceState(state, done); });
        QVERIFY(saved && *saved);

        FirecrackerVmm fork(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(fork);
        VmmLaunchConfig forkConfig = launchConfig(QStringLiteral("fc-fork"));
        forkConfig.rootDiskPath = disk(QStringLiteral("root-fork.raw"), "ROOT-OF-THE-FORK");
        forkConfig.seedImagePath = disk(QStringLiteral("seed-fork.img"), "SEED-OF-THE-FORK");
        QFile::remove(forkConfig.memoryPath);
        QVERIFY(QFile::copy(config.memoryPath, forkConfig.memoryPath));
        forkConfig.incomingStateFd = state;
        const auto loaded = startAndWait(fork, forkConfig);
        const auto killBoth = qScopeGuard([&] {
            fork.kill();
            original.kill();
            fork.waitForExit(5000);
            original.waitForExit(5000);
        });
        QVERIFY2(loaded, qPrintable(loaded ? QString() : loaded.error().message));
        const QJsonObject opened =
            QJsonDocument::fromJson(
                readAll(QDir(forkConfig.runtimeDir).filePath(QStringLiteral("fake-drives.log"))))
                .object();
        QCOMPARE(opened[QStringLiteral("rootfs")][QStringLiteral("head")].toString(),
                 QStringLiteral("ROOT-OF-THE-FORK"));
        QCOMPARE(opened[QStringLiteral("seed")][QStringLiteral("head")].toString(),
                 QStringLiteral("SEED-OF-THE-FORK"));
    }

    void cannotReachTheHostsAbstractSockets()
    {
        // The jailed Firecracker shares the host's network namespace; abstract Unix sockets
        // belong to it and a chroot does not hide them: its connect(2) is refused.
        if (!FirecrackerJail::available())
            QSKIP("the jail needs CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        const QByteArray name = "airlock-test-abstract-" + QByteArray::number(::getpid());
        const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        QVERIFY(listener >= 0);
        const auto closeListener = qScopeGuard([listener] { ::close(listener); });
        sockaddr_un address {};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path + 1, name.constData(), size_t(name.size()));
        const auto length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
        QCOMPARE(::bind(listener, reinterpret_cast<sockaddr *>(&address), length), 0);
        QCOMPARE(::listen(listener, 4), 0);
        // A control: the socket is there for anyone outside a scope.
        const int control = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        QCOMPARE(::connect(control, reinterpret_cast<sockaddr *>(&address), length), 0);
        ::close(control);

        FirecrackerVmm vmm(
            fakeBinary({QStringLiteral("--probe-abstract ") + QString::fromLatin1(name)}), kFcctl,
            kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-abstract"));
        const auto started = startAndWait(vmm, config);
        const auto killVmm = qScopeGuard([&vmm] {
            vmm.kill();
            vmm.waitForExit(5000);
        });
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        // NoConnectFilter answers first, on every kernel (Landlock's scope, where the kernel
        // has it, would say EPERM: tst_vmmconfinement checks each layer alone).
        QCOMPARE(
            readAll(QDir(config.runtimeDir).filePath(QStringLiteral("abstract-probe"))).trimmed(),
            QByteArray("refused EACCES"));
    }

    void runsInAJailOfItsOwn()
    {
        // Issue 19: a chroot in a mount namespace holding only this sandbox's files, and every
        // path Firecracker is given is a path inside it.
        if (!FirecrackerJail::available())
            QSKIP("the jail needs CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        // airlockd's own umask: nothing it makes is for others unless it says so.
        const mode_t umask = ::umask(0077);
        const auto restoreUmask = qScopeGuard([umask] { ::umask(umask); });
        const QString requests = m_dir.filePath(QStringLiteral("requests-jail"));
        FirecrackerVmm vmm(fakeBinary({QStringLiteral("--requests '%1'").arg(requests)}), kFcctl,
                           kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-jail"));
        // A planted link where a mount point goes is removed, never followed.
        const QString decoy = m_dir.filePath(QStringLiteral("decoy"));
        QVERIFY(QFile(decoy).open(QIODevice::WriteOnly));
        QVERIFY(QFile::link(decoy, QDir(config.runtimeDir).filePath(QStringLiteral("kernel"))));
        // A directory of the VMM user's where /dev goes, with a link where /dev/net goes: the
        // helper walks its mount points by descriptor and believes only its own directories,
        // so the link's target, a root directory of mode 0700, is not made 0755
        // (docs/reviews/2026-12-08-firecracker-jail.md#f2: chmod by path followed such a link).
        const QString victim = m_dir.filePath(QStringLiteral("victim"));
        QVERIFY(QDir().mkpath(victim));
        QCOMPARE(::chmod(QFile::encodeName(victim).constData(), 0700), 0);
        const QString plantedDev = QDir(config.runtimeDir).filePath(QStringLiteral("dev"));
        QVERIFY(QDir().mkpath(plantedDev));
        QCOMPARE(::chown(QFile::encodeName(plantedDev).constData(), 64991, 64991), 0);
        QVERIFY(QFile::link(victim, plantedDev + QStringLiteral("/net")));
        const auto started = startAndWait(vmm, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        QVERIFY(vmm.isJailed());
        const QString proc = QStringLiteral("/proc/%1").arg(started->pid);
        QCOMPARE(QFileInfo(proc + QStringLiteral("/root")).symLinkTarget(),
                 QDir(config.runtimeDir).canonicalPath());
        QVERIFY(QFileInfo(proc + QStringLiteral("/ns/mnt")).symLinkTarget()
                != QFileInfo(QStringLiteral("/proc/self/ns/mnt")).symLinkTarget());
        // What it sees: its sockets and logs, the guest's files, devices, /usr; nothing else
        // of the host's (the tests' shared temporary directory aside).
        const QDir root(proc + QStringLiteral("/root"));
        QCOMPARE(readAll(root.filePath(QStringLiteral("kernel"))), readAll(config.kernelPath));
        QCOMPARE(readAll(root.filePath(QStringLiteral("seed"))), readAll(config.seedImagePath));
        QCOMPARE(readAll(decoy), QByteArray());
        struct stat victimInfo;
        QCOMPARE(::stat(QFile::encodeName(victim).constData(), &victimInfo), 0);
        QCOMPARE(victimInfo.st_mode & 07777, mode_t(0700));
        QVERIFY(QDir(victim).isEmpty());
        for (const char *present : {"firecracker", "firecracker.sock", "initrd", "rootfs", "memory",
                                    "dev/kvm", "dev/net/tun", "usr/bin/python3"})
            QVERIFY2(QFileInfo::exists(root.filePath(QLatin1String(present))), present);
        for (const char *absent : {"etc", "proc", "root", "home", "var", "run", "sys"})
            QVERIFY2(!QFileInfo::exists(root.filePath(QLatin1String(absent))), absent);
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("dev/sda"))));
        // The VMM user passes through /dev and /dev/net whatever the helper's umask.
        for (const char *dir : {"dev", "dev/net"}) {
            struct stat info;
            QCOMPARE(
                ::stat(QFile::encodeName(root.filePath(QLatin1String(dir))).constData(), &info), 0);
            QCOMPARE(info.st_mode & 07777, mode_t(0755));
        }
        // The mounts are the jail's own: none of them is seen on the host.
        QVERIFY(!readAll(QStringLiteral("/proc/self/mountinfo"))
                     .contains(QFile::encodeName(config.runtimeDir + QStringLiteral("/kernel"))));
        // Even root inside cannot write the guest's kernel: a read-only bind.
        QVERIFY(readAll(proc + QStringLiteral("/mountinfo")).contains(" /kernel ro,"));

        QJsonObject bootSource;
        QJsonObject vsock;
        for (const QByteArray &line : readAll(requests).trimmed().split('\n')) {
            const QJsonObject request = QJsonDocument::fromJson(line).object();
            const QJsonObject body =
                QJsonDocument::fromJson(request.value(QStringLiteral("body")).toString().toUtf8())
                    .object();
            if (request.value(QStringLiteral("path")).toString() == u"/boot-source")
                bootSource = body;
            if (request.value(QStringLiteral("path")).toString() == u"/vsock")
                vsock = body;
        }
        QCOMPARE(bootSource.value(QStringLiteral("kernel_image_path")).toString(),
                 QStringLiteral("/kernel"));
        QCOMPARE(bootSource.value(QStringLiteral("initrd_path")).toString(),
                 QStringLiteral("/initrd"));
        QCOMPARE(vsock.value(QStringLiteral("uds_path")).toString(), QStringLiteral("/vsock.sock"));

        // A snapshot goes through the jail's /memory into the helper's memory file.
        QTRY_VERIFY_WITH_TIMEOUT(vmm.agent() != nullptr, 10000);
        auto paused = awaitVoid([&](Vmm::Done done) { vmm.pause(done); });
        QVERIFY(paused && *paused);
        const int state = ::memfd_create("state", MFD_CLOEXEC);
        auto saved = awaitVoid([&](Vmm::Done done) { vmm.saveDeviceState(state, done); });
        ::close(state);
        QVERIFY2(saved && *saved,
                 qPrintable(saved && !*saved ? saved->error().message : QString()));
        QVERIFY(readHead(config.memoryPath, 11) == "FAKE-MEMORY");
        vmm.kill();
        QVERIFY(vmm.waitForExit(5000));
    }

    void runsAsPidOneInACgroupOfItsOwn()
    {
        // Issue 19: the jailer's --new-pid-ns and --cgroup. The helper still knows it by its
        // host pid, and the group goes with the VMM.
        if (!FirecrackerJail::available())
            QSKIP("the jail needs CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        FirecrackerVmm vmm(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(vmm);
        QSignalSpy exited(&vmm, &Vmm::exited);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-pidns"));
        const auto started = startAndWait(vmm, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        const pid_t pid = pid_t(started->pid);
        const QString proc = QStringLiteral("/proc/%1").arg(pid);
        QByteArray nspid;
        for (const QByteArray &line : readAll(proc + QStringLiteral("/status")).split('\n')) {
            if (line.startsWith("NSpid:"))
                nspid = line.mid(6).simplified();
        }
        QCOMPARE(nspid, QByteArray::number(pid) + " 1");
        QVERIFY(QFileInfo(proc + QStringLiteral("/ns/pid")).symLinkTarget()
                != QFileInfo(QStringLiteral("/proc/self/ns/pid")).symLinkTarget());
        // What the helper knows it by still works: its start time, and signals by pidfd.
        QCOMPARE(started->startTimeTicks, *VmmProcess::readStartTime(pid));

        const auto hierarchy = VmmCgroup::findHierarchy();
        if (!hierarchy)
            QSKIP("this host has no cgroup hierarchy with the memory, pids and cpu controllers");
        const QString group = QStringLiteral("/airlock/fc-pidns.%1").arg(pid);
        const QByteArray table = readAll(proc + QStringLiteral("/cgroup"));
        const QStringList controllers = hierarchy->version == VmmCgroup::Version::V2
            ? QStringList {QString()}
            : QStringList {QStringLiteral("memory"), QStringLiteral("pids"), QStringLiteral("cpu")};
        for (const QString &controller : controllers) {
            bool found = false;
            for (const QByteArray &line : table.split('\n')) {
                const QList<QByteArray> fields = line.split(':');
                if (fields.size() == 3 && fields[2] == group.toUtf8()
                    && (controller.isEmpty() ? fields[1].isEmpty()
                                             : fields[1].split(',').contains(controller.toUtf8())))
                    found = true;
            }
            QVERIFY2(found,
                     qPrintable(controller + QStringLiteral(" in ") + QString::fromUtf8(table)));
        }
        // 256 MiB of guest memory (twice: a snapshot's RAM file is charged too) + 64 MiB for the
        // VMM, 2 vCPUs + 32 tasks, 2 CPUs of quota.
        const QByteArray memory = QByteArray::number(qint64(2 * 256 + 64) * 1024 * 1024);
        const QString dir = hierarchy->memory + u'/' + QFileInfo(group).fileName();
        const QString pidsDir = hierarchy->pids + u'/' + QFileInfo(group).fileName();
        const QString cpuDir = hierarchy->cpu + u'/' + QFileInfo(group).fileName();
        QCOMPARE(readAll(pidsDir + QStringLiteral("/pids.max")).trimmed(), QByteArray("34"));
        if (hierarchy->version == VmmCgroup::Version::V2) {
            QCOMPARE(readAll(dir + QStringLiteral("/memory.max")).trimmed(), memory);
            QCOMPARE(readAll(cpuDir + QStringLiteral("/cpu.max")).trimmed(),
                     QByteArray("200000 100000"));
        } else {
            QCOMPARE(readAll(dir + QStringLiteral("/memory.limit_in_bytes")).trimmed(), memory);
            QCOMPARE(readAll(cpuDir + QStringLiteral("/cpu.cfs_quota_us")).trimmed(),
                     QByteArray("200000"));
        }
        // Everything it runs is charged there: the Python stand-in's threads too.
        QVERIFY(readAll(pidsDir + QStringLiteral("/pids.current")).trimmed().toInt() >= 2);
        QCOMPARE(cgroupsOf(QStringLiteral("fc-pidns")).size(), hierarchy->parents().size());

        vmm.stop(10000);
        QVERIFY(exited.wait(10000));
        QCOMPARE(exited.first().first().toString(), QString());
        QCOMPARE(cgroupsOf(QStringLiteral("fc-pidns")), QStringList());
    }

    void adoptionStartsAnAirlockFcctlOfItsOwn()
    {
        // A restarted helper adopts a running Firecracker: the old airlock-fcctl ended with the
        // old channel, a new one (as the VMM's uid, read from /proc) answers for the VMM.
        VmmRuntimeInfo info;
        pid_t oldController = 0;
        pid_t relay = 0;
        {
            auto first = std::make_unique<FirecrackerVmm>(fakeBinary(), kFcctl, kConsole);
            shareWithTheJail(*first);
            const auto started = startAndWait(*first, launchConfig(QStringLiteral("fc-adopt")));
            QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
            info = *started;
            oldController = first->controllerPid();
            QVERIFY(oldController > 0);
            relay = first->consoleRelayPid();
            QVERIFY(relay > 0);
        }
        // The old controller saw its channel close and exited; the VMM did not.
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(oldController)),
                                 10000);
        QVERIFY(QFileInfo::exists(QStringLiteral("/proc/%1").arg(info.pid)));
        // So did the console relay, which holds Firecracker's stdio.
        QVERIFY(!isGone(relay));
        // The VMM keeps its cgroup while no helper watches it.
        const QStringList groups = cgroupsOf(QStringLiteral("fc-adopt"));
        if (FirecrackerJail::available() && VmmCgroup::findHierarchy())
            QVERIFY(!groups.isEmpty());
        FirecrackerVmm adopted(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(adopted);
        QByteArray console;
        connect(&adopted, &Vmm::consoleOutput, this,
                [&](const QByteArray &bytes) { console += bytes; });
        auto done = awaitVoid([&](Vmm::Done callback) { adopted.adopt(info, callback); });
        QVERIFY2(done && *done, qPrintable(done && !*done ? done->error().message : QString()));
        QCOMPARE(adopted.firecrackerVersion(), QStringLiteral("1.17.0-dev"));
        QVERIFY(adopted.controllerPid() > 0 && adopted.controllerPid() != oldController);
        auto running = await<bool>([&](auto callback) { adopted.queryRunning(callback); });
        QVERIFY(running && *running && **running);
        // The console is back: input reaches the guest (the fake echoes its stdin), and what
        // the guest writes after the adoption arrives.
        adopted.writeConsole("typed-after-adoption\n");
        QTRY_VERIFY(console.contains("typed-after-adoption\n"));
        QSignalSpy exited(&adopted, &Vmm::exited);
        adopted.stop(10000);
        QVERIFY(exited.wait(10000));
        QCOMPARE(exited.first().first().toString(), QString());
        QCOMPARE(cgroupsOf(QStringLiteral("fc-adopt")), QStringList());
        // The relay ends with Firecracker's stdout.
        QTRY_VERIFY_WITH_TIMEOUT(isGone(relay), 10000);
    }

    void consoleRelayWithstandsHostileClientsAndFloods()
    {
        // airlock-console relays bytes it never parses: garbage, clients that come and go, one
        // that never reads while the guest floods its console. None of that blocks it or grows
        // its memory, and the newest client always gets the console.
        FirecrackerVmm vmm(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(vmm);
        QByteArray console;
        connect(&vmm, &Vmm::consoleOutput, this,
                [&](const QByteArray &bytes) { console += bytes; });
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-console"));
        const auto started = startAndWait(vmm, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        QTRY_VERIFY(console.contains("airlock-guest: console ready"));
        const pid_t relay = vmm.consoleRelayPid();
        QVERIFY(relay > 0);
        QCOMPARE(statusField(relay, "NoNewPrivs"), qint64(1));
        QCOMPARE(statusField(relay, "CapEff"), qint64(0));
        // Only root (the helper) may connect: the socket is root's, mode 0600.
        const QString socketPath = QDir(config.runtimeDir).filePath(FirecrackerVmm::kConsoleSocket);
        struct stat info;
        QCOMPARE(::lstat(QFile::encodeName(socketPath).constData(), &info), 0);
        QVERIFY(S_ISSOCK(info.st_mode));
        QCOMPARE(info.st_mode & 0777, mode_t(0600));
        QCOMPARE(info.st_uid, uid_t(0));

        // Clients that connect and vanish, or send garbage and hang up.
        for (int i = 0; i < 50; ++i) {
            const int fd = connectRaw(socketPath);
            QVERIFY(fd >= 0);
            if (i % 2 == 1) {
                const QByteArray garbage = QByteArray(1000, char(i)) + QByteArray("\0\xff\x1b[", 5);
                QCOMPARE(::write(fd, garbage.constData(), size_t(garbage.size())),
                         ssize_t(garbage.size()));
            }
            ::close(fd);
        }

        // A client that never reads while 16 MiB go through the guest's console (the fake
        // echoes its stdin on its stdout): the relay drops what the client does not take, so
        // the input keeps flowing, and its memory stays two small queues.
        const int stuck = connectRaw(socketPath);
        QVERIFY(stuck >= 0);
        const QByteArray chunk(64 * 1024, 'x');
        qint64 sent = 0;
        const qint64 flood = 16 * 1024 * 1024;
        const QDeadlineTimer deadline(60000);
        while (sent < flood) {
            pollfd writable {stuck, POLLOUT, 0};
            // A relay that stopped taking input would stall this poll: 10 s fails the test.
            QVERIFY2(::poll(&writable, 1, 10000) == 1, "the relay stopped taking console input");
            const ssize_t put = ::write(stuck, chunk.constData(), size_t(chunk.size()));
            QVERIFY(put > 0 || errno == EAGAIN);
            if (put > 0)
                sent += put;
            QVERIFY(!deadline.hasExpired());
        }
        const qint64 rssKb = statusField(relay, "VmRSS");
        QVERIFY2(rssKb > 0 && rssKb < 8 * 1024, qPrintable(QString::number(rssKb)));

        // The newest client replaces the stuck one, and the console works for it.
        const int fresh = connectRaw(socketPath);
        QVERIFY(fresh >= 0);
        const auto closeBoth = qScopeGuard([&] {
            ::close(stuck);
            ::close(fresh);
        });
        // The relay closed the stuck one: what it still has buffered, then end of file.
        QVERIFY(endsWithin(stuck, 10000));
        const QByteArray probe("after-the-flood\n");
        QCOMPARE(::write(fresh, probe.constData(), size_t(probe.size())), ssize_t(probe.size()));
        const QByteArray seen = readUntil(fresh, probe, 20000);
        QVERIFY2(seen.contains(probe), qPrintable(QString::number(seen.size())));
        QVERIFY(statusField(relay, "VmRSS") < 8 * 1024);

        // Firecracker ends, its stdout ends, and so does the relay.
        QSignalSpy exited(&vmm, &Vmm::exited);
        vmm.kill();
        QVERIFY(exited.wait(10000));
        QTRY_VERIFY_WITH_TIMEOUT(isGone(relay), 10000);
        QVERIFY(readAll(QDir(config.runtimeDir).filePath(FirecrackerVmm::kConsoleLogFile))
                    .contains("console ended"));
    }

    void stopKillsAVmmThatIgnoresCtrlAltDel()
    {
        FirecrackerVmm vmm(fakeBinary({QStringLiteral("--ignore-ctrl-alt-del")}), kFcctl, kConsole);
        shareWithTheJail(vmm);
        QSignalSpy exited(&vmm, &Vmm::exited);
        const auto started = startAndWait(vmm, launchConfig(QStringLiteral("fc-stubborn")));
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        vmm.stop(300);
        QVERIFY(exited.wait(10000));
        QCOMPARE(exited.first().first().toString(), QString());
    }

    void unexpectedExitIsReported()
    {
        FirecrackerVmm vmm(fakeBinary(), kFcctl, kConsole);
        shareWithTheJail(vmm);
        QSignalSpy exited(&vmm, &Vmm::exited);
        const auto started = startAndWait(vmm, launchConfig(QStringLiteral("fc-crash")));
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        // Pid 1 of its namespace, yet SIGKILL from the host ends it.
        ::kill(pid_t(started->pid), SIGKILL);
        QVERIFY(exited.wait(10000));
        QVERIFY2(exited.first().first().toString().contains(QStringLiteral("signal 9")),
                 qPrintable(exited.first().first().toString()));
        QCOMPARE(cgroupsOf(QStringLiteral("fc-crash")), QStringList());
    }

    void startErrors_data()
    {
        QTest::addColumn<QStringList>("knobs");
        QTest::addColumn<QString>("change");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("binary missing")
            << QStringList() << QStringLiteral("no-binary") << int(ErrorKind::BackendUnavailable)
            << QStringLiteral("Firecracker is not installed");
        QTest::newRow("airlock-fcctl missing")
            << QStringList() << QStringLiteral("no-fcctl") << int(ErrorKind::BackendUnavailable)
            << QStringLiteral("airlock-fcctl is missing");
        QTest::newRow("airlock-console missing")
            << QStringList() << QStringLiteral("no-console") << int(ErrorKind::BackendUnavailable)
            << QStringLiteral("airlock-console is missing");
        QTest::newRow("qcow2 root disk")
            << QStringList() << QStringLiteral("qcow2") << int(ErrorKind::BackendUnavailable)
            << QStringLiteral("raw disks only");
        QTest::newRow("no KVM") << QStringList() << QStringLiteral("tcg")
                                << int(ErrorKind::BackendUnavailable)
                                << QStringLiteral("needs KVM");
        QTest::newRow("too old") << QStringList {QStringLiteral("--version 1.2.0")} << QString()
                                 << int(ErrorKind::BackendUnavailable)
                                 << QStringLiteral("Firecracker 1.2.0 is too old");
        QTest::newRow("fault message")
            << QStringList {QStringLiteral("--fault PUT:/machine-config")} << QString()
            << int(ErrorKind::OperationFailed)
            << QStringLiteral("Firecracker refused PUT /machine-config (400): Injected fault for "
                              "/machine-config");
        QTest::newRow("dies mid-boot")
            << QStringList {QStringLiteral("--die-after /boot-source")} << QString()
            << int(ErrorKind::OperationFailed)
            << QStringLiteral("exited with status 1: fake-firecracker: dying after /boot-source");
        QTest::newRow("exec fails")
            << QStringList() << QStringLiteral("bad-interpreter") << int(ErrorKind::OperationFailed)
            << QStringLiteral("failed at exec");
        QTest::newRow("socket never appears")
            << QStringList {QStringLiteral("--no-socket")} << QString() << int(ErrorKind::Timeout)
            << QStringLiteral("did not open its API socket");
    }

    void startErrors()
    {
        QFETCH(QStringList, knobs);
        QFETCH(QString, change);
        QFETCH(int, kind);
        QFETCH(QString, message);
        QString binary = change == QLatin1String("no-binary")
            ? m_dir.filePath(QStringLiteral("no-such-firecracker"))
            : fakeBinary(knobs);
        if (change == QLatin1String("bad-interpreter")) {
            // The binary is there, but its exec fails (in the jail: once it is in its cgroup).
            binary = m_dir.filePath(QStringLiteral("firecracker-bad"));
            QFile script(binary);
            QVERIFY(script.open(QIODevice::WriteOnly));
            script.write("#!/no/such/interpreter\n");
            script.close();
            script.setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner);
        }
        FirecrackerVmm vmm(binary,
                           change == QLatin1String("no-fcctl")
                               ? m_dir.filePath(QStringLiteral("no-such-fcctl"))
                               : kFcctl,
                           change == QLatin1String("no-console")
                               ? m_dir.filePath(QStringLiteral("no-such-console"))
                               : kConsole);
        shareWithTheJail(vmm);
        VmmLaunchConfig config = launchConfig(QStringLiteral("fc-error"));
        if (change == QLatin1String("qcow2"))
            config.rootDiskPath = m_dir.filePath(QStringLiteral("root.qcow2"));
        if (change == QLatin1String("tcg"))
            config.acceleration = Acceleration::Tcg;
        const auto started = startAndWait(vmm, config);
        QVERIFY(!started);
        QCOMPARE(int(started.error().kind), kind);
        QVERIFY2(started.error().message.contains(message), qPrintable(started.error().message));
        QVERIFY(!vmm.isRunning());
        // No process is left behind: nothing serves the API socket any more.
        QLocalSocket probe;
        probe.connectToServer(QDir(config.runtimeDir).filePath(FirecrackerVmm::kApiSocket));
        QVERIFY(!probe.waitForConnected(100));
        // Nor a cgroup.
        QCOMPARE(cgroupsOf(QStringLiteral("fc-error")), QStringList());
    }

    void killDuringStartLeavesNothing()
    {
        FirecrackerVmm vmm(fakeBinary({QStringLiteral("--no-socket")}), kFcctl, kConsole);
        shareWithTheJail(vmm);
        std::optional<Result<VmmRuntimeInfo>> started;
        vmm.start(launchConfig(QStringLiteral("fc-killed")),
                  [&](const Result<VmmRuntimeInfo> &result) { started = result; });
        vmm.kill();
        QVERIFY(started.has_value());
        QVERIFY(!*started);
        QCOMPARE(started->error().kind, ErrorKind::OperationFailed);
        QCOMPARE(cgroupsOf(QStringLiteral("fc-killed")), QStringList());
    }

    void vsockConnectorKeepsTheGuestsFirstBytes()
    {
        FirecrackerVmm vmm(fakeBinary({QStringLiteral("--agent-delay-ms 0")}), kFcctl, kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-vsock"));
        const auto started = startAndWait(vmm, config);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        std::optional<Result<QLocalSocket *>> connected;
        VsockConnector connector(QDir(config.runtimeDir).filePath(FirecrackerVmm::kVsockSocket),
                                 FirecrackerVmm::kAgentVsockPort, 5000,
                                 [&](const Result<QLocalSocket *> &socket) { connected = socket; });
        QTRY_VERIFY(connected.has_value());
        QVERIFY2(*connected, qPrintable(*connected ? QString() : connected->error().message));
        std::unique_ptr<QLocalSocket> socket(**connected);
        // What the guest sent right after OK is still there for the protocol above.
        QTRY_VERIFY(socket->canReadLine());
        QCOMPARE(socket->readLine(), QByteArray("guest-agent-hello\n"));
        socket->write("ping\n");
        QTRY_VERIFY(socket->canReadLine());
        QCOMPARE(socket->readLine(), QByteArray("ping\n"));
        vmm.kill();
        // Gone before the object is: its cgroup goes with it.
        QVERIFY(vmm.waitForExit(5000));
    }

    void versionParsing()
    {
        using firecracker::FirecrackerVersion;
        const auto parse = [](const QJsonValue &value) {
            return FirecrackerVersion::fromJson({{QStringLiteral("firecracker_version"), value}});
        };
        const auto dev = parse(QStringLiteral("1.17.0-dev"));
        QVERIFY(dev);
        QCOMPARE(dev->major, 1);
        QCOMPARE(dev->minor, 17);
        QCOMPARE(dev->patch, 0);
        QVERIFY(dev->supported() && dev->hasEntropy() && dev->hasLoadOverrides());
        const auto old = parse(QStringLiteral("v1.3.9"));
        QVERIFY(old);
        QVERIFY(!old->supported());
        // 1.7 gives virtio-mmio devices only on the kernel command line, which the images'
        // kernel ignores.
        const auto noAcpi = parse(QStringLiteral("1.7.0"));
        QVERIFY(noAcpi && noAcpi->hasEntropy() && !noAcpi->supported());
        const auto mid = parse(QStringLiteral("1.12.1"));
        QVERIFY(mid && mid->supported() && !mid->hasLoadOverrides());
        QVERIFY(!parse(QStringLiteral("one point seventeen")));
        QVERIFY(!parse(117));
        QVERIFY(!FirecrackerVersion::fromJson({}));
    }

    void featuresFollowTheReportedVersion_data()
    {
        QTest::addColumn<QString>("version");
        QTest::addColumn<bool>("overrides");
        QTest::addColumn<bool>("diff");
        QTest::newRow("1.12") << QStringLiteral("1.12.1") << false << false;
        QTest::newRow("1.14") << QStringLiteral("1.14.2") << false << false;
        QTest::newRow("1.17") << QStringLiteral("1.17.0-dev") << true << true;
    }

    void featuresFollowTheReportedVersion()
    {
        // What a restore sends depends on the version GET /version reported, not on what the
        // description this test has allows.
        QFETCH(QString, version);
        QFETCH(bool, overrides);
        QFETCH(bool, diff);
        const QString requests = m_dir.filePath(QStringLiteral("requests-%1").arg(version));
        const QStringList knobs {QStringLiteral("--version ") + version,
                                 QStringLiteral("--requests '%1'").arg(requests)};
        FirecrackerVmm booted(fakeBinary(knobs), kFcctl, kConsole);
        shareWithTheJail(booted);
        const VmmLaunchConfig config =
            launchConfig(QStringLiteral("fc-v") + version.left(4).remove(u'.'));
        QVERIFY(startAndWait(booted, config));
        const auto paused = awaitVoid([&](Vmm::Done done) { booted.pause(done); });
        QVERIFY(paused && *paused);
        const int state = ::memfd_create("state", MFD_CLOEXEC);
        auto saved = awaitVoid([&](Vmm::Done done) { booted.saveDeviceState(state, done); });
        QVERIFY(saved && *saved);
        booted.kill();
        QVERIFY(booted.waitForExit(5000));

        FirecrackerVmm restored(fakeBinary(knobs), kFcctl, kConsole);
        shareWithTheJail(restored);
        VmmLaunchConfig restoreConfig = config;
        restoreConfig.incomingStateFd = state;
        const auto started = startAndWait(restored, restoreConfig);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().message));
        // A failed comparison below must not leave the server running.
        const auto stopRestored = qScopeGuard([&restored] { restored.kill(); });
        ::close(state);
        QJsonObject load;
        for (const QByteArray &line : readAll(requests).trimmed().split('\n')) {
            const QJsonObject request = QJsonDocument::fromJson(line).object();
            if (request.value(QStringLiteral("path")).toString() == QLatin1String("/snapshot/load"))
                load = QJsonDocument::fromJson(
                           request.value(QStringLiteral("body")).toString().toUtf8())
                           .object();
        }
        QVERIFY(!load.isEmpty());
        QCOMPARE(load.contains(QStringLiteral("network_overrides")), overrides);
        QCOMPARE(load.contains(QStringLiteral("vsock_override")), overrides);
        QCOMPARE(load.value(QStringLiteral("mem_backend"))
                     .toObject()
                     .value(QStringLiteral("backend_path"))
                     .toString(),
                 // Inside the jail, the memory directory is /memory.
                 booted.isJailed()
                     ? QStringLiteral("/memory/") + QFileInfo(config.memoryPath).fileName()
                     : config.memoryPath);
        // Every boot of the booted VMM sent PUT /entropy (1.4 and later).
        QVERIFY(readAll(requests).contains("\"path\": \"/entropy\""));
        // Dirty page tracking and Diff snapshots only from 1.15; older releases get neither
        // field and Full snapshots only, also of a loaded guest (which has a base).
        const auto machine = bodiesOf(requests, QLatin1StringView("/machine-config"));
        QVERIFY(!machine.isEmpty());
        QCOMPARE(machine.first().contains(QStringLiteral("track_dirty_pages")), diff);
        QCOMPARE(load.contains(QStringLiteral("track_dirty_pages")), diff);
        const int state2 = ::memfd_create("state2", MFD_CLOEXEC);
        const auto closeState2 = qScopeGuard([state2] { ::close(state2); });
        QCOMPARE(snapshot(restored, state2), QString());
        QCOMPARE(restored.lastSnapshotType(),
                 diff ? QStringLiteral("Diff") : QStringLiteral("Full"));
        QCOMPARE(readAll(restoreConfig.memoryPath), fakeMemory(restoreConfig));
        restored.kill();
        QVERIFY(restored.waitForExit(5000));
    }

    void diffSnapshotsMergeOntoACopyOfTheBase()
    {
        const QString requests = m_dir.filePath(QStringLiteral("requests-diff"));
        const QStringList knobs {QStringLiteral("--requests '%1'").arg(requests)};
        FirecrackerVmm vmm(fakeBinary(knobs), kFcctl, kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-diff"));
        QVERIFY(startAndWait(vmm, config));
        const auto killVmm = qScopeGuard([&vmm] { vmm.kill(); });
        // Dirty page tracking is on from the boot (1.15 and later).
        const auto machine = bodiesOf(requests, QLatin1StringView("/machine-config"));
        QCOMPARE(machine.size(), 1);
        QCOMPARE(machine.first().value(QStringLiteral("track_dirty_pages")), QJsonValue(true));

        const int state = ::memfd_create("state", MFD_CLOEXEC);
        const auto closeState = qScopeGuard([state] { ::close(state); });
        // The first snapshot of a cold boot is Full: there is no base yet.
        QCOMPARE(snapshot(vmm, state), QString());
        QCOMPARE(vmm.lastSnapshotType(), QStringLiteral("Full"));
        const QByteArray full = readAll(config.memoryPath);
        QCOMPARE(full.size(), qint64(config.memoryMib) * 1024 * 1024);
        QVERIFY(full == fakeMemory(config));

        // The second holds only the pages written meanwhile, merged onto memoryPath.
        QVERIFY(runAgain(vmm));
        QCOMPARE(snapshot(vmm, state), QString());
        QCOMPARE(vmm.lastSnapshotType(), QStringLiteral("Diff"));
        const QByteArray merged = readAll(config.memoryPath);
        QVERIFY(merged == fakeMemory(config));
        QVERIFY(merged != full);
        QVERIFY(merged.startsWith("FAKE-MEMORY"));
        QVERIFY(!QFile::exists(config.memoryPath + QStringLiteral(".next")));
        QVERIFY(!QFile::exists(config.memoryPath + QStringLiteral(".diff")));
        // A guest that did not run dirtied nothing: an empty Diff keeps the memory.
        QCOMPARE(snapshot(vmm, state), QString());
        QCOMPARE(vmm.lastSnapshotType(), QStringLiteral("Diff"));
        QVERIFY(readAll(config.memoryPath) == merged);
        QCOMPARE(
            snapshotTypes(requests),
            (QStringList {QStringLiteral("Full"), QStringLiteral("Diff"), QStringLiteral("Diff")}));

        // A VMM loaded from that memory: its first snapshot is already a Diff (the loaded file
        // is its base), and the file it was loaded from is never written.
        FirecrackerVmm restored(fakeBinary(knobs), kFcctl, kConsole);
        shareWithTheJail(restored);
        VmmLaunchConfig restoreConfig = launchConfig(QStringLiteral("fc-diff-restored"));
        QFile::remove(restoreConfig.memoryPath);
        QVERIFY(QFile::copy(config.memoryPath, restoreConfig.memoryPath));
        restoreConfig.incomingStateFd = state;
        QVERIFY(startAndWait(restored, restoreConfig));
        const auto killRestored = qScopeGuard([&restored] { restored.kill(); });
        const auto load = bodiesOf(requests, QLatin1StringView("/snapshot/load"));
        QCOMPARE(load.size(), 1);
        QCOMPARE(load.first().value(QStringLiteral("track_dirty_pages")), QJsonValue(true));
        QFile loadedFrom(restoreConfig.memoryPath);
        QVERIFY(loadedFrom.open(QIODevice::ReadOnly));
        const int state2 = ::memfd_create("state2", MFD_CLOEXEC);
        const auto closeState2 = qScopeGuard([state2] { ::close(state2); });
        QCOMPARE(snapshot(restored, state2), QString());
        QCOMPARE(restored.lastSnapshotType(), QStringLiteral("Diff"));
        const QByteArray restoredMemory = readAll(restoreConfig.memoryPath);
        QVERIFY(restoredMemory == fakeMemory(restoreConfig));
        QVERIFY(restoredMemory != merged);
        QVERIFY(loadedFrom.readAll() == merged);
        QCOMPARE(violations(), QByteArray());
    }

    void aHostileFullMemoryIsRefused_data()
    {
        QTest::addColumn<QString>("knob");
        QTest::addColumn<QString>("message");
        QTest::newRow("a sparse GiB more")
            << QStringLiteral("--hostile-full large") << QStringLiteral("not the guest's");
        QTest::newRow("replaced") << QStringLiteral("--hostile-full replaced")
                                  << QStringLiteral("is not the file made for it");
        QTest::newRow("symlink") << QStringLiteral("--hostile-full symlink")
                                 << QStringLiteral("is not the file made for it");
    }

    void aHostileFullMemoryIsRefused()
    {
        // The memory file of a Full snapshot is the VMM user's: only the file made for it, at
        // the guest's memory size, replaces memoryPath
        // (docs/reviews/2026-12-08-firecracker-jail.md#f3).
        QFETCH(QString, knob);
        QFETCH(QString, message);
        static int count = 0;
        FirecrackerVmm vmm(fakeBinary({knob}), kFcctl, kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-bad-full%1").arg(++count));
        QVERIFY(startAndWait(vmm, config));
        const auto killVmm = qScopeGuard([&vmm] { vmm.kill(); });
        struct stat before;
        QCOMPARE(::stat(QFile::encodeName(config.memoryPath).constData(), &before), 0);
        const int state = ::memfd_create("state", MFD_CLOEXEC);
        const auto closeState = qScopeGuard([state] { ::close(state); });
        const QString error = snapshot(vmm, state);
        QVERIFY2(error.contains(message), qPrintable(QStringLiteral("error: ") + error));
        struct stat after;
        QCOMPARE(::stat(QFile::encodeName(config.memoryPath).constData(), &after), 0);
        QCOMPARE(after.st_ino, before.st_ino);
        QCOMPARE(after.st_size, before.st_size);
        QVERIFY(!QFileInfo::exists(config.memoryPath + QStringLiteral(".next"))
                && !QFileInfo(config.memoryPath + QStringLiteral(".next")).isSymLink());
    }

    void aFailedDiffLeavesTheMemoryAndTheNextIsFull_data()
    {
        QTest::addColumn<QString>("knob");
        QTest::addColumn<QString>("message");
        QTest::newRow("refused") << QStringLiteral("--refuse-diff")
                                 << QStringLiteral("Injected fault for a Diff snapshot");
        QTest::newRow("symlink") << QStringLiteral("--hostile-diff symlink")
                                 << QStringLiteral("cannot open");
        QTest::newRow("larger than memory") << QStringLiteral("--hostile-diff large")
                                            << QStringLiteral("larger than the guest's memory");
        QTest::newRow("replaced") << QStringLiteral("--hostile-diff replaced")
                                  << QStringLiteral("not the file created for the diff");
    }

    void aFailedDiffLeavesTheMemoryAndTheNextIsFull()
    {
        QFETCH(QString, knob);
        QFETCH(QString, message);
        static int count = 0;
        const QString requests =
            m_dir.filePath(QStringLiteral("requests-bad-diff-%1").arg(++count));
        FirecrackerVmm vmm(fakeBinary({knob, QStringLiteral("--requests '%1'").arg(requests)}),
                           kFcctl, kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-bad-diff%1").arg(count));
        QVERIFY(startAndWait(vmm, config));
        const auto killVmm = qScopeGuard([&vmm] { vmm.kill(); });
        const int state = ::memfd_create("state", MFD_CLOEXEC);
        const auto closeState = qScopeGuard([state] { ::close(state); });
        QCOMPARE(snapshot(vmm, state), QString());
        const QByteArray base = readAll(config.memoryPath);
        struct stat before;
        QCOMPARE(::stat(QFile::encodeName(config.memoryPath).constData(), &before), 0);

        QVERIFY(runAgain(vmm));
        const QString error = snapshot(vmm, state);
        QVERIFY2(error.contains(message), qPrintable(QStringLiteral("error: ") + error));
        // memoryPath is the same file with the same bytes; nothing is left beside it.
        struct stat after;
        QCOMPARE(::stat(QFile::encodeName(config.memoryPath).constData(), &after), 0);
        QCOMPARE(after.st_ino, before.st_ino);
        QVERIFY(readAll(config.memoryPath) == base);
        QVERIFY(!QFile::exists(config.memoryPath + QStringLiteral(".next")));
        QVERIFY(!QFileInfo(config.memoryPath + QStringLiteral(".diff")).isSymLink());
        QVERIFY(!QFile::exists(config.memoryPath + QStringLiteral(".diff")));
        // The next snapshot is Full again, and right.
        QCOMPARE(snapshot(vmm, state), QString());
        QCOMPARE(vmm.lastSnapshotType(), QStringLiteral("Full"));
        QVERIFY(readAll(config.memoryPath) == fakeMemory(config));
        QCOMPARE(
            snapshotTypes(requests),
            (QStringList {QStringLiteral("Full"), QStringLiteral("Diff"), QStringLiteral("Full")}));
    }

    void aLyingFcctlBreaksOnlyItsChannel_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<QString>("message");
        const QString broke = QStringLiteral("airlock-fcctl broke its protocol");
        QTest::newRow("not JSON") << QByteArray("b'this is not json\\n'") << broke;
        QTest::newRow("oversized line")
            << QByteArray("b'{\"id\":1,\"ok\":true,\"version\":\"' + b'9' * 20000 + b'\"}\\n'")
            << broke;
        QTest::newRow("unasked id") << QByteArray("b'{\"id\":999,\"ok\":true}\\n'") << broke;
        QTest::newRow("ok not a bool")
            << QByteArray("json.dumps({'id': command['id'], 'ok': 'yes'}).encode() + b'\\n'")
            << broke;
        QTest::newRow("unknown kind, hostile message")
            << QByteArray("json.dumps({'id': command['id'], 'ok': False, 'error': {'kind': "
                          "'root_please', 'message': '\\x1b[2Jboom' + 'x' * 5000}}).encode() + "
                          "b'\\n'")
            << QStringLiteral("boom");
    }

    void aLyingFcctlBreaksOnlyItsChannel()
    {
        // airlock-fcctl parses what Firecracker (and a guest that escaped into it) says; what it
        // tells airlockd in turn is believed only for its shape. A controller that lies ends the
        // start with a clear error, and neither process is left behind.
        QFETCH(QByteArray, answer);
        QFETCH(QString, message);
        static int count = 0;
        const QString pidFile = m_dir.filePath(QStringLiteral("liar-%1.pid").arg(++count));
        const QString liar = m_dir.filePath(QStringLiteral("liar-%1").arg(count));
        {
            QFile script(liar);
            QVERIFY(script.open(QIODevice::WriteOnly));
            script.write("#!/usr/bin/env python3\n"
                         "import json, os, sys\n"
                         "open('"
                         + pidFile.toUtf8()
                         + "', 'w').write(str(os.getpid()))\n"
                           "channel = os.fdopen(3, 'rb', buffering=0)\n"
                           "line = b''\n"
                           "while not line.endswith(b'\\n'):\n"
                           "    byte = channel.read(1)\n"
                           "    if not byte:\n"
                           "        sys.exit(0)\n"
                           "    line += byte\n"
                           "command = json.loads(line)\n"
                           "os.write(3, "
                         + answer
                         + ")\n"
                           "while channel.read(1):\n"
                           "    pass\n");
            script.close();
            script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                  | QFileDevice::ExeOwner);
        }
        FirecrackerVmm vmm(fakeBinary(), liar, kConsole);
        shareWithTheJail(vmm);
        const VmmLaunchConfig config = launchConfig(QStringLiteral("fc-liar"));
        const auto started = startAndWait(vmm, config);
        QVERIFY(!started);
        QCOMPARE(started.error().kind, ErrorKind::OperationFailed);
        QVERIFY2(started.error().message.contains(message), qPrintable(started.error().message));
        // A message is kept printable and bounded, whatever airlock-fcctl sent.
        QVERIFY(!started.error().message.contains(QChar(0x1b)));
        QVERIFY(started.error().message.size() < 1200);
        QVERIFY(!vmm.isRunning());
        QLocalSocket probe;
        probe.connectToServer(QDir(config.runtimeDir).filePath(FirecrackerVmm::kApiSocket));
        QVERIFY(!probe.waitForConnected(100));
        // The liar is gone too: killed, or it saw its channel close.
        QFile pid(pidFile);
        QVERIFY(pid.open(QIODevice::ReadOnly));
        const QString proc = QStringLiteral("/proc/") + QString::fromLatin1(pid.readAll());
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(proc), 10000);
    }

    void plantedWrongFieldsAreCaught()
    {
        // The server started directly, as Airlock would; requests built by hand, each breaking
        // the description one way. Each must be refused with a fault message naming what is
        // wrong, and recorded as a violation.
        const QString socketPath = m_dir.filePath(QStringLiteral("planted.sock"));
        QProcess server;
        server.start(fakeBinary(), {QStringLiteral("--api-sock"), socketPath});
        QVERIFY(server.waitForStarted());
        FirecrackerApiClient api(socketPath);
        QTRY_VERIFY(QFile::exists(socketPath));

        struct Planted
        {
            QByteArray method;
            QString path;
            QByteArray body;
            QString fault;
        };
        const QList<Planted> planted {
            {"PUT", QStringLiteral("/machine-config"), R"({"vcpu_count":"2","mem_size_mib":256})",
             QStringLiteral("body.vcpu_count must be an integer, not \"2\"")},
            {"PUT", QStringLiteral("/machine-config"),
             R"({"vcpu_count":2,"mem_size_mib":256,"turbo":true})",
             QStringLiteral("body.turbo is not a field of this request")},
            {"PUT", QStringLiteral("/machine-config"), R"({"vcpu_count":64,"mem_size_mib":256})",
             QStringLiteral("body.vcpu_count must be at most 32")},
            {"PUT", QStringLiteral("/boot-source"), R"({"boot_args":"console=ttyS0"})",
             QStringLiteral("body.kernel_image_path is required")},
            {"PUT", QStringLiteral("/actions"), R"({"action_type":"Reboot"})",
             QStringLiteral("body.action_type must be one of")},
            {"PUT", QStringLiteral("/drives/rootfs"),
             R"({"drive_id":"other","path_on_host":"/x","is_root_device":false})",
             QStringLiteral("does not match body.drive_id")},
            {"PATCH", QStringLiteral("/vm"), R"({"state":"Paused"})",
             QStringLiteral("post-boot only")},
            {"PUT", QStringLiteral("/machine-config"),
             R"({"vcpu_count":2,"mem_size_mib":256,"track_dirty_pages":"yes"})",
             QStringLiteral("body.track_dirty_pages must be a boolean")},
            {"PUT", QStringLiteral("/snapshot/create"),
             R"({"mem_file_path":"/m","snapshot_path":"/s","snapshot_type":"Incremental"})",
             QStringLiteral("body.snapshot_type must be one of")},
            {"PUT", QStringLiteral("/snapshot/load"),
             R"({"snapshot_path":"/s","mem_backend":{"backend_type":"File","backend_path":"/m"},"track_dirty_pages":1})",
             QStringLiteral("body.track_dirty_pages must be a boolean")},
            {"PUT", QStringLiteral("/version"), R"({})",
             QStringLiteral("Invalid request method PUT for /version")},
            {"PUT", QStringLiteral("/no-such-endpoint"), R"({})",
             QStringLiteral("no path /no-such-endpoint")},
        };
        for (const Planted &request : planted) {
            std::optional<Result<QJsonObject>> answer;
            api.send(request.method, request.path, QJsonDocument::fromJson(request.body).object(),
                     true, 5000, [&](const Result<QJsonObject> &reply) { answer = reply; });
            QTRY_VERIFY(answer.has_value());
            QVERIFY2(!*answer, qPrintable(request.path));
            QCOMPARE(answer->error().kind, ErrorKind::OperationFailed);
            // Airlock's error names the endpoint and Firecracker's fault message.
            QVERIFY2(answer->error().message.startsWith(
                         QStringLiteral("Firecracker refused %1 %2 (400): ")
                             .arg(QString::fromLatin1(request.method), request.path)),
                     qPrintable(answer->error().message));
            QVERIFY2(answer->error().message.contains(request.fault),
                     qPrintable(answer->error().message));
        }
        // Every one was recorded: the check that fails the other tests saw them all.
        const QList<QByteArray> recorded = violations().trimmed().split('\n');
        QCOMPARE(recorded.size(), planted.size());
        QVERIFY(recorded.first().contains("vcpu_count must be an integer"));
        // A conforming request passes.
        std::optional<Result<QJsonObject>> answer;
        api.send(
            "PUT", QStringLiteral("/machine-config"),
            QJsonObject {{QStringLiteral("vcpu_count"), 2}, {QStringLiteral("mem_size_mib"), 256}},
            true, 5000, [&](const Result<QJsonObject> &reply) { answer = reply; });
        QTRY_VERIFY(answer.has_value());
        QVERIFY(*answer);
        QCOMPARE(violations().trimmed().split('\n').size(), planted.size());
        server.kill();
        server.waitForFinished();
    }
};

QTEST_GUILESS_MAIN(TestFirecrackerVmm)
#include "tst_firecrackervmm.moc"
