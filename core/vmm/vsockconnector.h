#pragma once

#include "core/model/error.h"

#include <QDeadlineTimer>
#include <QObject>
#include <QString>

#include <functional>

class QLocalSocket;

namespace airlock {

/// The host end of a Firecracker vsock connection to a guest port. Firecracker's vsock device is
/// a Unix socket on the host (`uds_path` of PUT /vsock); a host-initiated connection connects to
/// it, sends `CONNECT <port>\n` and reads `OK <host port>\n` once the guest accepted (docs/vsock.md
/// of Firecracker). Firecracker closes the connection instead while nothing in the guest listens
/// on the port, e.g. before the guest agent has started: the connector then tries again every
/// kRetryMs until its deadline.
///
/// The answer line is read with a bound (kMaxAnswerBytes; the VMM may be hostile) and with
/// readLine(), so bytes the guest sent right after it stay in the socket for the protocol above
/// (GuestAgent). The result is an open QLocalSocket carrying the guest port's byte stream, the
/// same shape as QEMU's virtio-serial chardev socket.
class VsockConnector : public QObject
{
    Q_OBJECT
public:
    static constexpr int kRetryMs = 100;
    static constexpr qint64 kMaxAnswerBytes = 32;

    using Connected = std::function<void(const Result<QLocalSocket *> &)>;
    /// Starts connecting to guest `port` through `udsPath` until `timeoutMs` passed. `connected`
    /// gets the socket (parentless, for the caller to own) or Timeout naming the last failure,
    /// from the event loop; never once this object is destroyed. OperationFailed at once for a
    /// path that is there but no socket, or an answer that is not `OK <n>`.
    VsockConnector(QString udsPath, quint32 port, int timeoutMs, Connected connected,
                   QObject *parent = nullptr);
    ~VsockConnector() override;

private:
    void attempt();
    void retry(const QString &why);
    void onReadyRead();
    void finish(const Result<QLocalSocket *> &result);

    QString m_udsPath;
    quint32 m_port;
    QDeadlineTimer m_deadline;
    Connected m_connected;
    QLocalSocket *m_socket = nullptr;
    QString m_lastFailure;
    int m_generation = 0;
};

} // namespace airlock
