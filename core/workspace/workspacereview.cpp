#include "core/workspace/workspacereview.h"

#include "core/workspace/workspacedownload.h"
#include "core/workspace/workspacewriter.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace airlock::workspace {

/// The host tree and the guest's, decoded as the guest's stream arrives.
struct WorkspaceReview::Receiving
{
    WorkspaceTree host;
    WorkspaceTree guest;
    agentwire::ArchiveDecoder decoder {guest};
};

WorkspaceReview::WorkspaceReview(HelperClient *client, QString sandbox, QString hostFolder,
                                 QString guestFolder, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_hostFolder(std::move(hostFolder))
    , m_guestFolder(std::move(guestFolder))
    , m_spool(QDir(QDir::tempPath()).filePath(QStringLiteral("airlock-review-XXXXXX")))
{ }

WorkspaceReview::~WorkspaceReview() = default;

quint64 WorkspaceReview::bytesReceived() const
{
    return m_download ? m_download->bytesReceived() : 0;
}

void WorkspaceReview::start()
{
    m_receiving = std::make_unique<Receiving>();
    const auto fail = [this](const QString &why) {
        QMetaObject::invokeMethod(
            this,
            [this, why] {
                emit failed(Error {ErrorKind::OperationFailed, why});
            },
            Qt::QueuedConnection);
    };
    if (QFileInfo::exists(m_hostFolder)) {
        if (const auto why = WorkspaceTree::fromFolder(m_hostFolder, m_receiving->host))
            return fail(QStringLiteral("cannot read %1: %2").arg(m_hostFolder, *why));
    }
    // QTemporaryFile creates it 0600, in the user's temporary folder.
    if (!m_spool.open())
        return fail(
            QStringLiteral("cannot create a temporary file: %1").arg(m_spool.errorString()));
    m_download = new WorkspaceDownload(
        m_client, m_sandbox, m_guestFolder,
        [this](QByteArrayView chunk) -> std::optional<QString> {
            if (m_spool.write(chunk.data(), chunk.size()) != chunk.size())
                return QStringLiteral("cannot write %1: %2")
                    .arg(m_spool.fileName(), m_spool.errorString());
            const agentwire::ByteView bytes(reinterpret_cast<const std::uint8_t *>(chunk.data()),
                                            size_t(chunk.size()));
            if (!m_receiving->decoder.feed(bytes))
                return m_receiving->guest.error().value_or(
                    QStringLiteral("the guest sent a malformed archive: %1")
                        .arg(QString::fromStdString(
                            m_receiving->decoder.error().value_or("stopped"))));
            return std::nullopt;
        },
        this);
    connect(m_download, &WorkspaceDownload::progress, this, &WorkspaceReview::progress);
    connect(m_download, &WorkspaceDownload::failed, this, &WorkspaceReview::failed);
    connect(m_download, &WorkspaceDownload::finished, this, &WorkspaceReview::received);
    m_download->start();
}

void WorkspaceReview::cancel()
{
    if (m_download)
        m_download->cancel();
}

void WorkspaceReview::received()
{
    if (!m_receiving->decoder.finished()) {
        emit failed(Error {ErrorKind::ProtocolError,
                           QStringLiteral("the guest's archive ended before its end record")});
        return;
    }
    m_changes = diffTrees(m_receiving->host, m_receiving->guest);
    m_receiving.reset();
    emit ready();
}

Result<ApplyResult> WorkspaceReview::apply(const QSet<QString> &accepted)
{
    QSet<QString> writable;
    QStringList removals;
    for (const WorkspaceChange &change : std::as_const(m_changes)) {
        if (!accepted.contains(change.path))
            continue;
        if (change.status == WorkspaceChange::Status::Added
            || change.status == WorkspaceChange::Status::Modified)
            writable.insert(change.path);
        else if (change.status == WorkspaceChange::Status::Deleted)
            removals.append(change.path);
    }
    auto writer =
        WorkspaceWriter::open(m_hostFolder, [&writable](const agentwire::ArchiveEntry &entry) {
            return writable.contains(QString::fromStdString(entry.path));
        });
    if (!writer)
        return fail(ErrorKind::OperationFailed, writer.error());
    if (!m_spool.seek(0))
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("cannot read %1: %2").arg(m_spool.fileName(), m_spool.errorString()));
    while (!m_spool.atEnd()) {
        const QByteArray chunk = m_spool.read(256 * 1024);
        if (chunk.isEmpty() || !(*writer)->feed(chunk))
            break;
    }
    if (const auto why = (*writer)->error())
        return fail(ErrorKind::OperationFailed, *why);
    ApplyResult result;
    result.written = (*writer)->entriesWritten();
    result.bytes = (*writer)->bytesWritten();
    for (const auto &refusal : (*writer)->refusals())
        result.refused.append(
            {QString::fromStdString(refusal.path), QString::fromStdString(refusal.reason)});
    // Deepest first, so that a folder is empty when its turn comes.
    std::sort(removals.begin(), removals.end(), std::greater<>());
    for (const QString &path : std::as_const(removals)) {
        if (const auto why = removeBeneath((*writer)->folderFd(), path))
            result.failed.append({path, *why});
        else
            ++result.removed;
    }
    return result;
}

} // namespace airlock::workspace
