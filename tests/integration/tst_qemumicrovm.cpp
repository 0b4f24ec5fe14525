// QemuMicrovm, ImageStore and KvmProbe against real QEMU (TCG) and the real default guest image.
// One guest is booted and shared by the console, adopt and stop checks, which run in order.

#include "core/vmm/imagestore.h"
#include "core/vmm/kvmprobe.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/qemumicrovm.h"
#include "core/vmm/vmmprocess.h"
#include "resultcheck.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace airlock;

namespace {

constexpr int kBootTimeoutMs = 60000; // ~3.5 s on an idle machine; CI shares two cores
constexpr QLatin1StringView kVmmUser {"airlock-vmm"};

/// Kills every VMM this test started if the test process dies without cleaning up (a crash or
/// a ctest timeout): the VMMs run in their own session on purpose, so nothing else would. A
/// forked guard reads pids from a pipe; EOF (our death) makes it SIGKILL them.
class OrphanGuard
{
public:
    OrphanGuard()
    {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            return;
        const pid_t guard = ::fork();
        if (guard == 0) {
            ::close(fds[1]);
            pid_t pids[64] = {};
            int count = 0;
            pid_t pid;
            while (::read(fds[0], &pid, sizeof pid) == sizeof pid) {
                if (count < 64)
                    pids[count++] = pid;
            }
            for (int i = 0; i < count; ++i)
                ::kill(pids[i], SIGKILL);
            ::_exit(0);
        }
        ::close(fds[0]);
        m_writeFd = fds[1];
    }
    void add(pid_t pid)
    {
        if (m_writeFd >= 0 && ::write(m_writeFd, &pid, sizeof pid) != sizeof pid)
            qWarning("orphan guard: cannot record pid %d", int(pid));
    }

private:
    int m_writeFd = -1;
};

} // namespace

namespace {

/// Starts `vmm` and runs the event loop until the start is over: the VMM runs or it failed
/// (QemuMicrovm's own start deadline bounds the wait).
airlock::Result<airlock::VmmRuntimeInfo> startAndWait(airlock::Vmm &vmm,
                                                      const airlock::VmmLaunchConfig &config)
{
    std::optional<airlock::Result<airlock::VmmRuntimeInfo>> outcome;
    QEventLoop loop;
    vmm.start(config, [&](const airlock::Result<airlock::VmmRuntimeInfo> &result) {
        outcome = result;
        loop.quit();
    });
    if (!outcome)
        loop.exec();
    return *outcome;
}

} // namespace

class TestQemuMicrovm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void imageStoreFindsDefault();
    void imageStoreRejects_data();
    void imageStoreRejects();
    void kvmProbeFallsBackToTcg_data();
    void kvmProbeFallsBackToTcg();
    void startRefusesMissingImageFiles();
    void startReportsQemuErrors();
    void unexpectedKillIsReported();

    void bootsToReadyLineAsVmmUser();
    void consoleRunsCommands();
    void hostnameIsSandboxName();
    void shellHasJobControl();
    void adoptRejectsRecycledPid();
    void adoptReconnectsConsole();
    void stopPowersOffGracefully();
    void guestPoweroffIsReported();

private:
    VmmLaunchConfig launchConfig(const QString &name, const QString &runDir) const;
    std::unique_ptr<QTemporaryDir> makeRunDir() const;
    void watch(QemuMicrovm *vmm);
    bool waitForConsole(const QByteArray &needle, int timeoutMs);
    static bool processAlive(qint64 pid);
    /// Vmm::adopt, waited for (its answer comes from the event loop).
    static Result<void> adoptAndWait(QemuMicrovm &vmm, const VmmRuntimeInfo &info);

    OrphanGuard m_guard;
    GuestImage m_image;
    uid_t m_vmmUid = 0;
    gid_t m_vmmGid = 0;
    std::unique_ptr<QTemporaryDir> m_runDir;
    std::unique_ptr<QemuMicrovm> m_vmm;
    VmmRuntimeInfo m_info;
    QByteArray m_console;
    qsizetype m_mark = 0; ///< console offset from which waitForConsole() looks
    QList<qint64> m_started;
};

