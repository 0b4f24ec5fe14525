// CrashRecovery::killOrphanVmm with a Firecracker-shaped runtime directory and a real process
// standing in for Firecracker: the VMM a helper killed during its start never recorded is
// found through RUNDIR/firecracker.pid and killed, and only when pid, start time, owner and
// runtime directory all match (a recycled pid, a planted file or a stranger's process is left
// alone). Needs root (the stand-in runs as a VMM uid).

#include "core/daemon/crashrecovery.h"
#include "core/daemon/guestmemory.h"
#include "core/daemon/runtimedirectory.h"
#include "core/daemon/sandboxdisks.h"
#include "core/vmm/firecrackervmm.h"
#include "core/vmm/vmmprocess.h"

#include <QDir>
#include <QFile>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace airlock;

namespace {
constexpr uid_t kVmmUid = 64991; // no such user: a uid of its own, as a VMM's
constexpr gid_t kVmmGid = 64991;
const QString kName = QStringLiteral("fc-orphan");

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// Whether `pid` still runs and no SIGKILL waits for it: it was not signalled (a sent SIGKILL
/// is pending until the process is gone, so this needs no waiting).
bool runsUnsignalled(pid_t pid)
{
    const auto state = VmmProcess::readState(pid);
    if (!state || *state == 'Z' || *state == 'X')
        return false;
    for (const QByteArray &line : readAll(QStringLiteral("/proc/%1/status").arg(pid)).split('\n')) {
        if (line.startsWith("ShdPnd:") || line.startsWith("SigPnd:")) {
            const quint64 mask = line.mid(7).trimmed().toULongLong(nullptr, 16);
            if (mask & (quint64(1) << (SIGKILL - 1)))
                return false;
        }
    }
    return true;
}
} // namespace

