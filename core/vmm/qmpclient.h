#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

class QLocalSocket;

namespace airlock {

/// A client of QEMU's machine protocol (QMP) over its Unix socket: greeting, capability
/// negotiation, commands with id-matched replies, and asynchronous events such as SHUTDOWN or
/// POWERDOWN. Wire format: https://www.qemu.org/docs/master/interop/qmp-spec.html (one JSON
/// object per line). Lines over 1 MiB end the connection: the VMM runs guest-facing code and is
/// not trusted to be well-behaved.
class QmpClient : public QObject
{
    Q_OBJECT
public:
    /// Called once with a command's `return` value, or an error: OperationFailed with QEMU's
    /// `desc` for a QMP error, Disconnected when the socket closed first.
    using Reply = std::function<void(const Result<QJsonValue> &)>;

    explicit QmpClient(QObject *parent = nullptr);
    ~QmpClient() override;

    /// Connects to the QMP socket at `path`, reads the greeting and sends qmp_capabilities.
    /// Blocks for at most `timeoutMs` (a local handshake, a few ms in practice). Errors:
    /// NotFound when nothing listens at `path`, Timeout, Disconnected, OperationFailed.
    Result<void> connectToServer(const QString &path, int timeoutMs);
    /// Closes the connection; pending replies fail with Disconnected.
    void disconnectFromServer();
    bool isConnected() const;
    /// The greeting object (`{"QMP": {"version": ..., "capabilities": [...]}}`).
    QJsonObject greeting() const { return m_greeting; }

    /// Sends `command` with `arguments`; `reply` (may be empty) gets the answer later, from the
    /// event loop. With `timeoutMs` > 0 it gets Timeout instead when QEMU has not answered by
    /// then (a late answer is dropped): a VMM that hangs must not keep its caller waiting.
    void execute(const QString &command, const QJsonObject &arguments = {}, Reply reply = {},
                 int timeoutMs = 0);
    /// Sends `command` and waits up to `timeoutMs` for its answer, blocking the thread. Only for
    /// the capability handshake, adopting a VMM and crash recovery at start-up (bounded, a local
    /// reply in ms); everything else uses execute().
    Result<QJsonValue> executeAndWait(const QString &command, const QJsonObject &arguments,
                                      int timeoutMs);

    /// Hands `fd` to QEMU under `name` (QMP `getfd` with the descriptor as SCM_RIGHTS), e.g. for
    /// a migration to or from `fd:name`. The descriptor is sent before this returns (QEMU keeps
    /// its own copy; the caller still owns `fd`); `reply` gets QEMU's answer as for execute().
    void passDescriptor(const QString &name, int fd, int timeoutMs, Reply reply);

    /// Handles whatever already waits in the socket without blocking (e.g. a SHUTDOWN event
    /// when the process-exit notification arrived first).
    void readPending();

Q_SIGNALS:
    /// A QMP event, e.g. `SHUTDOWN` with `{guest: bool, reason: "guest-shutdown"}`.
    void eventReceived(const QString &name, const QJsonObject &data);
    /// The connection closed (QEMU exited or the socket failed).
    void disconnected();

private:
    void send(const QString &command, const QJsonObject &arguments, Reply reply, int fd,
              int timeoutMs);
    Result<QJsonValue> waitFor(qint64 id, std::optional<Result<QJsonValue>> &answer,
                               const QString &command, int timeoutMs);
    void onReadyRead();
    void onDisconnected();
    void handleMessage(const QJsonObject &message);
    void failPending(const QString &why);

    QLocalSocket *m_socket = nullptr;
    QByteArray m_buffer;
    QJsonObject m_greeting;
    QHash<qint64, Reply> m_pending;
    qint64 m_nextId = 1;
};

} // namespace airlock