void TestQemuMicrovm::initTestCase()
{
    if (QemuCommand::findQemu().isEmpty())
        QFAIL("qemu-system-x86_64 is missing: apt-get install qemu-system-x86");
    auto image =
        ImageStore(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE)).find(QStringLiteral("default"));
    QVERIFY_RESULT(image);
    m_image = *image;

    // Like the helper: a system user without login or home runs the VMMs.
    if (::geteuid() == 0) {
        if (!::getpwnam("airlock-vmm")) {
            const int rc = QProcess::execute(
                QStringLiteral("useradd"),
                {QStringLiteral("--system"), QStringLiteral("--no-create-home"),
                 QStringLiteral("--shell"), QStringLiteral("/usr/sbin/nologin"), kVmmUser});
            // 9: created concurrently by another test.
            QVERIFY2(rc == 0 || rc == 9, "useradd airlock-vmm failed");
        }
        const passwd *user = ::getpwnam("airlock-vmm");
        QVERIFY(user);
        m_vmmUid = user->pw_uid;
        m_vmmGid = user->pw_gid;
    }
}

void TestQemuMicrovm::cleanupTestCase()
{
    m_vmm.reset();
    // A failed check may have left guests running; they are ours to end.
    for (const qint64 pid : std::as_const(m_started)) {
        if (processAlive(pid)) {
            ::kill(pid_t(pid), SIGKILL);
            ::waitpid(pid_t(pid), nullptr, 0);
        }
    }
}

VmmLaunchConfig TestQemuMicrovm::launchConfig(const QString &name, const QString &runDir) const
{
    VmmLaunchConfig config;
    config.sandboxName = name;
    config.vcpus = 1;
    config.memoryMib = 256;
    config.kernelPath = m_image.kernelPath;
    config.initrdPath = m_image.initrdPath;
    config.kernelArgs = m_image.kernelArgs;
    config.runtimeDir = runDir;
    config.acceleration = Acceleration::Tcg;
    config.vmmUid = m_vmmUid;
    config.vmmGid = m_vmmGid;
    return config;
}

std::unique_ptr<QTemporaryDir> TestQemuMicrovm::makeRunDir() const
{
    // What the helper does: a private directory owned by the VMM user.
    auto dir =
        std::make_unique<QTemporaryDir>(QDir::temp().filePath(QStringLiteral("tst-vmm-XXXXXX")));
    if (!dir->isValid())
        return nullptr;
    const QByteArray path = QFile::encodeName(dir->path());
    if (::chown(path.constData(), m_vmmUid, m_vmmGid) != 0 || ::chmod(path.constData(), 0700) != 0)
        return nullptr;
    return dir;
}

void TestQemuMicrovm::watch(QemuMicrovm *vmm)
{
    connect(vmm, &Vmm::consoleOutput, this,
            [this](const QByteArray &bytes) { m_console += bytes; });
}

bool TestQemuMicrovm::waitForConsole(const QByteArray &needle, int timeoutMs)
{
    qsizetype at = -1;
    if (QTest::qWaitFor([&] { return (at = m_console.indexOf(needle, m_mark)) >= 0; }, timeoutMs)) {
        m_mark = at + needle.size();
        return true;
    }
    qWarning("console did not show %s; it ends with:\n%s", needle.constData(),
             m_console.right(600).constData());
    return false;
}

Result<void> TestQemuMicrovm::adoptAndWait(QemuMicrovm &vmm, const VmmRuntimeInfo &info)
{
    std::optional<Result<void>> answer;
    vmm.adopt(info, [&answer](const Result<void> &adopted) { answer = adopted; });
    // Bounded by adopt's own deadline (10 s); the wait only lets the event loop run.
    if (!QTest::qWaitFor([&] { return answer.has_value(); }, 20000))
        return fail(ErrorKind::Timeout, QStringLiteral("adopt() never answered"));
    return *answer;
}

bool TestQemuMicrovm::processAlive(qint64 pid)
{
    const auto state = VmmProcess::readState(pid_t(pid));
    return state && *state != 'Z';
}

