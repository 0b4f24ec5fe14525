#pragma once

#include "core/e2b/e2bcontext.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace airlock::e2b {

/// One server-streaming call of envd's `process.Process` service (Start or Connect; spec/envd/
/// process/process.proto of e2b-dev/E2B) answered over the Connect protocol's JSON codec: a
/// chunked `application/connect+json` response of enveloped `{"event": ...}` messages: `start`
/// {pid}, `data` {stdout|stderr|pty: base64}, `end` {exitCode, exited, status}, a `keepalive`
/// every 30 s while quiet, then the end-of-stream message.
///
/// The process runs through airlockd's exec.start / exec.connect on the shared helper
/// connection (docs/protocol.md "Exec and files"), whose exec.output and exec.exit
/// notifications EnvdService hands to deliver(). When the HTTP client goes away first, the
/// process is detached (exec.detach) and runs on, as envd's do; Connect finds it again.
///
/// Backpressure: the helper connection is shared by every stream, so one slow HTTP client
/// cannot pause it. Instead each stream holds at most kMaxPendingBytes unsent on its socket:
/// output that would go beyond it ends the stream with the Connect error `resource_exhausted`
/// ("the client read too slowly", after the output already queued) and detaches the process,
/// which runs on with its further output waiting in the guest; commands.connect(pid) follows
/// it again from there. What was dropped is said in the error, not silently lost.
class ProcessStream : public QObject
{
    Q_OBJECT
public:
    /// Unsent bytes one stream's socket may hold (a slow client's bound).
    static constexpr qint64 kMaxPendingBytes = 4 * 1024 * 1024;
    /// Counters of all streams, for tests: the most bytes one stream's socket ever held right
    /// after a write, and how many streams ended for a client that read too slowly.
    struct Stats
    {
        qint64 peakPendingBytes = 0;
        int overruns = 0;
    };
    static Stats stats();
    static void resetStats();

    ProcessStream(E2bContext context, const QPointer<HttpConnection> &connection, QString sandbox,
                  QObject *parent = nullptr);
    ~ProcessStream() override;

    /// exec.start with `params` (name included). With `shellFallback`, a missing program is
    /// tried once more as /bin/sh (E2B's commands run `/bin/bash -c`; Airlock's busybox image
    /// has only sh).
    void start(QJsonObject params, bool shellFallback);
    /// exec.connect to a detached process.
    void attach(quint32 pid);
    /// An exec.output or exec.exit notification for this stream's sandbox and pid.
    void deliver(const QString &method, const QJsonObject &params);

    QString sandbox() const { return m_sandbox; }
    quint32 pid() const { return m_pid; }

Q_SIGNALS:
    /// The process runs as `pid`: notifications for it go to deliver() from now on.
    void bound(quint32 pid);
    /// The stream is over (the end was sent, or the client left); the object deletes itself.
    void finished();

private:
    void began(const Result<QJsonObject> &result);
    void send(const QJsonObject &event);
    void end(const QString &code = {}, const QString &message = {});
    void onClientGone();
    /// The client read too slowly: end with resource_exhausted and detach the process.
    void overrun();

    E2bContext m_context;
    QPointer<HttpConnection> m_connection;
    QString m_sandbox;
    quint32 m_pid = 0;
    bool m_pty = false;
    bool m_headersSent = false;
    bool m_done = false;
    QTimer m_keepAlive;
};

} // namespace airlock::e2b
