#pragma once

#include "core/model/error.h"

#include <QObject>
#include <QString>

#include <memory>

class QFile;
class QSaveFile;

namespace airlock {

class HelperClient;

/// Copies one regular file between the host and a guest with `files.read` / `files.write`
/// (docs/protocol.md, "Files"), 512 KiB per call, one call in flight. The window opens the
/// host file itself, as the person's user (the helper never opens a host path for a client).
/// A download goes to a QSaveFile: a cancelled or failed one leaves no partial host file.
/// An upload writes the guest file (created or truncated, mode 0644) and appends the rest.
class GuestFileTransfer final : public QObject
{
    Q_OBJECT
public:
    enum class Direction { Upload, Download };

    /// Bytes per call: AgentApi::kMaxFileChunkBytes.
    static constexpr qint64 kChunkBytes = 512 * 1024;

    GuestFileTransfer(HelperClient *client, QString sandbox, Direction direction, QString hostPath,
                      QString guestPath, QObject *parent = nullptr);
    ~GuestFileTransfer() override;

    /// Starts; finished() or failed() follows, once.
    void start();
    /// Stops after the call in flight; neither signal follows.
    void cancel();

    Direction direction() const { return m_direction; }
    QString hostPath() const { return m_hostPath; }
    QString guestPath() const { return m_guestPath; }
    qint64 bytesDone() const { return m_done; }
    /// The file's size; -1 until known.
    qint64 bytesTotal() const { return m_total; }

signals:
    void progress(qint64 done, qint64 total);
    void finished();
    /// Host errors are `operation_failed` with the host's reason; guest errors keep their kind.
    void failed(const airlock::Error &error);

private:
    void readNext();
    void writeNext();
    void stop(const Error &error);

    HelperClient *m_client;
    QString m_sandbox;
    Direction m_direction;
    QString m_hostPath;
    QString m_guestPath;
    std::unique_ptr<QFile> m_source;
    std::unique_ptr<QSaveFile> m_target;
    qint64 m_done = 0;
    qint64 m_total = -1;
    bool m_stopped = false;
};

} // namespace airlock
