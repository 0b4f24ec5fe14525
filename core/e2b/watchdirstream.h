#pragma once

#include "core/e2b/e2bcontext.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace airlock::e2b {

/// One `filesystem.Filesystem/WatchDir` call (server streaming; spec/envd/filesystem/
/// filesystem.proto of e2b-dev/E2B, the SDK's `files.watchDir`) over the Connect JSON codec: a
/// chunked `application/connect+json` response of `{"start": {}}` once the guest watches the
/// folder, then `{"filesystem": {name, type}}` per change (`name` relative to the folder,
/// `type` EVENT_TYPE_CREATE, _WRITE, _REMOVE, _RENAME, _CHMOD), a `keepalive` every 30 s while
/// quiet, and the end-of-stream message when the watch ends (the folder went, the agent's
/// channel closed).
///
/// The watch is airlockd's files.watch (docs/protocol.md, "Exec and files") on the shared
/// helper connection, whose files.event and files.watchEnd notifications EnvdService hands to
/// deliver(). When the HTTP client goes away (the SDK's `handle.stop()` aborts the request),
/// files.unwatch ends it in the guest. A client that stops reading: once kMaxPendingBytes wait
/// unsent on its socket, the stream ends with `resource_exhausted` and the watch is ended
/// (the helper connection is shared, so one slow client cannot pause it).
class WatchDirStream : public QObject
{
    Q_OBJECT
public:
    /// Unsent bytes one stream's socket may hold.
    static constexpr qint64 kMaxPendingBytes = 1024 * 1024;

    WatchDirStream(E2bContext context, const QPointer<HttpConnection> &connection, QString sandbox,
                   QObject *parent = nullptr);
    ~WatchDirStream() override;

    /// files.watch of the guest folder `path`.
    void start(const QString &path, bool recursive);
    /// A files.event or files.watchEnd notification for this stream's sandbox and watch.
    void deliver(const QString &method, const QJsonObject &params);

    QString sandbox() const { return m_sandbox; }
    quint64 watch() const { return m_watch; }

    /// envd's EventType name of a helper event type ("create" → "EVENT_TYPE_CREATE"); empty
    /// for one envd has no name for (`overflow`).
    static QString eventTypeName(const QString &type);

Q_SIGNALS:
    /// The watch is set as `watch`: notifications for it go to deliver() from now on.
    void bound(quint64 watch);
    /// The stream is over; the object deletes itself.
    void finished();

private:
    void send(const QJsonObject &event);
    void end(const QString &code = {}, const QString &message = {});
    void onClientGone();
    void unwatch();

    E2bContext m_context;
    QPointer<HttpConnection> m_connection;
    QString m_sandbox;
    quint64 m_watch = 0;
    bool m_headersSent = false;
    bool m_done = false;
    QTimer m_keepAlive;
};

} // namespace airlock::e2b
