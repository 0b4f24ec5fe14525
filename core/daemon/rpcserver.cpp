#include "core/daemon/rpcserver.h"

#include "core/daemon/rpcconnection.h"

#include <QDir>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcRpc, "airlock.daemon.rpc")

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

/// True when a live helper already answers on `path` (then we must not steal its socket).
bool socketIsServed(const QString &path)
{
    QLocalSocket probe;
    probe.connectToServer(path);
    const bool served = probe.waitForConnected(500);
    probe.abort();
    return served;
}

} // namespace

RpcServer::RpcServer(AccessPolicy policy, QObject *parent)
    : QObject(parent), m_policy(std::move(policy))
{ }

RpcServer::~RpcServer()
{
    close();
}

Result<void> RpcServer::listen(const QString &path)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QFileInfo::exists(dir)) {
        if (!QDir().mkpath(dir))
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot create socket directory %1").arg(dir));
        ::chmod(QFile::encodeName(dir).constData(), 0755);
    }
    if (QFileInfo::exists(path)) {
        if (socketIsServed(path))
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("another airlockd is already listening on %1").arg(path));
        QLocalServer::removeServer(path);
    }

    m_server = new QLocalServer(this);
    // Created owner-only, widened to the group once the group owns it: never a moment in which
    // someone outside the group could connect.
    const mode_t oldMask = ::umask(0177);
    const bool listening = m_server->listen(path);
    ::umask(oldMask);
    if (!listening)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot listen on %1: %2").arg(path, m_server->errorString()));
    const QByteArray nativePath = QFile::encodeName(path);
    if (::chown(nativePath.constData(), 0, m_policy.group()) != 0
        || ::chmod(nativePath.constData(), 0660) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot set owner and mode of %1: %2").arg(path, errnoText()));
    m_path = path;
    connect(m_server, &QLocalServer::newConnection, this, &RpcServer::acceptPending);
    qCInfo(lcRpc, "listening on %s", qPrintable(path));
    return {};
}

Result<void> RpcServer::listen(int listeningFd, const QString &path)
{
    m_server = new QLocalServer(this);
    if (!m_server->listen(qintptr(listeningFd)))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot serve the inherited socket %1: %2")
                        .arg(path, m_server->errorString()));
    m_path = path;
    connect(m_server, &QLocalServer::newConnection, this, &RpcServer::acceptPending);
    qCInfo(lcRpc, "serving the socket-activated %s", qPrintable(path));
    return {};
}

void RpcServer::close()
{
    if (m_server) {
        m_server->close();
        delete m_server;
        m_server = nullptr;
    }
    const auto clients = m_clients;
    m_clients.clear();
    m_served.clear();
    m_perUid.clear();
    m_unprivileged = 0;
    for (RpcConnection *client : clients)
        delete client;
}

void RpcServer::addMethod(const QString &method, Handler handler)
{
    m_deferred.remove(method);
    m_methods.insert(method, std::move(handler));
}

bool RpcServer::send(quint64 clientId, const QByteArray &frame)
{
    RpcConnection *client = m_clients.value(clientId);
    return client && client->send(frame);
}

qint64 RpcServer::pendingOutputBytes(quint64 clientId) const
{
    const RpcConnection *client = m_clients.value(clientId);
    return client ? client->pendingOutputBytes() : 0;
}

