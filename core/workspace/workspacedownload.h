#pragma once

#include "core/model/error.h"

#include <QByteArrayView>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace airlock {
class HelperClient;
}

namespace airlock::workspace {

/// Receives a guest folder's archive stream (`workspace.pull*`, docs/protocol.md
/// "Workspace") and hands each chunk to a consumer (a WorkspaceWriter, a WorkspaceTree's
/// decoder, a spool file), with two reads in flight. The bytes are the guest's: the consumer
/// decodes them strictly.
class WorkspaceDownload : public QObject
{
    Q_OBJECT
public:
    /// Takes a chunk; an error text stops the download (failed() with it).
    using Consumer = std::function<std::optional<QString>(QByteArrayView chunk)>;

    WorkspaceDownload(HelperClient *client, QString sandbox, QString guestFolder, Consumer consumer,
                      QObject *parent = nullptr);
    ~WorkspaceDownload() override;

    /// Starts; finished() (after the last chunk) or failed() follows, once.
    void start();
    /// Stops: the helper cancels the stream in the guest. Neither signal follows.
    void cancel();
    quint64 bytesReceived() const { return m_received; }

signals:
    void progress(quint64 bytesReceived);
    void finished();
    void failed(const airlock::Error &error);

private:
    void readMore();
    void stop(const Error &error);

    HelperClient *m_client;
    QString m_sandbox;
    QString m_guestFolder;
    Consumer m_consumer;
    qint64 m_transfer = 0;
    int m_inFlight = 0;
    bool m_eof = false;
    bool m_stopped = false;
    quint64 m_received = 0;
};

} // namespace airlock::workspace
