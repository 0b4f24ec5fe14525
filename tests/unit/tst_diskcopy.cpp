// docs/reviews/2026-12-01-guest-channels-round4.md#f3: what a guest's disk costs the helper when
// its sandbox is snapshotted.
//
// SnapshotService::captureState (core/daemon/snapshotservice.cpp, "The disk overlay too") takes
// a copy of the root-disk overlay during the pause, so the guest can run on while the copy is
// hashed and stored by a worker thread. The overlay holds whatever the guest wrote: up to the
// image's disk size (4 GiB for the Debian image), per sandbox, per concurrent snapshot. It used
// to be copied into airlockd's anonymous memory (SparseCopy::of); it is now a DiskCopy, an
// unnamed file beside the overlay, read in bounded windows by the store's writer. This test
// stands in for a guest that filled 512 MiB of its disk (`dd if=/dev/urandom of=/fill bs=1M
// count=512` as root in the guest) and asserts the helper's memory stays bounded through the
// copy and the store, that the copy is exact and leaves no file behind, and that a copy the
// state file system has no room for is refused before anything is written.

#include "core/snapshot/diskcopy.h"
#include "core/snapshot/snapshotstore.h"
#include "resultcheck.h"
#include "sanitizer.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <limits>

using namespace airlock;

namespace {

/// Starts a new peak: VmHWM is reset to the current RSS (proc(5), /proc/pid/clear_refs "5").
bool resetPeak()
{
    QFile clear(QStringLiteral("/proc/self/clear_refs"));
    return clear.open(QIODevice::WriteOnly) && clear.write("5") == 1;
}

/// `field` of /proc/self/status in KiB (VmRSS now, VmHWM the peak since resetPeak()).
qint64 statusKib(const QByteArray &field)
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field + ':'))
            return line.mid(field.size() + 1).trimmed().split(' ').first().toLongLong();
    }
    return -1;
}

/// MiB the peak RSS rose above the RSS at resetPeak() (`base`, KiB).
qint64 peakGrowthMib(qint64 base)
{
    return (statusKib("VmHWM") - base) / 1024;
}

QByteArray sha256Of(int fd)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray buffer(1024 * 1024, Qt::Uninitialized);
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buffer.data(), size_t(buffer.size()), at);
        if (n <= 0)
            break;
        hash.addData(QByteArrayView(buffer.constData(), n));
        at += n;
    }
    return hash.result();
}

QByteArray sha256Of(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY);
    const QByteArray digest = fd >= 0 ? sha256Of(fd) : QByteArray();
    if (fd >= 0)
        ::close(fd);
    return digest;
}

QStringList entriesOf(const QString &dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System
                               | QDir::NoDotAndDotDot);
}

} // namespace

class TestDiskCopy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void overlayCopyStaysOutOfHelperMemory();
    void copyKeepsHolesAndBytes();
    void copyWithoutRoomIsRefusedBeforeWriting();
};