void RpcServer::acceptPending()
{
    while (m_server && m_server->hasPendingConnections()) {
        QLocalSocket *socket = m_server->nextPendingConnection();
        if (!socket)
            break;
        // Bounds what Qt buffers before we frame it; the framer bounds the rest.
        socket->setReadBufferSize(256 * 1024);
        const quint64 id = m_nextClientId++;
        auto peer = readPeerCredentials(int(socket->socketDescriptor()));
        const PeerCredentials credentials = peer.value_or(PeerCredentials {});
        auto *client = new RpcConnection(
            id, socket, credentials,
            [this](RpcConnection &c, const protocol::Message &m) { dispatch(c, m); }, this);
        m_clients.insert(id, client);
        connect(client, &RpcConnection::closed, this, &RpcServer::forget);
        connect(client, &RpcConnection::written, this, &RpcServer::clientWritten);
        if (peer && m_policy.allows(credentials)) {
            const uid_t uid = credentials.uid;
            const int mine = m_perUid.value(uid);
            QString full;
            if (uid == 0 && mine >= kMaxRootClients)
                full = QStringLiteral("airlockd already serves %1 clients of root").arg(mine);
            else if (uid != 0 && mine >= kMaxClientsPerUid)
                full = QStringLiteral("airlockd already serves %1 clients of uid %2, the most "
                                      "one user may have")
                           .arg(mine)
                           .arg(uid);
            else if (uid != 0 && m_unprivileged >= kMaxClients)
                full = QStringLiteral("airlockd already serves %1 clients").arg(m_unprivileged);
            if (!full.isEmpty()) {
                qCWarning(lcRpc, "refused client %llu (pid %d, uid %u): %s", id,
                          int(credentials.pid), unsigned(uid), qPrintable(full));
                client->sendAndClose(protocol::encodeError(
                    QJsonValue(QJsonValue::Null),
                    Error {ErrorKind::Busy,
                           full + QStringLiteral("; try again when some have disconnected")}));
                continue;
            }
            m_served.insert(id, uid);
            ++m_perUid[uid];
            if (uid != 0)
                ++m_unprivileged;
        }
        if (!peer || !m_policy.allows(credentials)) {
            const QString why = peer ? m_policy.refusal(credentials) : peer.error().message;
            qCWarning(lcRpc, "refused client %llu (pid %d, uid %u): %s", id, int(credentials.pid),
                      unsigned(credentials.uid), qPrintable(why));
            client->sendAndClose(protocol::encodeError(QJsonValue(QJsonValue::Null),
                                                       Error {ErrorKind::PermissionDenied, why}));
            continue;
        }
        qCDebug(lcRpc, "client %llu connected (pid %d, uid %u)", id, int(credentials.pid),
                unsigned(credentials.uid));
        client->start();
    }
    // QLocalServer stops listening for good when accept() fails (EMFILE); a helper that no
    // longer accepts anyone must say so loudly rather than sit there.
    if (m_server && !m_server->isListening())
        qCCritical(lcRpc, "stopped accepting connections on %s: %s", qPrintable(m_path),
                   qPrintable(m_server->errorString()));
}

void RpcServer::dispatch(RpcConnection &client, const protocol::Message &message)
{
    const bool wantsAnswer = message.type == protocol::Message::Type::Request;
    if (const auto deferred = m_deferred.constFind(message.method); deferred != m_deferred.cend()) {
        const quint64 id = client.id();
        const DeferredHandler call = *deferred;
        // Once, and only while this server exists (the caller may answer from a completion
        // that runs after shutdown began).
        auto answered = std::make_shared<bool>(false);
        Reply reply = [server = QPointer<RpcServer>(this), id, requestId = message.id, wantsAnswer,
                       method = message.method, answered](const Result<QJsonValue> &result) {
            if (*answered || !server || !wantsAnswer)
                return;
            *answered = true;
            const QByteArray frame = result ? protocol::encodeResult(requestId, *result)
                                            : protocol::encodeError(requestId, result.error());
            if (!server->send(id, frame))
                qCDebug(lcRpc, "client %llu left before the answer to '%s'", id,
                        qPrintable(method));
        };
        call(RpcContext {id, client.peer()}, message.params, std::move(reply));
        return;
    }
    const auto handler = m_methods.constFind(message.method);
    if (handler == m_methods.cend()) {
        if (wantsAnswer)
            client.send(protocol::encodeError(
                message.id,
                Error {ErrorKind::MethodNotFound,
                       QStringLiteral("unknown method '%1'").arg(message.method)}));
        return;
    }
    const quint64 id = client.id();
    const RpcContext context {id, client.peer()};
    // Copy: a handler may replace methods; and the call may outlive this client (it can
    // disconnect meanwhile, then the answer goes nowhere).
    const Handler call = *handler;
    const Result<QJsonValue> result = call(context, message.params);
    if (!wantsAnswer)
        return;
    const QByteArray frame = result ? protocol::encodeResult(message.id, *result)
                                    : protocol::encodeError(message.id, result.error());
    if (!send(id, frame))
        qCDebug(lcRpc, "client %llu left before the answer to '%s'", id,
                qPrintable(message.method));
}

void RpcServer::addDeferredMethod(const QString &method, DeferredHandler handler)
{
    m_methods.remove(method);
    m_deferred.insert(method, std::move(handler));
}

void RpcServer::forget(quint64 clientId)
{
    RpcConnection *client = m_clients.take(clientId);
    if (!client)
        return;
    if (const auto served = m_served.constFind(clientId); served != m_served.cend()) {
        const uid_t uid = *served;
        m_served.erase(served);
        if (--m_perUid[uid] <= 0)
            m_perUid.remove(uid);
        if (uid != 0)
            --m_unprivileged;
    }
    client->deleteLater();
    Q_EMIT clientDisconnected(clientId);
}

} // namespace airlock
