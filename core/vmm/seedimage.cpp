#include "core/vmm/seedimage.h"

#include <QFile>
#include <QSet>

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

struct ArchiveDeleter
{
    void operator()(archive *a) const { archive_write_free(a); }
};
struct EntryDeleter
{
    void operator()(archive_entry *e) const { archive_entry_free(e); }
};

bool isSafeRelativePath(const QString &path)
{
    if (path.isEmpty() || path.startsWith(u'/') || path.contains(QChar(0)))
        return false;
    const QStringList parts = path.split(u'/');
    for (const QString &part : parts) {
        if (part.isEmpty() || part == u"." || part == u"..")
            return false;
    }
    return true;
}

} // namespace

Result<void> SeedImage::write(const QString &path, const QList<SeedFile> &files)
{
    QSet<QString> seen;
    for (const SeedFile &file : files) {
        if (!isSafeRelativePath(file.path))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("seed file path '%1' must be relative, without '..'")
                            .arg(file.path));
        if (seen.contains(file.path))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("seed file '%1' appears twice").arg(file.path));
        seen.insert(file.path);
    }
    const QByteArray name = QFile::encodeName(path);
    ::unlink(name.constData());
    const int fd =
        ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create %1: %2")
                        .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    // Readable by the unprivileged VMM whatever the helper's umask (0077).
    ::fchmod(fd, 0644);
    std::unique_ptr<archive, ArchiveDeleter> writer(archive_write_new());
    auto failed = [&](const QString &what) {
        const QString message =
            QStringLiteral("seed image %1: %2: %3")
                .arg(path, what,
                     QString::fromLocal8Bit(archive_error_string(writer.get())
                                                ? archive_error_string(writer.get())
                                                : "unknown error"));
        writer.reset();
        ::close(fd);
        ::unlink(name.constData());
        return fail(ErrorKind::OperationFailed, message);
    };
    // ustar is what busybox tar reads. The archive is padded to whole kMinimumSize blocks: the
    // guest kernel probes every virtio-blk disk for partition tables, and the Amiga one reads
    // sectors 0-15, so a seed of a few sectors printed "unable to read RDB block" on each boot.
    if (archive_write_set_format_ustar(writer.get()) != ARCHIVE_OK
        || archive_write_set_bytes_per_block(writer.get(), kMinimumSize) != ARCHIVE_OK
        || archive_write_set_bytes_in_last_block(writer.get(), kMinimumSize) != ARCHIVE_OK
        || archive_write_open_fd(writer.get(), fd) != ARCHIVE_OK)
        return failed(QStringLiteral("open"));
    const time_t now = ::time(nullptr);
    for (const SeedFile &file : files) {
        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        archive_entry_set_pathname(entry.get(), QFile::encodeName(file.path).constData());
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_perm(entry.get(), mode_t(file.mode));
        archive_entry_set_size(entry.get(), file.content.size());
        archive_entry_set_uid(entry.get(), 0);
        archive_entry_set_gid(entry.get(), 0);
        archive_entry_set_mtime(entry.get(), now, 0);
        if (archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK)
            return failed(file.path);
        if (!file.content.isEmpty()
            && archive_write_data(writer.get(), file.content.constData(),
                                  size_t(file.content.size()))
                != file.content.size())
            return failed(file.path);
    }
    if (archive_write_close(writer.get()) != ARCHIVE_OK)
        return failed(QStringLiteral("close"));
    writer.reset();
    // No fsync: the image is made anew for every start and read by the VMM through the same
    // page cache; on the event loop, a sync cost tens of ms per start on a busy disk.
    if (::close(fd) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot write %1: %2")
                        .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    return {};
}

} // namespace airlock
