#pragma once

#include "core/client/transport.h"

#include <QLocalSocket>

namespace airlock {

/// Transport over the helper's Unix socket. Turns the socket errors a user actually meets (no
/// helper running, not in the `airlock` group) into sentences that name the fix.
class LocalSocketTransport final : public Transport
{
    Q_OBJECT
public:
    /// `path` is the socket file; a relative path is taken relative to the working directory.
    explicit LocalSocketTransport(const QString &path, QObject *parent = nullptr);
    ~LocalSocketTransport() override;

    void open() override;
    void close() override;
    void write(const QByteArray &bytes) override;
    bool isOpen() const override;
    QString description() const override;
    ErrorKind disconnectKind() const override { return m_closeKind; }

    /// The absolute socket path.
    QString path() const { return m_path; }
    /// Blocks until queued bytes are written (or the socket fails); for short-lived CLI runs.
    bool flush(int timeoutMs = 5000);

    /// The sentence for a failed connection attempt, e.g. "airlockd is not running: ...".
    static QString connectErrorReason(QLocalSocket::LocalSocketError error, const QString &path,
                                      const QString &detail);

private:
    enum class State { Closed, Connecting, Open };

    void onErrorOccurred(QLocalSocket::LocalSocketError error);
    void onSocketClosed();
    void scheduleClose();
    void finishClose();
    void drainReceived();

    QString m_path;
    QLocalSocket *m_socket;
    State m_state = State::Closed;
    QString m_closeReason;
    ErrorKind m_closeKind = ErrorKind::Disconnected;
    QByteArray m_tail; // received but not yet delivered when the socket failed
    // Bumped on every open/close so a deferred finishClose() from an older attempt is ignored.
    quint64 m_generation = 0;
    bool m_closeScheduled = false;
};

} // namespace airlock
