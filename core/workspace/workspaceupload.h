#pragma once

#include "core/model/error.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <memory>

namespace airlock {
class HelperClient;
}

namespace airlock::agentwire {
class ArchiveWalker;
}

namespace airlock::workspace {

/// What the guest wrote of a pushed folder: workspace.pushFinish's answer.
struct PushResult
{
    quint64 entries = 0;
    quint64 bytes = 0;
    quint64 refusedCount = 0;
    QList<QPair<QString, QString>> refused; ///< (path, reason), the first 64
};

/// Sends a host folder into a guest folder (`workspace.push*`, docs/protocol.md "Workspace"):
/// reads it here, as the calling user, with an ArchiveWalker (nothing followed; symlinks,
/// hard links and special files go as what they are, and the guest decides), and streams it
/// in chunks of at most 512 KiB with two calls in flight, so the guest's credit paces it.
class WorkspaceUpload : public QObject
{
    Q_OBJECT
public:
    WorkspaceUpload(HelperClient *client, QString sandbox, QString hostFolder, QString guestFolder,
                    QString guestUser, QObject *parent = nullptr);
    ~WorkspaceUpload() override;

    /// Starts; finished() or failed() follows, once.
    void start();
    /// Stops: the helper cancels the stream in the guest. Neither signal follows.
    void cancel();
    quint64 bytesSent() const { return m_sent; }

signals:
    void progress(quint64 bytesSent);
    void finished(const airlock::workspace::PushResult &result);
    void failed(const airlock::Error &error);

private:
    void sendMore();
    void finish();
    void stop(const Error &error);

    HelperClient *m_client;
    QString m_sandbox;
    QString m_hostFolder;
    QString m_guestFolder;
    QString m_guestUser;
    std::unique_ptr<agentwire::ArchiveWalker> m_walker;
    qint64 m_transfer = 0;
    int m_inFlight = 0;
    bool m_produced = false; ///< the walker is done
    bool m_stopped = false;
    quint64 m_sent = 0;
};

} // namespace airlock::workspace
