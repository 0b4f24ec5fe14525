#include "core/workspace/workspacewriter.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace airlock::workspace {

/// Passes the accepted entries on to the extractor and drops the others with their content.
struct WorkspaceWriter::Filtering : agentwire::ArchiveSink
{
    Filtering(agentwire::ArchiveSink &next, Filter accept)
        : m_next(next), m_accept(std::move(accept))
    { }

    bool entry(const agentwire::ArchiveEntry &entry) override
    {
        m_passing = !m_accept || m_accept(entry);
        return !m_passing || m_next.entry(entry);
    }
    bool content(agentwire::ByteView bytes) override { return !m_passing || m_next.content(bytes); }
    bool entryDone() override { return !m_passing || m_next.entryDone(); }
    void end() override { m_next.end(); }

    agentwire::ArchiveSink &m_next;
    Filter m_accept;
    bool m_passing = true;
};

std::expected<std::unique_ptr<WorkspaceWriter>, QString>
WorkspaceWriter::open(const QString &folder, Filter filter)
{
    if (!QDir().mkpath(folder))
        return std::unexpected(QStringLiteral("cannot create %1").arg(folder));
    const int fd =
        ::open(QFile::encodeName(folder).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return std::unexpected(QStringLiteral("cannot open %1: %2")
                                   .arg(folder, QString::fromLocal8Bit(strerror(errno))));
    return std::unique_ptr<WorkspaceWriter>(new WorkspaceWriter(fd, std::move(filter)));
}

WorkspaceWriter::WorkspaceWriter(int fd, Filter filter)
    : m_fd(fd)
    , m_extractor(std::make_unique<agentwire::ArchiveExtractor>(fd, agentwire::ArchivePolicy {}))
    , m_filtering(std::make_unique<Filtering>(*m_extractor, std::move(filter)))
    , m_decoder(std::make_unique<agentwire::ArchiveDecoder>(*m_filtering))
{ }

WorkspaceWriter::~WorkspaceWriter()
{
    m_decoder.reset();
    m_filtering.reset();
    m_extractor.reset();
    ::close(m_fd);
}

bool WorkspaceWriter::feed(QByteArrayView bytes)
{
    return m_decoder->feed(agentwire::ByteView(reinterpret_cast<const std::uint8_t *>(bytes.data()),
                                               size_t(bytes.size())));
}

bool WorkspaceWriter::finished() const
{
    return m_decoder->finished();
}

std::optional<QString> WorkspaceWriter::error() const
{
    if (m_extractor->error())
        return QString::fromStdString(*m_extractor->error());
    if (m_decoder->error())
        return QStringLiteral("the guest sent a malformed archive: %1")
            .arg(QString::fromStdString(*m_decoder->error()));
    return std::nullopt;
}

const std::vector<agentwire::ArchiveRefusal> &WorkspaceWriter::refusals() const
{
    return m_extractor->refusals();
}

quint64 WorkspaceWriter::entriesWritten() const
{
    return m_extractor->entriesWritten();
}

quint64 WorkspaceWriter::bytesWritten() const
{
    return m_extractor->bytesWritten();
}

std::optional<QString> removeBeneath(int rootFd, const QString &path)
{
    const QByteArray name = QFile::encodeName(path);
    const qsizetype slash = name.lastIndexOf('/');
    const QByteArray parent = slash < 0 ? QByteArray(".") : name.left(slash);
    const QByteArray leaf = slash < 0 ? name : name.mid(slash + 1);
    if (leaf.isEmpty() || leaf == "." || leaf == "..")
        return QStringLiteral("not a removable name");
    open_how how {};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const int dirFd = int(::syscall(SYS_openat2, rootFd, parent.constData(), &how, sizeof how));
    if (dirFd < 0)
        return QString::fromLocal8Bit(strerror(errno));
    struct stat info
    {
    };
    int result = ::fstatat(dirFd, leaf.constData(), &info, AT_SYMLINK_NOFOLLOW);
    if (result == 0)
        result = ::unlinkat(dirFd, leaf.constData(), S_ISDIR(info.st_mode) ? AT_REMOVEDIR : 0);
    const int saved = errno;
    ::close(dirFd);
    if (result != 0)
        return QString::fromLocal8Bit(strerror(saved));
    return std::nullopt;
}

} // namespace airlock::workspace
