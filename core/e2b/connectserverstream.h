#pragma once

#include "core/e2b/e2bcontext.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>

namespace airlock::e2b {

/// What envd's server-streaming calls (process Start/Connect, filesystem WatchDir) share over
/// the Connect protocol's JSON codec (connectrpc.com/docs/protocol, "Streaming"): a chunked
/// `application/connect+json` response of enveloped messages, a keepalive every 30 s once the
/// guest side is set up, the end-of-stream message, and what happens when the HTTP client goes
/// first (the subclass lets go of the guest's side: a process is detached, a watch ended).
/// The object deletes itself once the stream is over (finished()).
class ConnectServerStream : public QObject
{
    Q_OBJECT
public:
    ~ConnectServerStream() override;

    QString sandbox() const { return m_sandbox; }

Q_SIGNALS:
    /// The stream is over (the end was sent, or the client left); the object deletes itself.
    void finished();

protected:
    ConnectServerStream(E2bContext context, const QPointer<HttpConnection> &connection,
                        QString sandbox, QObject *parent);

    enum class Sent {
        Sent,
        Skipped, ///< the client is gone or the stream over: nothing to send to
        Overrun, ///< it would leave more than `maxPendingBytes` unsent: nothing was sent
    };
    /// Sends `message` as one enveloped chunk (response headers first).
    Sent send(const QJsonObject &message, qint64 maxPendingBytes);
    /// Sends the end-of-stream message (an error when `code` is set) and finishes.
    void end(const QString &code = {}, const QString &message = {});
    /// Calls `tick` (which sends a keepalive) every 30 s from now on, until the stream is over.
    void startKeepAlive(std::function<void()> tick);
    /// The client went: the guest's side is let go (when it is set up yet) and the stream is
    /// over. Before that, only the client is forgotten; the subclass calls this again once the
    /// guest's side is known.
    void onClientGone();

    /// Whether the guest's side (a pid, a watch) is set up.
    virtual bool hasGuestSide() const = 0;
    /// Lets go of the guest's side when the client is gone.
    virtual void releaseGuestSide() = 0;

    E2bContext m_context;
    QPointer<HttpConnection> m_connection;
    QString m_sandbox;
    bool m_done = false;

private:
    void finish();
    void beginResponse();

    bool m_headersSent = false;
    QTimer m_keepAlive;
    std::function<void()> m_keepAliveTick;
};

} // namespace airlock::e2b
