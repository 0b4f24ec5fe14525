// Breaker 4: what a guest's disk costs the helper when its sandbox is snapshotted.
//
// SnapshotService::capture (core/daemon/snapshotservice.cpp, "The disk overlay too") copies the
// whole root-disk overlay with SparseCopy::of into anonymous memory of airlockd (root, shared
// by every sandbox) during the pause, and keeps it until the worker thread has hashed and
// stored it. The overlay's data is whatever the guest wrote: up to the image's disk size (4 GiB
// for the Debian image, installers/guest/build-image.sh --disk-size), per sandbox, per
// concurrent snapshot (automatic snapshots of every sandbox are taken by the same 30 s timer).
// This test stands in for a guest that filled 512 MiB of its disk (`dd if=/dev/urandom
// of=/fill bs=1M count=512` as root in the guest) and asserts the helper's memory for the copy
// stays bounded (the stream could be hashed from the file in chunks instead).

#include "core/snapshot/sparsecopy.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

namespace {

qint64 residentKib()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    }
    return -1;
}

} // namespace

class TestBreak4DiskCopy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void overlayCopyIsBoundedByNothingButTheGuest();
};

void TestBreak4DiskCopy::overlayCopyIsBoundedByNothingButTheGuest()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString overlay = dir.filePath(QStringLiteral("guest.qcow2"));
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
        ::close(fd);
        // Out of our page cache accounting: only the copy should count.
        const int rfd = ::open(QFile::encodeName(overlay).constData(), O_RDONLY);
        ::posix_fadvise(rfd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(rfd);
    }
    const qint64 before = residentKib();
    auto copy = airlock::SparseCopy::of(overlay);
    QVERIFY2(copy, copy ? "" : qPrintable(copy.error().message));
    const qint64 grownMib = (residentKib() - before) / 1024;
    qInfo("a %lld MiB overlay: the helper's RSS grew by %lld MiB during the pause",
          static_cast<long long>(kFilled >> 20), static_cast<long long>(grownMib));
    QVERIFY2(grownMib < 64,
             qPrintable(QStringLiteral("the helper holds %1 MiB for one guest's disk").arg(grownMib)));
}

QTEST_GUILESS_MAIN(TestBreak4DiskCopy)
#include "tst_break4_diskcopy.moc"
