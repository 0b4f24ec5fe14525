#include "core/e2b/e2bserver.h"

#include "core/e2b/apierror.h"
#include "core/e2b/apikeystore.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace airlock::e2b {

Q_LOGGING_CATEGORY(lcE2b, "airlock.e2b")

E2bServer::E2bServer(HelperClient *helper, QByteArray apiKey, SandboxRegistry *registry,
                     QObject *parent)
    : QObject(parent)
    , m_helper(helper)
    , m_apiKey(std::move(apiKey))
    , m_registry(registry)
    , m_control(E2bContext {helper, registry})
    , m_envd(E2bContext {helper, registry})
{
    connect(&m_server, &QTcpServer::newConnection, this, &E2bServer::onNewConnection);
    connect(m_registry, &SandboxRegistry::expired, this, &E2bServer::onExpired);
}

E2bServer::~E2bServer() = default;

Result<void> E2bServer::listen(quint16 port)
{
    if (!m_server.listen(QHostAddress::LocalHost, port))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot listen on 127.0.0.1:%1: %2")
                        .arg(port)
                        .arg(m_server.errorString()));
    return {};
}

quint16 E2bServer::port() const
{
    return m_server.serverPort();
}

void E2bServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection()) {
        // A response goes out as several small writes (head, then Connect envelopes): with
        // Nagle's algorithm the second waits for the client's delayed ACK, 40 ms per call.
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        auto *connection = new HttpConnection(
            socket,
            [](const HttpRequest &head) {
                return head.path == QLatin1String("/files") ? EnvdService::kMaxUploadBytes
                                                            : kMaxRequestBytes;
            },
            this);
        const QPointer<HttpConnection> guarded(connection);
        connect(connection, &HttpConnection::requestReceived, this,
                [this, guarded](const HttpRequest &request) { onRequest(guarded, request); });
    }
}

void E2bServer::onRequest(const QPointer<HttpConnection> &connection, const HttpRequest &request)
{
    if (!connection)
        return;
    if (EnvdService::handles(request))
        return m_envd.handle(connection, request);
    if (!ApiKeyStore::equalKeys(request.header("x-api-key"), m_apiKey)) {
        HttpResponse response;
        response.status = 401;
        response.body = apiErrorBody(401,
                                     QStringLiteral("invalid API key: use the one airlock-e2b "
                                                    "--print-env prints"));
        return connection->respond(response);
    }
    if (ControlApi::handles(request))
        return m_control.handle(connection, request);
    HttpResponse response;
    response.status = 404;
    response.body = apiErrorBody(404, QStringLiteral("no such endpoint: %1").arg(request.path));
    connection->respond(response);
}

void E2bServer::onExpired(const QString &id)
{
    m_control.kill(id, [id](const Result<void> &result) {
        if (!result)
            qCWarning(lcE2b, "sandbox %s expired, but could not be killed: %s", qPrintable(id),
                      qPrintable(result.error().message));
        else
            qCInfo(lcE2b, "sandbox %s expired and was killed", qPrintable(id));
    });
}

} // namespace airlock::e2b
