#include "core/daemon/guestmemory.h"
#include "resultcheck.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::GuestMemory;

class TestGuestMemory : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void defaultDirIsPerStateDir();
    void pathsAreNamedAfterTheSandbox();
    void createMakesASparseFileOfTheSize();
    void createReplacesTheInode();
    void capacityRefusesMoreThanTheHostHas();
    void capacityCountsMemAvailable();
    void ceilingIsMemTotalOrTheFileSystem();
    void removeTakesTheDirWithTheLastFile();
    void removeStaleKeepsLiveGuestsAndCaches();

private:
    QTemporaryDir m_tmp;
    QString dir(const QString &name) const { return m_tmp.filePath(name); }
};

void TestGuestMemory::defaultDirIsPerStateDir()
{
    const GuestMemory a(QString(), QStringLiteral("/var/lib/airlock"));
    const GuestMemory b(QString(), QStringLiteral("/var/lib/airlock-test"));
    QVERIFY2(a.dir().startsWith(QStringLiteral("/dev/shm/airlock-")), qPrintable(a.dir()));
    QCOMPARE(a.dir().size(), QStringLiteral("/dev/shm/airlock-").size() + 12);
    QVERIFY(a.dir() != b.dir());
    QCOMPARE(GuestMemory(QString(), QStringLiteral("/var/lib/airlock")).dir(), a.dir());
    QCOMPARE(GuestMemory(dir(QStringLiteral("ram")), QStringLiteral("/x")).dir(),
             dir(QStringLiteral("ram")));
}

void TestGuestMemory::pathsAreNamedAfterTheSandbox()
{
    const GuestMemory memory(dir(QStringLiteral("ram")), QStringLiteral("/x"));
    QCOMPARE(memory.pathFor(QStringLiteral("dev")), dir(QStringLiteral("ram/dev.ram")));
}

void TestGuestMemory::createMakesASparseFileOfTheSize()
{
    if (::geteuid() != 0)
        QSKIP("the directory is made root's (chown 0)");
    const GuestMemory memory(dir(QStringLiteral("sparse")), QStringLiteral("/x"));
    const auto fd = memory.create(QStringLiteral("dev"), 64);
    QVERIFY_RESULT(fd);
    struct stat info
    {
    };
    QCOMPARE(::fstat(*fd, &info), 0);
    ::close(*fd);
    QCOMPARE(qint64(info.st_size), qint64(64) * 1024 * 1024);
    QVERIFY(qint64(info.st_blocks) * 512 < qint64(1024) * 1024);
    QCOMPARE(info.st_mode & 07777, mode_t(0600));
    struct stat dirInfo
    {
    };
    QCOMPARE(::stat(QFile::encodeName(memory.dir()).constData(), &dirInfo), 0);
    QCOMPARE(dirInfo.st_mode & 07777, mode_t(0711));
    QCOMPARE(dirInfo.st_uid, uid_t(0));
}

void TestGuestMemory::createReplacesTheInode()
{
    if (::geteuid() != 0)
        QSKIP("the directory is made root's (chown 0)");
    const GuestMemory memory(dir(QStringLiteral("inode")), QStringLiteral("/x"));
    const auto first = memory.create(QStringLiteral("dev"), 1);
    QVERIFY_RESULT(first);
    struct stat a
    {
    };
    ::fstat(*first, &a);
    const auto second = memory.create(QStringLiteral("dev"), 1);
    QVERIFY_RESULT(second);
    struct stat b
    {
    };
    ::fstat(*second, &b);
    ::close(*first);
    ::close(*second);
    // A VMM still dying keeps its mapping of the old file.
    QVERIFY(a.st_ino != b.st_ino);
}

void TestGuestMemory::capacityRefusesMoreThanTheHostHas()
{
    QVERIFY(QDir().mkpath(dir(QStringLiteral("room"))));
    const GuestMemory memory(dir(QStringLiteral("room")), QStringLiteral("/x"));
    const auto refused = memory.checkCapacity(QStringLiteral("huge"), 1 << 30);
    QVERIFY(!refused);
    QCOMPARE(int(refused.error().kind), int(ErrorKind::BackendUnavailable));
    QVERIFY2(refused.error().message.contains(QStringLiteral("huge")),
             qPrintable(refused.error().message));
    QVERIFY_RESULT(memory.checkCapacity(QStringLiteral("small"), 1));
}

void TestGuestMemory::capacityCountsMemAvailable()
{
    QVERIFY(QDir().mkpath(dir(QStringLiteral("meminfo"))));
    QFile meminfo(dir(QStringLiteral("meminfo/meminfo")));
    QVERIFY(meminfo.open(QIODevice::WriteOnly));
    meminfo.write("MemTotal:        8000000 kB\nMemAvailable:      10240 kB\n");
    meminfo.close();
    const GuestMemory memory(dir(QStringLiteral("meminfo")), QStringLiteral("/x"));
    const auto refused = memory.checkCapacity(QStringLiteral("dev"), 11, meminfo.fileName());
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("MemAvailable")),
             qPrintable(refused.error().message));
    QVERIFY2(refused.error().message.contains(QStringLiteral("only 10 MiB")),
             qPrintable(refused.error().message));
    QVERIFY_RESULT(memory.checkCapacity(QStringLiteral("dev"), 10, meminfo.fileName()));
}

