// VmmCgroup: which hierarchy a host offers (from mount tables written here), and a real group on
// this host's hierarchy (v1 or v2, whichever it has; skipped without one or without root): its
// limits, a process attached to it, removal only once it is empty, and the leftover sweep.
#include "core/vmm/vmmcgroup.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::VmmCgroup;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

/// A child that waits until its stdin pipe closes (it then exits).
pid_t startWaitingChild(int &writeEnd)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[1]);
        char byte;
        while (::read(fds[0], &byte, 1) > 0) { }
        ::_exit(0);
    }
    ::close(fds[0]);
    writeEnd = fds[1];
    return pid;
}

} // namespace

class TestVmmCgroup : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString mounts(const QByteArray &table)
    {
        static int count = 0;
        const QString path = m_dir.filePath(QStringLiteral("mounts-%1").arg(++count));
        return writeFile(path, table) ? path : QString();
    }

private Q_SLOTS:
    void limitsFollowTheGuest()
    {
        const VmmCgroup::Limits limits = VmmCgroup::firecrackerLimits(2, 256);
        QCOMPARE(limits.memoryBytes, qint64(2 * 256 + VmmCgroup::kVmmOverheadMib) * 1024 * 1024);
        QCOMPARE(limits.maxTasks, 2 + VmmCgroup::kExtraTasks);
        QCOMPARE(limits.cpus, 2);
        QCOMPARE(VmmCgroup::firecrackerLimits(0, 0).cpus, 1);
    }

    void v2WithTheControllersWins()
    {
        const QString v2 = m_dir.filePath(QStringLiteral("v2"));
        QVERIFY(QDir().mkpath(v2));
        QVERIFY(writeFile(v2 + QStringLiteral("/cgroup.controllers"),
                          "cpuset cpu io memory hugetlb pids rdma\n"));
        const auto found = VmmCgroup::findHierarchy(
            mounts("cgroup /x/memory cgroup rw,memory 0 0\ncgroup2 " + QFile::encodeName(v2)
                   + " cgroup2 rw,nsdelegate 0 0\n"));
        QVERIFY(found);
        QCOMPARE(found->version, VmmCgroup::Version::V2);
        QCOMPARE(found->memory, v2 + QStringLiteral("/airlock"));
        QCOMPARE(found->parents(), QStringList {v2 + QStringLiteral("/airlock")});
    }

    void v1WhenTheUnifiedMountHasNoControllers()
    {
        // This machine's layout: a v2 mount at /sys/fs/cgroup/unified with no controllers.
        const QString unified = m_dir.filePath(QStringLiteral("unified"));
        QVERIFY(QDir().mkpath(unified));
        QVERIFY(writeFile(unified + QStringLiteral("/cgroup.controllers"), "\n"));
        const auto found = VmmCgroup::findHierarchy(
            mounts("cgroup /c/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n"
                   "cgroup /c/cpuset cgroup rw,relatime,cpuset 0 0\n"
                   "cgroup /c/memory cgroup rw,relatime,memory 0 0\n"
                   "cgroup /c/pids cgroup rw,relatime,pids 0 0\n"
                   "cgroup2 "
                   + QFile::encodeName(unified) + " cgroup2 rw,relatime 0 0\n"));
        QVERIFY(found);
        QCOMPARE(found->version, VmmCgroup::Version::V1);
        QCOMPARE(found->memory, QStringLiteral("/c/memory/airlock"));
        QCOMPARE(found->pids, QStringLiteral("/c/pids/airlock"));
        QCOMPARE(found->cpu, QStringLiteral("/c/cpu,cpuacct/airlock"));
    }

    void noHierarchyMeansNoGroup()
    {
        // v1 without pids, and no v2: the VMM runs without a group, and the caller says so.
        const QString table = mounts("cgroup /c/memory cgroup rw,memory 0 0\n"
                                     "cgroup /c/cpu cgroup rw,cpu 0 0\n");
        QVERIFY(!VmmCgroup::findHierarchy(table));
        const auto made = VmmCgroup::create(QStringLiteral("x.1"), {}, table);
        QVERIFY(!made);
        QCOMPARE(made.error().kind, ErrorKind::BackendUnavailable);
        QCOMPARE(VmmCgroup::removeLeftovers(table), 0);
    }

    void aRefusedControllerLeavesNothing()
    {
        // A directory that is no cgroup file system: the controllers cannot be enabled.
        const QString v2 = m_dir.filePath(QStringLiteral("fake-v2"));
        QVERIFY(QDir().mkpath(v2));
        QVERIFY(writeFile(v2 + QStringLiteral("/cgroup.controllers"), "cpu memory pids\n"));
        const QString table = mounts("cgroup2 " + QFile::encodeName(v2) + " cgroup2 rw 0 0\n");
        const auto made =
            VmmCgroup::create(QStringLiteral("x.1"), VmmCgroup::firecrackerLimits(1, 128), table);
        QVERIFY(!made);
        QCOMPARE(made.error().kind, ErrorKind::BackendUnavailable);
        QVERIFY2(made.error().message.contains(QStringLiteral("cgroup.subtree_control")),
                 qPrintable(made.error().message));
        QVERIFY(!QFileInfo::exists(v2 + QStringLiteral("/airlock/x.1")));
    }

    void aRealGroupOnThisHost()
    {
        if (::geteuid() != 0)
            QSKIP("making a cgroup needs root");
        const auto hierarchy = VmmCgroup::findHierarchy();
        if (!hierarchy)
            QSKIP("this host has no cgroup hierarchy with the memory, pids and cpu controllers");
        const QString name = QStringLiteral("tst-vmmcgroup.%1").arg(::getpid());
        const VmmCgroup::Limits limits = VmmCgroup::firecrackerLimits(3, 128);
        auto made = VmmCgroup::create(name, limits);
        QVERIFY2(made, qPrintable(made ? QString() : made.error().message));
        const VmmCgroup group = *made;
        QCOMPARE(group.version(), hierarchy->version);
        QCOMPARE(group.path(), QStringLiteral("/airlock/") + name);
        const QString memory = group.directory(QStringLiteral("memory"));
        const QString pids = group.directory(QStringLiteral("pids"));
        const QString cpu = group.directory(QStringLiteral("cpu"));
        QCOMPARE(readAll(pids + QStringLiteral("/pids.max")), QByteArray::number(3 + 32));
        if (group.version() == VmmCgroup::Version::V2) {
            QCOMPARE(readAll(memory + QStringLiteral("/memory.max")),
                     QByteArray::number(limits.memoryBytes));
            QCOMPARE(readAll(cpu + QStringLiteral("/cpu.max")), QByteArray("300000 100000"));
        } else {
            QCOMPARE(readAll(memory + QStringLiteral("/memory.limit_in_bytes")),
                     QByteArray::number(limits.memoryBytes));
            QCOMPARE(readAll(cpu + QStringLiteral("/cpu.cfs_period_us")), QByteArray("100000"));
            QCOMPARE(readAll(cpu + QStringLiteral("/cpu.cfs_quota_us")), QByteArray("300000"));
        }

        int release = -1;
        const pid_t child = startWaitingChild(release);
        QVERIFY(child > 0);
        auto attached = group.attach(child);
        QVERIFY2(attached, qPrintable(attached ? QString() : attached.error().message));
        for (const QString &dir : group.directories())
            QVERIFY(readAll(dir + QStringLiteral("/cgroup.procs"))
                        .split('\n')
                        .contains(QByteArray::number(child)));
        // What an adopting helper finds from /proc/PID/cgroup.
        const auto adopted = VmmCgroup::ofProcess(child);
        QVERIFY(adopted);
        QCOMPARE(adopted->directories(), group.directories());
        QVERIFY(!VmmCgroup::ofProcess(::getpid()));
        // A group in use stays, and the sweep leaves it alone.
        QVERIFY(!group.remove());
        VmmCgroup::removeLeftovers();
        QVERIFY(QFileInfo::exists(memory));

        ::close(release);
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(group.remove());
        for (const QString &dir : group.directories())
            QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
        QVERIFY(group.remove()); // nothing left is not an error
    }

    void theSweepRemovesOnlyLeftovers()
    {
        if (::geteuid() != 0)
            QSKIP("making a cgroup needs root");
        if (!VmmCgroup::findHierarchy())
            QSKIP("this host has no cgroup hierarchy with the memory, pids and cpu controllers");
        // A group named for a pid that is gone (its helper crashed), and one for a live pid:
        // another helper is between making it and moving its VMM in.
        int release = -1;
        const pid_t gone = startWaitingChild(release);
        ::close(release);
        int status = 0;
        QCOMPARE(::waitpid(gone, &status, 0), gone);
        const QString leftoverName = QStringLiteral("tst-leftover.%1").arg(gone);
        const QString liveName = QStringLiteral("tst-live.%1").arg(::getpid());
        auto leftover = VmmCgroup::create(leftoverName, VmmCgroup::firecrackerLimits(1, 64));
        auto live = VmmCgroup::create(liveName, VmmCgroup::firecrackerLimits(1, 64));
        QVERIFY(leftover && live);
        QVERIFY(VmmCgroup::removeLeftovers() >= int(leftover->directories().size()));
        for (const QString &dir : leftover->directories())
            QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
        for (const QString &dir : live->directories())
            QVERIFY2(QFileInfo::exists(dir), qPrintable(dir));
        QVERIFY(live->remove());
    }
};

QTEST_GUILESS_MAIN(TestVmmCgroup)
#include "tst_vmmcgroup.moc"
