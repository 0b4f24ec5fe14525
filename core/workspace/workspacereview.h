#pragma once

#include "core/model/error.h"
#include "core/workspace/workspacediff.h"

#include <QObject>
#include <QSet>
#include <QTemporaryFile>

#include <memory>

namespace airlock {
class HelperClient;
}

namespace airlock::workspace {

class WorkspaceDownload;

/// What WorkspaceReview::apply() did.
struct ApplyResult
{
    quint64 written = 0; ///< entries written
    quint64 bytes = 0;
    quint64 removed = 0;
    QList<QPair<QString, QString>> refused; ///< (path, reason) the writer would not write
    QList<QPair<QString, QString>> failed; ///< (path, why) a removal that failed
};

/// Reviewing an agent's work before taking it: pulls the guest folder once, compares it with
/// the host folder (diffTrees: a unified diff for text, a list for binaries and refusals),
/// and writes only the changes a person accepted. The pulled stream is kept in a private
/// temporary file, so what apply() writes is exactly what was reviewed, even when the guest
/// changes the folder meanwhile; it goes through a WorkspaceWriter (nothing outside the host
/// folder, nothing the host's policy refuses), and accepted deletions through removeBeneath().
class WorkspaceReview : public QObject
{
    Q_OBJECT
public:
    WorkspaceReview(HelperClient *client, QString sandbox, QString hostFolder, QString guestFolder,
                    QObject *parent = nullptr);
    ~WorkspaceReview() override;

    /// Reads the host folder (a missing one is empty) and pulls the guest's; ready() or
    /// failed() follows.
    void start();
    void cancel();
    /// The differences, once ready().
    const QList<WorkspaceChange> &changes() const { return m_changes; }
    quint64 bytesReceived() const;

    /// Writes the accepted changes (by path) into the host folder: added and modified entries
    /// from the reviewed stream, deletions removed (deepest first). Refused entries are never
    /// written. Errors: the host folder cannot be opened, or the stream cannot be read again.
    Result<ApplyResult> apply(const QSet<QString> &accepted);

signals:
    void progress(quint64 bytesReceived);
    void ready();
    void failed(const airlock::Error &error);

private:
    struct Receiving;
    void received();

    HelperClient *m_client;
    QString m_sandbox;
    QString m_hostFolder;
    QString m_guestFolder;
    QTemporaryFile m_spool;
    std::unique_ptr<Receiving> m_receiving;
    WorkspaceDownload *m_download = nullptr;
    QList<WorkspaceChange> m_changes;
};

} // namespace airlock::workspace