void TestQemuMicrovm::imageStoreFindsDefault()
{
    const ImageStore store(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
    const QList<GuestImage> images = store.list();
    const auto it = std::find_if(images.begin(), images.end(),
                                 [](const GuestImage &i) { return i.id == u"default"; });
    QVERIFY(it != images.end());
    QVERIFY(QFileInfo(it->kernelPath).isAbsolute());
    QCOMPARE(QFileInfo(it->kernelPath).fileName(), QStringLiteral("vmlinux"));
    QVERIFY(it->createdAt.isValid());
    // Clients see file names only, never host paths.
    const QJsonObject json = it->toJson();
    QCOMPARE(json.value(QStringLiteral("kernel")).toString(), QStringLiteral("vmlinux"));
    QVERIFY(!QJsonDocument(json).toJson().contains(AIRLOCK_TEST_IMAGE_STORE));
}

void TestQemuMicrovm::imageStoreRejects_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<int>("kind");
    QTest::newRow("unknown") << QStringLiteral("no-such-image") << int(ErrorKind::NotFound);
    QTest::newRow("upper case") << QStringLiteral("Default") << int(ErrorKind::InvalidName);
    QTest::newRow("parent dir") << QStringLiteral("..") << int(ErrorKind::InvalidName);
    QTest::newRow("path") << QStringLiteral("../images/default") << int(ErrorKind::InvalidName);
    QTest::newRow("absolute") << QStringLiteral("/etc") << int(ErrorKind::InvalidName);
    QTest::newRow("empty") << QString() << int(ErrorKind::InvalidName);
}

void TestQemuMicrovm::imageStoreRejects()
{
    QFETCH(QString, id);
    QFETCH(int, kind);
    const auto image = ImageStore(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE)).find(id);
    QVERIFY(!image);
    QCOMPARE(int(image.error().kind), kind);
}

void TestQemuMicrovm::kvmProbeFallsBackToTcg_data()
{
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("mentions");
    // This machine has no /dev/kvm; if one appears, its probe boot must still decide.
    if (!QFile::exists(QStringLiteral("/dev/kvm")))
        QTest::newRow("no device")
            << QStringLiteral("/dev/kvm") << QStringLiteral("/dev/kvm is missing");
    QTest::newRow("missing device")
        << QStringLiteral("/nonexistent/kvm") << QStringLiteral("/nonexistent/kvm is missing");
    // Opens fine but is no KVM: the probe guest must fail to boot, as nested KVM does here.
    QTest::newRow("probe boot fails") << QStringLiteral("/dev/null") << QStringLiteral("probe");
}

void TestQemuMicrovm::kvmProbeFallsBackToTcg()
{
    QFETCH(QString, device);
    QFETCH(QString, mentions);
    KvmProbe::Config config;
    config.kernelPath = m_image.kernelPath;
    config.kvmDevice = device;
    config.vmmUid = m_vmmUid;
    config.vmmGid = m_vmmGid;
    const KvmProbeResult result = KvmProbe::run(config);
    QCOMPARE(int(result.acceleration), int(Acceleration::Tcg));
    QVERIFY2(result.warning.contains(mentions), qPrintable(result.warning));
    QVERIFY2(result.warning.contains(QStringLiteral("software emulation (TCG)")),
             qPrintable(result.warning));
}

void TestQemuMicrovm::startRefusesMissingImageFiles()
{
    auto run = makeRunDir();
    QVERIFY(run);
    VmmLaunchConfig config = launchConfig(QStringLiteral("no-kernel"), run->path());
    config.kernelPath = run->filePath(QStringLiteral("vmlinux"));
    QemuMicrovm vmm;
    const auto started = startAndWait(vmm, config);
    QVERIFY(!started);
    QCOMPARE(int(started.error().kind), int(ErrorKind::BackendUnavailable));

    config = launchConfig(QStringLiteral("Bad Name"), run->path());
    const auto badName = startAndWait(vmm, config);
    QVERIFY(!badName);
    QCOMPARE(int(badName.error().kind), int(ErrorKind::InvalidName));
}

