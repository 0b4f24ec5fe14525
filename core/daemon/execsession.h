#pragma once

#include "core/agent/agentprocess.h"
#include "core/daemon/rpcserver.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>

#include <deque>

namespace airlock {

/// One client following one guest process (exec.start or exec.connect, docs/protocol.md
/// "Exec"): the process's stdout and stderr go to that client as `exec.output` notifications
/// of at most kChunkBytes, then one `exec.exit`. Backpressure end to end: output is taken
/// from the AgentProcess (which credits the guest only for what is taken) only while the
/// client's connection holds less than kHighWaterBytes unread, so a client that reads slowly
/// stops the guest process at its pipe instead of growing the helper. Input (exec.input) is
/// queued into the process as its stdin window allows and each call answered once its bytes
/// went out.
///
/// Ends (ended()) after exec.exit was sent, when the stream failed (exec.exit with `error`),
/// when the client is gone, or on detach() (the process runs on in the guest; exec.connect
/// follows it again). The owner deletes it then.
class ExecSession : public QObject
{
    Q_OBJECT
public:
    /// Output bytes per notification: base64 makes them 64 KiB of JSON.
    static constexpr qint64 kChunkBytes = 48 * 1024;
    /// Unread bytes on the client's connection above which output waits.
    static constexpr qint64 kHighWaterBytes = 256 * 1024;
    /// Input bytes queued here at most (exec.input calls beyond it are refused `busy`).
    static constexpr qint64 kMaxQueuedInputBytes = 1024 * 1024;

    /// Follows `process` (which stays the agent client's child) for client `client` of `server`.
    /// Follows `process` (which stays the agent client's child) for client `client` of `server`;
    /// `acceptsInput`: the process was started with stdin open or a PTY (exec.input is
    /// invalid_state otherwise).
    ExecSession(RpcServer &server, quint64 client, QString sandbox, agent::AgentProcess *process,
                bool acceptsInput, QObject *parent = nullptr);
    ~ExecSession() override;

    quint64 client() const { return m_client; }
    const QString &sandbox() const { return m_sandbox; }
    /// The guest's process id (0 until started()).
    quint32 pid() const { return m_pid; }
    agent::AgentProcess *process() const { return m_process.data(); }

    /// Queues `data` as the process's input, then its end with `eof`; `reply` gets `{}` once
    /// it was sent to the guest, or the error (invalid_state: stdin is not open; busy: more
    /// than kMaxQueuedInputBytes waiting).
    void input(const QByteArray &data, bool eof, RpcServer::Reply reply);
    /// Stops following; the process runs on in the guest. ended() follows from the event loop.
    void detach();

Q_SIGNALS:
    /// The guest started (or attached) the process.
    void started(quint32 pid);
    /// The stream failed before the process started; nothing was sent to the client.
    void startFailed(const airlock::Error &error);
    /// Nothing more goes to the client; delete this.
    void ended();

private:
    struct PendingInput
    {
        QByteArray data;
        bool eof = false;
        RpcServer::Reply reply;
    };

    void pumpOutput();
    void pumpInput();
    void onFailed(const agent::AgentError &error);
    bool notify(const char *method, QJsonObject params);
    void end();

    RpcServer &m_server;
    quint64 m_client;
    QString m_sandbox;
    QPointer<agent::AgentProcess> m_process;
    std::deque<PendingInput> m_input;
    qint64 m_queuedInput = 0;
    bool m_stdoutNext = true; ///< which stream the next chunk comes from when both have data
    quint32 m_pid = 0;
    bool m_acceptsInput;
    bool m_ended = false;
    bool m_pumpingInput = false;
};

} // namespace airlock