void TestGuestMemory::ceilingIsMemTotalOrTheFileSystem()
{
    // What create refuses: more than the host could ever back, with the host's figure. The
    // directory does not exist yet (made by the first guest): its parent's file system counts.
    QVERIFY(QDir().mkpath(dir(QStringLiteral("ceiling"))));
    QFile meminfo(dir(QStringLiteral("ceiling/meminfo")));
    QVERIFY(meminfo.open(QIODevice::WriteOnly));
    meminfo.write("MemTotal:          20480 kB\nMemFree:  1 kB\nMemAvailable:      10240 kB\n");
    meminfo.close();
    const GuestMemory memory(dir(QStringLiteral("ceiling/not-yet")), QStringLiteral("/x"));
    const GuestMemory::HostFigures host = memory.hostFigures(meminfo.fileName());
    QCOMPARE(host.totalMib, qint64(20));
    QCOMPARE(host.availableMib, qint64(10));
    QVERIFY2(host.tmpfsMib > 20, "the test's temporary file system is larger than 20 MiB");
    QCOMPARE(host.ceilingMib, qint64(20));
    const auto refused = memory.checkCeiling(QStringLiteral("big"), 21, meminfo.fileName());
    QVERIFY(!refused);
    QCOMPARE(int(refused.error().kind), int(ErrorKind::InvalidParams));
    QVERIFY2(refused.error().message.contains(QStringLiteral("at most 20 MiB")),
             qPrintable(refused.error().message));
    QVERIFY2(refused.error().message.contains(QStringLiteral("MemTotal")),
             qPrintable(refused.error().message));
    // Above MemAvailable but within MemTotal: accepted now, start decides (checkCapacity).
    QVERIFY_RESULT(memory.checkCeiling(QStringLiteral("big"), 20, meminfo.fileName()));

    // A file system smaller than MemTotal bounds it instead, and is named.
    QFile large(dir(QStringLiteral("ceiling/meminfo-large")));
    QVERIFY(large.open(QIODevice::WriteOnly));
    large.write("MemTotal:   1099511627776 kB\nMemAvailable: 1099511627776 kB\n");
    large.close();
    const GuestMemory::HostFigures bounded = memory.hostFigures(large.fileName());
    QCOMPARE(bounded.ceilingMib, bounded.tmpfsMib);
    const auto tooBig =
        memory.checkCeiling(QStringLiteral("big"), int(bounded.tmpfsMib + 1), large.fileName());
    QVERIFY(!tooBig);
    QVERIFY2(tooBig.error().message.contains(memory.dir()), qPrintable(tooBig.error().message));
}

void TestGuestMemory::removeTakesTheDirWithTheLastFile()
{
    const GuestMemory memory(dir(QStringLiteral("last")), QStringLiteral("/x"));
    QVERIFY(QDir().mkpath(memory.dir()));
    for (const QString &name : {QStringLiteral("a"), QStringLiteral("b")}) {
        QFile file(memory.pathFor(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
    }
    memory.remove(QStringLiteral("a"));
    QVERIFY(!QFileInfo::exists(memory.pathFor(QStringLiteral("a"))));
    QVERIFY(QFileInfo::exists(memory.dir()));
    memory.remove(QStringLiteral("b"));
    QVERIFY(!QFileInfo::exists(memory.dir()));
}

void TestGuestMemory::removeStaleKeepsLiveGuestsAndCaches()
{
    const GuestMemory memory(dir(QStringLiteral("stale")), QStringLiteral("/x"));
    QVERIFY(QDir().mkpath(memory.dir()));
    const QStringList files {QStringLiteral("live.ram"), QStringLiteral("dead.ram"),
                             QStringLiteral("live.ram.tmp"), QStringLiteral(".template-1")};
    for (const QString &name : files) {
        QFile file(QDir(memory.dir()).filePath(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
    }
    QStringList removed =
        memory.removeStale([](const QString &name) { return name == QLatin1String("live"); });
    removed.sort();
    QCOMPARE(removed, QStringList({QStringLiteral("dead.ram"), QStringLiteral("live.ram.tmp")}));
    QVERIFY(QFileInfo::exists(memory.pathFor(QStringLiteral("live"))));
    QVERIFY(QFileInfo::exists(QDir(memory.dir()).filePath(QStringLiteral(".template-1"))));
}

QTEST_GUILESS_MAIN(TestGuestMemory)
#include "tst_guestmemory.moc"