void TestQemuMicrovm::startReportsQemuErrors()
{
    // QEMU itself refuses this: more vCPUs than microvm's limit. start() must say why (from
    // qemu.log) and leave no process behind.
    auto run = makeRunDir();
    QVERIFY(run);
    VmmLaunchConfig config = launchConfig(QStringLiteral("too-many-cpus"), run->path());
    config.vcpus = 4096;
    QemuMicrovm vmm;
    const auto started = startAndWait(vmm, config);
    QVERIFY(!started);
    QCOMPARE(int(started.error().kind), int(ErrorKind::OperationFailed));
    QVERIFY2(started.error().message.contains(QStringLiteral("status 1")),
             qPrintable(started.error().message));
    QVERIFY2(started.error().message.contains(QStringLiteral("qemu-system-x86_64:")),
             qPrintable(started.error().message));
    QVERIFY(!vmm.isRunning());
}

void TestQemuMicrovm::unexpectedKillIsReported()
{
    auto run = makeRunDir();
    QVERIFY(run);
    QemuMicrovm vmm;
    const auto started =
        startAndWait(vmm, launchConfig(QStringLiteral("killed-outside"), run->path()));
    QVERIFY_RESULT(started);
    m_guard.add(pid_t(started->pid));
    m_started.append(started->pid);
    QSignalSpy exited(&vmm, &Vmm::exited);
    QCOMPARE(::kill(pid_t(started->pid), SIGKILL), 0);
    QVERIFY(exited.wait(10000));
    const QString reason = exited.first().first().toString();
    QVERIFY2(reason.contains(QStringLiteral("killed by signal 9")), qPrintable(reason));
    QVERIFY(!processAlive(started->pid));
}

void TestQemuMicrovm::bootsToReadyLineAsVmmUser()
{
    m_runDir = makeRunDir();
    QVERIFY(m_runDir);
    m_vmm = std::make_unique<QemuMicrovm>();
    watch(m_vmm.get());
    QElapsedTimer boot;
    boot.start();
    const auto started =
        startAndWait(*m_vmm, launchConfig(QStringLiteral("tst-guest"), m_runDir->path()));
    QVERIFY_RESULT(started);
    m_info = *started;
    m_guard.add(pid_t(m_info.pid));
    m_started.append(m_info.pid);
    QVERIFY(m_info.startTimeTicks > 0);
    QCOMPARE(m_info.startTimeTicks, VmmProcess::readStartTime(pid_t(m_info.pid)).value_or(-1));

    // The VMM runs as the unprivileged user, confined by seccomp (-sandbox on).
    QFile status(QStringLiteral("/proc/%1/status").arg(m_info.pid));
    QVERIFY(status.open(QIODevice::ReadOnly));
    const QByteArray text = status.readAll();
    const QByteArray uid = QByteArray::number(m_vmmUid);
    QVERIFY2(text.contains("Uid:\t" + uid + '\t' + uid + '\t' + uid + '\t' + uid),
             text.constData());
    QVERIFY2(text.contains("Seccomp:\t2"), text.constData());
    // Its own autogroup, weighted below the helper's (sched(7)): "/autogroup-N nice 10".
    QFile autogroup(QStringLiteral("/proc/%1/autogroup").arg(m_info.pid));
    if (autogroup.open(QIODevice::ReadOnly)) {
        const QByteArray line = autogroup.readAll().trimmed();
        QVERIFY2(line.endsWith(" nice " + QByteArray::number(kGuestAutogroupNice)),
                 line.constData());
    }

    QVERIFY(waitForConsole("airlock-guest ready", kBootTimeoutMs));
    qInfo("ready line after %lld ms", boot.elapsed());
    QVERIFY(QFile::exists(QDir(m_runDir->path()).filePath(QStringLiteral("qemu.pid"))));
}

void TestQemuMicrovm::consoleRunsCommands()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    m_vmm->writeConsole("echo $((6*7))\n");
    // The echoed command line holds "$((6*7))", so only the shell's answer matches.
    QVERIFY(waitForConsole("\n42\r\n", 20000));
}

void TestQemuMicrovm::hostnameIsSandboxName()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    m_vmm->writeConsole("hostname; tty\n");
    QVERIFY(waitForConsole("\ntst-guest\r\n/dev/ttyS0\r\n", 20000));
}