void TestDiskCopy::overlayCopyStaysOutOfHelperMemory()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("memory figures are AddressSanitizer's in this build");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString disks = dir.filePath(QStringLiteral("disks"));
    QVERIFY(QDir().mkpath(disks));
    const QString overlay = disks + QStringLiteral("/guest.qcow2");
    constexpr qint64 kFilled = 512LL * 1024 * 1024;
    {
        const int fd = ::open(QFile::encodeName(overlay).constData(), O_WRONLY | O_CREAT, 0600);
        QVERIFY(fd >= 0);
        QByteArray block(1024 * 1024, '\0');
        for (qint64 written = 0; written < kFilled; written += block.size()) {
            for (qsizetype i = 0; i < block.size(); i += 4096)
                block[i] = char(written >> 20); // data, not holes
            QCOMPARE(::write(fd, block.constData(), size_t(block.size())), block.size());
        }
        QCOMPARE(::fsync(fd), 0);
        ::close(fd);
        // Out of our page cache accounting: only the copy should count.
        const int rfd = ::open(QFile::encodeName(overlay).constData(), O_RDONLY);
        ::posix_fadvise(rfd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(rfd);
    }
    const QStringList before = entriesOf(disks);
    QVERIFY(resetPeak());
    const qint64 rssBefore = statusKib("VmRSS");
    QElapsedTimer copying;
    copying.start();
    auto copy = DiskCopy::of(overlay, disks);
    const qint64 copyMs = copying.elapsed();
    QVERIFY_RESULT(copy);
    const qint64 copyGrownMib = peakGrowthMib(rssBefore);
    qInfo("a %lld MiB overlay: the helper's peak RSS grew by %lld MiB during the pause (%s in %lld "
          "ms)",
          static_cast<long long>(kFilled >> 20), static_cast<long long>(copyGrownMib),
          copy->cloned() ? "reflink" : "copied", static_cast<long long>(copyMs));
    QVERIFY2(copyGrownMib < 64,
             qPrintable(
                 QStringLiteral("the helper holds %1 MiB for one guest's disk").arg(copyGrownMib)));
    QCOMPARE(copy->size(), kFilled);
    QCOMPARE(copy->dataBytes(), kFilled);
    // Unnamed: a helper killed now leaves nothing in the directory.
    QCOMPARE(entriesOf(disks), before);

    // The guest runs on and rewrites its disk: the copy keeps the paused state.
    const QByteArray pausedDigest = sha256Of(overlay);
    {
        const int fd = ::open(QFile::encodeName(overlay).constData(), O_WRONLY);
        QVERIFY(fd >= 0);
        const QByteArray other(1024 * 1024, 'x');
        QCOMPARE(::pwrite(fd, other.constData(), size_t(other.size()), 0), other.size());
        ::close(fd);
    }
    QCOMPARE(sha256Of(copy->fd()), pausedDigest);

    // Stored from the copy's file: the worker's memory is bounded too.
    auto store = SnapshotStore::open(dir.filePath(QStringLiteral("snapshots")));
    QVERIFY(store);
    QVERIFY(resetPeak());
    const qint64 rssBeforeStore = statusKib("VmRSS");
    {
        auto writer = (*store)->begin(QStringLiteral("s1"));
        QVERIFY(writer);
        auto stats = (*writer)->addObjectFromFile(QStringLiteral("disk"), copy->fd());
        QVERIFY_RESULT(stats);
        QCOMPARE(stats->logicalBytes, kFilled);
        QVERIFY((*writer)->commit());
    }
    const qint64 storeGrownMib = peakGrowthMib(rssBeforeStore);
    qInfo("storing it grew the peak RSS by %lld MiB", static_cast<long long>(storeGrownMib));
    QVERIFY2(
        storeGrownMib < 64,
        qPrintable(QStringLiteral("storing one guest's disk holds %1 MiB").arg(storeGrownMib)));
    auto manifest = (*store)->manifest(QStringLiteral("s1"));
    QVERIFY(manifest);
    const Manifest::Object *disk = manifest->find(QStringLiteral("disk"));
    QVERIFY(disk);
    QTemporaryFile restored;
    QVERIFY(restored.open());
    QVERIFY((*store)->writeObjectTo(*disk, restored.handle()));
    QCOMPARE(sha256Of(restored.handle()), pausedDigest);
}

void TestDiskCopy::copyKeepsHolesAndBytes()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString source = dir.filePath(QStringLiteral("sparse.qcow2"));
    constexpr qint64 kSize = 64LL * 1024 * 1024;
    {
        const int fd = ::open(QFile::encodeName(source).constData(), O_WRONLY | O_CREAT, 0600);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, kSize), 0);
        const QByteArray data(1024 * 1024, 'd');
        for (qint64 at : {0LL, 20LL << 20, kSize - (1LL << 20)})
            QCOMPARE(::pwrite(fd, data.constData(), size_t(data.size()), at), data.size());
        ::close(fd);
    }
    auto copy = DiskCopy::of(source, dir.path());
    QVERIFY_RESULT(copy);
    QCOMPARE(copy->size(), kSize);
    QCOMPARE(sha256Of(copy->fd()), sha256Of(source));
    struct stat info;
    QCOMPARE(::fstat(copy->fd(), &info), 0);
    if (!copy->cloned()) {
        QCOMPARE(copy->dataBytes(), 3LL << 20);
        QVERIFY2(qint64(info.st_blocks) * 512 < 8LL << 20, "the copy filled the holes");
    }
}

void TestDiskCopy::copyWithoutRoomIsRefusedBeforeWriting()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString source = dir.filePath(QStringLiteral("guest.qcow2"));
    {
        QFile file(source);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.write(QByteArray(4 * 1024 * 1024, 'g')) > 0);
    }
    struct statvfs room;
    QCOMPARE(::statvfs(QFile::encodeName(dir.path()).constData(), &room), 0);
    const qint64 free = qint64(room.f_bavail) * qint64(room.f_frsize);
    const QStringList before = entriesOf(dir.path());
    // A margin just above what is free: the 4 MiB copy would dip into it.
    auto copy = DiskCopy::of(source, dir.path(), free - 1024 * 1024);
    QVERIFY(!copy);
    QCOMPARE(copy.error().kind, ErrorKind::BackendUnavailable);
    QVERIFY2(copy.error().message.contains(QStringLiteral("free")),
             qPrintable(copy.error().message));
    QCOMPARE(entriesOf(dir.path()), before);
    QVERIFY(DiskCopy::of(source, dir.path(), 0));
}

QTEST_GUILESS_MAIN(TestDiskCopy)
#include "tst_diskcopy.moc"