class TestCrashRecovery : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_state;
    std::unique_ptr<RuntimeDirectory> m_runtime;
    std::unique_ptr<GuestMemory> m_memory;
    std::unique_ptr<SandboxDisks> m_disks;
    std::unique_ptr<CrashRecovery> m_recovery;
    QString m_run;

    /// The system's python3: one under /root (pyenv) is not the VMM uid's to run.
    static QString python()
    {
        return QStandardPaths::findExecutable(QStringLiteral("python3"),
                                              {QStringLiteral("/usr/bin"), QStringLiteral("/bin")});
    }

    /// A process standing in for Firecracker: unjailed, its command line names the API socket
    /// in the runtime directory as Firecracker's does (`--api-sock RUNDIR/firecracker.sock`).
    pid_t spawnStandIn(uid_t uid, gid_t gid)
    {
        auto pid = VmmProcess::spawn(
            {python(), QStringLiteral("-c"), QStringLiteral("import time; time.sleep(300)"),
             QStringLiteral("--api-sock"), QDir(m_run).filePath(QStringLiteral("firecracker.sock")),
             QStringLiteral("--id"), kName},
            m_state.filePath(QStringLiteral("stand-in.log")), VmmCredentials {uid, gid, {gid}});
        if (!pid)
            qWarning("cannot start the stand-in: %s", qPrintable(pid.error().message));
        return pid ? *pid : 0;
    }

    /// RUNDIR/firecracker.pid as FirecrackerVmm writes it (root's, 0644).
    void writePidFile(const QByteArray &content)
    {
        const QString path = QDir(m_run).filePath(FirecrackerVmm::kPidFile.toString());
        QFile::remove(path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
        file.close();
        QVERIFY(file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                    | QFileDevice::ReadGroup | QFileDevice::ReadOther));
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("the stand-in runs as a VMM uid: needs root");
        if (python().isEmpty())
            QSKIP("/usr/bin/python3 stands in for Firecracker");
        QVERIFY(m_state.isValid());
        m_runtime = std::make_unique<RuntimeDirectory>(m_state.path());
        QVERIFY(m_runtime->prepareRoot());
        m_memory = std::make_unique<GuestMemory>(m_state.filePath(QStringLiteral("memory")),
                                                 m_state.path());
        m_disks = std::make_unique<SandboxDisks>(m_state.path());
        m_recovery = std::make_unique<CrashRecovery>(m_state.path(), QStringLiteral("test"),
                                                     *m_runtime, *m_memory, *m_disks);
        auto run = m_runtime->prepare(kName, kVmmUid, kVmmGid);
        QVERIFY(run);
        m_run = *run;
    }

    void aPlantedFifoOrLinkIsNotOpened()
    {
        // The VMM user owns RUNDIR: a FIFO in a pid file's place must not hang the helper's
        // start (and every start after it), a link must not make root open another file
        // (docs/reviews/2026-12-08-firecracker-jail.md#f1).
        const QByteArray qemuPid =
            QFile::encodeName(QDir(m_run).filePath(QStringLiteral("qemu.pid")));
        const QByteArray firecrackerPid =
            QFile::encodeName(QDir(m_run).filePath(FirecrackerVmm::kPidFile.toString()));
        ::unlink(qemuPid.constData());
        ::unlink(firecrackerPid.constData());
        QCOMPARE(::mkfifo(qemuPid.constData(), 0644), 0);
        QCOMPARE(::mkfifo(firecrackerPid.constData(), 0644), 0);
        const auto removeThem = qScopeGuard([&] {
            ::unlink(qemuPid.constData());
            ::unlink(firecrackerPid.constData());
        });
        std::atomic_bool returned {false};
        std::thread recovery([&] {
            m_recovery->killOrphanVmm(kName, true);
            returned = true;
        });
        // A blocked open never returns: the thread is then left behind, and the test fails
        // instead of hanging.
        const bool done = QTest::qWaitFor([&] { return returned.load(); }, 5000);
        if (!done) {
            recovery.detach();
            QFAIL("killOrphanVmm blocked on a FIFO in RUNDIR");
        }
        recovery.join();
        // A link to a pid file elsewhere: not followed.
        ::unlink(qemuPid.constData());
        QCOMPARE(::symlink("/proc/self/stat", qemuPid.constData()), 0);
        m_recovery->killOrphanVmm(kName, true);
    }

    void firecrackerOrphansAreKilledOnlyWhenEverythingMatches()
    {
        const pid_t standIn = spawnStandIn(kVmmUid, kVmmGid);
        QVERIFY(standIn > 0);
        VmmProcess watched;
        QVERIFY(watched.watch(standIn));
        const auto cleanup = qScopeGuard([&] {
            watched.sendSignal(SIGKILL);
            watched.waitForExit(5000);
        });
        const qint64 start = watched.startTimeTicks();
        QVERIFY(start > 0);
        const QByteArray pid = QByteArray::number(standIn);

        // A recycled pid: the start time the helper recorded is not this process's.
        writePidFile(pid + ' ' + QByteArray::number(start + 1) + '\n');
        m_recovery->killOrphanVmm(kName, /*wait=*/true);
        QVERIFY(runsUnsignalled(standIn));

        // No start time (a QEMU-style file in Firecracker's name): not believed.
        writePidFile(pid + '\n');
        m_recovery->killOrphanVmm(kName, true);
        QVERIFY(runsUnsignalled(standIn));

        // The right content, but the VMM user's file (it owns the directory): not believed.
        writePidFile(pid + ' ' + QByteArray::number(start) + '\n');
        const QString pidPath = QDir(m_run).filePath(FirecrackerVmm::kPidFile.toString());
        QCOMPARE(::chown(QFile::encodeName(pidPath).constData(), kVmmUid, kVmmGid), 0);
        m_recovery->killOrphanVmm(kName, true);
        QVERIFY(runsUnsignalled(standIn));

        // A link to a file root wrote elsewhere: never followed.
        const QString elsewhere = m_state.filePath(QStringLiteral("elsewhere.pid"));
        {
            QFile file(elsewhere);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(pid + ' ' + QByteArray::number(start) + '\n');
        }
        QFile::remove(pidPath);
        QVERIFY(QFile::link(elsewhere, pidPath));
        m_recovery->killOrphanVmm(kName, true);
        QVERIFY(runsUnsignalled(standIn));

        // Everything matches: killed, and gone when killOrphanVmm returns.
        writePidFile(pid + ' ' + QByteArray::number(start) + '\n');
        m_recovery->killOrphanVmm(kName, true);
        QVERIFY(watched.hasExited());
        QVERIFY(!QFile::exists(pidPath));
    }

    void aStrangersProcessIsLeftAlone()
    {
        // The right pid and start time, but not the VMM user's process (here root's).
        const pid_t stranger = spawnStandIn(0, 0);
        QVERIFY(stranger > 0);
        VmmProcess watched;
        QVERIFY(watched.watch(stranger));
        const auto cleanup = qScopeGuard([&] {
            watched.sendSignal(SIGKILL);
            watched.waitForExit(5000);
        });
        writePidFile(QByteArray::number(stranger) + ' '
                     + QByteArray::number(watched.startTimeTicks()) + '\n');
        m_recovery->killOrphanVmm(kName, true);
        QVERIFY(runsUnsignalled(stranger));
    }
};

QTEST_GUILESS_MAIN(TestCrashRecovery)
#include "tst_crashrecovery.moc"
