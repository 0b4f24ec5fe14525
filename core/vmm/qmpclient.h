#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QObject>
#include <QString>

#include <deque>
#include <functional>
#include <optional>

class QLocalSocket;
class QSocketNotifier;

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

    /// Called once a handshake is over: connected, or why not.
    using Connected = std::function<void(const Result<void> &)>;
    /// Connects to the QMP socket at `path`, reads the greeting and sends qmp_capabilities, and
    /// returns at once; `done` is called from the event loop once that is over (a local
    /// handshake, a few ms in practice), never when this object is destroyed first. Errors:
    /// NotFound when nothing listens at `path`, Timeout after `timeoutMs` (a VMM that accepts
    /// but never greets), Disconnected, OperationFailed.
    void connectToServer(const QString &path, int timeoutMs, Connected done);
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
    /// Hands `fd` to QEMU under `name` (QMP `getfd` with the descriptor as SCM_RIGHTS), e.g. for
    /// a migration to or from `fd:name`. A copy of the descriptor is queued at once and sent
    /// once every command before it went out, from the event loop if QEMU reads slowly (the
    /// caller still owns `fd` and may close it); `reply` gets QEMU's answer as for execute().
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
    /// The greeting arrived during a handshake: negotiates the capabilities.
    void greeted();
    void finishHandshake(const Result<void> &result);
    void onReadyRead();
    void onDisconnected();
    void handleMessage(const QJsonObject &message);
    void failPending(const QString &why);
    /// Writes what m_outgoing holds, in order, as far as the socket takes it.
    void flushOutgoing();
    /// Answers command `id` (from the event loop) that its descriptor could not be passed.
    void failDescriptor(qint64 id, int error);
    /// Closes the queued descriptors and forgets the queue.
    void dropOutgoing();

    /// A command waiting behind a descriptor (or carrying one): sent in order, never blocking.
    struct Outgoing
    {
        QByteArray line;
        qint64 id = 0;
        int fd = -1; ///< our copy, closed once sent
    };
    std::deque<Outgoing> m_outgoing;
    QSocketNotifier *m_writable = nullptr; ///< while sendmsg() waits for room

    QLocalSocket *m_socket = nullptr;
    QByteArray m_buffer;
    QJsonObject m_greeting;
    QHash<qint64, Reply> m_pending;
    qint64 m_nextId = 1;
    Connected m_handshake; ///< set while connectToServer() is under way
    int m_handshakeAttempt = 0; ///< tells a stale handshake timeout from the current one
};

} // namespace airlock