void TestQemuMicrovm::shellHasJobControl()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    // ash turns "monitor" (job control) off when the console is not its controlling tty.
    // `$-` holds `m` in monitor mode. The quotes keep the echoed command from matching.
    m_vmm->writeConsole("case $- in *m*) echo jc-\"on\";; *) echo jc-\"off\";; esac\n");
    QVERIFY(waitForConsole("\njc-", 20000));
    QVERIFY2(m_console.mid(m_mark).startsWith("on\r\n"), m_console.mid(m_mark).constData());
}

void TestQemuMicrovm::adoptRejectsRecycledPid()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    QemuMicrovm other;
    VmmRuntimeInfo wrong = m_info;
    wrong.startTimeTicks += 1;
    const auto adopted = adoptAndWait(other, wrong);
    QVERIFY(!adopted);
    QCOMPARE(int(adopted.error().kind), int(ErrorKind::NotFound));
    QVERIFY(processAlive(m_info.pid));
}

void TestQemuMicrovm::adoptReconnectsConsole()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    // A helper restart: the object goes away, the VMM must not (the adopted console answers
    // below, after the symlink check).
    m_vmm.reset();
    QVERIFY(processAlive(m_info.pid));

    // The runtime directory belongs to the VMM user: a socket swapped for a symlink (here to
    // the real socket, elsewhere perhaps to a root-only one) is refused, not followed.
    const QDir run(m_runDir->path());
    const QString qmp = run.filePath(QStringLiteral("qmp.sock"));
    const QString moved = run.filePath(QStringLiteral("qmp.sock.real"));
    QVERIFY(QFile::rename(qmp, moved));
    QVERIFY(QFile::link(moved, qmp));
    {
        QemuMicrovm fooled;
        const auto refused = adoptAndWait(fooled, m_info);
        QFile::remove(qmp);
        QVERIFY(QFile::rename(moved, qmp));
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(QStringLiteral("not a socket")),
                 qPrintable(refused.error().message));
    }

    m_vmm = std::make_unique<QemuMicrovm>();
    watch(m_vmm.get());
    const auto adopted = adoptAndWait(*m_vmm, m_info);
    QVERIFY_RESULT(adopted);
    QCOMPARE(m_vmm->runtimeInfo().pid, m_info.pid);
    m_vmm->writeConsole("echo adopted-$((6*7))\n");
    QVERIFY(waitForConsole("\nadopted-42\r\n", 20000));
}

void TestQemuMicrovm::stopPowersOffGracefully()
{
    QVERIFY(m_vmm && m_vmm->isRunning());
    QSignalSpy exited(m_vmm.get(), &Vmm::exited);
    // A long timeout: the guest must go down by itself (the power-off below), not by quit or
    // SIGKILL at the end of the 60 s.
    m_vmm->stop(60000);
    QVERIFY(exited.wait(30000));
    QCOMPARE(exited.first().first().toString(), QString()); // requested, so no reason
    // The guest's own power-off path ran (acpid -> poweroff -> ACPI S5).
    QVERIFY2(m_console.contains("reboot: Power down"), m_console.right(600).constData());
    QVERIFY(!m_vmm->isRunning());
    QVERIFY(!processAlive(m_info.pid));
    QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(m_info.pid)));
}

void TestQemuMicrovm::guestPoweroffIsReported()
{
    auto run = makeRunDir();
    QVERIFY(run);
    QemuMicrovm vmm;
    watch(&vmm);
    m_mark = m_console.size();
    const auto started = startAndWait(vmm, launchConfig(QStringLiteral("powers-off"), run->path()));
    QVERIFY_RESULT(started);
    m_guard.add(pid_t(started->pid));
    m_started.append(started->pid);
    QSignalSpy exited(&vmm, &Vmm::exited);
    QVERIFY(waitForConsole("airlock-guest ready", kBootTimeoutMs));
    vmm.writeConsole("poweroff\n");
    QVERIFY(exited.wait(30000));
    QCOMPARE(exited.first().first().toString(), QStringLiteral("guest powered off"));
    QVERIFY(!processAlive(started->pid));
}

QTEST_GUILESS_MAIN(TestQemuMicrovm)
#include "tst_qemumicrovm.moc"
