#include "core/fcctl/firecrackerapiclient.h"

#include "core/model/printabletext.h"

#include <QJsonDocument>
#include <QLocalSocket>
#include <QPointer>
#include <QTimer>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>

namespace airlock {

namespace http = boost::beast::http;
using namespace firecracker;

namespace {
constexpr std::uint32_t kHeaderLimit = 8 * 1024;
constexpr std::uint64_t kBodyLimit = 64 * 1024;
constexpr qsizetype kMaxFaultChars = 500;

/// A fault message as Airlock repeats it: printable, bounded (the VMM may be hostile).
QString faultText(const std::string &body)
{
    const QJsonObject object = QJsonDocument::fromJson(QByteArray::fromStdString(body)).object();
    QString fault = object.value(QStringLiteral("fault_message")).toString();
    if (fault.isEmpty())
        fault = QStringLiteral("(no fault message)");
    return printableText(fault.left(kMaxFaultChars));
}
} // namespace

/// One request on its own connection.
class FirecrackerApiClient::Request : public QObject
{
public:
    Request(FirecrackerApiClient *client, QByteArray method, QString path, QByteArray wire,
            int timeoutMs, Reply reply)
        : QObject(client)
        , m_client(client)
        , m_method(std::move(method))
        , m_path(std::move(path))
        , m_wire(std::move(wire))
        , m_reply(std::move(reply))
    {
        m_parser.header_limit(kHeaderLimit);
        m_parser.body_limit(kBodyLimit);
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            finish(fail(ErrorKind::Timeout,
                        QStringLiteral("Firecracker did not answer %1 in %2 ms")
                            .arg(endpoint())
                            .arg(m_timer.interval())));
        });
        m_timer.start(timeoutMs);
    }

    QString endpoint() const { return QString::fromLatin1(m_method) + u' ' + m_path; }

    void begin(const QString &socketPath)
    {
        m_socket = new QLocalSocket(this);
        connect(m_socket, &QLocalSocket::readyRead, this, &Request::onReadyRead);
        connect(m_socket, &QLocalSocket::disconnected, this, [this] {
            onReadyRead();
            if (m_reply)
                finish(fail(ErrorKind::Disconnected,
                            QStringLiteral("Firecracker closed the connection before answering %1")
                                .arg(endpoint())));
        });
        // By path, unpinned: airlock-fcctl runs as the VMM user, who owns the directory anyway.
        m_socket->connectToServer(socketPath);
        // A Unix socket connects inside connectToServer() or not at all.
        if (m_socket->state() != QLocalSocket::ConnectedState) {
            // Refused: the socket is there, but Firecracker does not listen on it yet.
            const bool absent = m_socket->error() == QLocalSocket::ServerNotFoundError
                || m_socket->error() == QLocalSocket::ConnectionRefusedError;
            return finishLater(fail(absent ? ErrorKind::NotFound : ErrorKind::OperationFailed,
                                    QStringLiteral("cannot connect to Firecracker's API socket "
                                                   "for %1: %2")
                                        .arg(endpoint(), m_socket->errorString())));
        }
        m_socket->write(m_wire);
    }

    void abort()
    {
        finishLater(fail(ErrorKind::Disconnected,
                         QStringLiteral("Firecracker exited before answering %1").arg(endpoint())));
    }

private:
    void onReadyRead()
    {
        if (!m_reply || !m_socket)
            return;
        const QByteArray bytes = m_socket->readAll();
        m_in.append(bytes);
        boost::beast::error_code ec;
        while (!m_in.isEmpty() && !m_parser.is_done()) {
            const std::size_t used =
                m_parser.put(boost::asio::buffer(m_in.constData(), size_t(m_in.size())), ec);
            m_in.remove(0, qsizetype(used));
            if (ec == http::error::need_more) {
                ec = {};
                break;
            }
            if (ec)
                return finish(fail(ErrorKind::OperationFailed,
                                   QStringLiteral("Firecracker's answer to %1 is not HTTP: %2")
                                       .arg(endpoint(), QString::fromStdString(ec.message()))));
            if (used == 0)
                break;
        }
        if (!m_parser.is_done())
            return;
        const auto &response = m_parser.get();
        const unsigned status = response.result_int();
        if (status == 204)
            return finish(QJsonObject {});
        if (status == 200) {
            QJsonParseError error {};
            const QJsonDocument document =
                QJsonDocument::fromJson(QByteArray::fromStdString(response.body()), &error);
            if (error.error != QJsonParseError::NoError || !document.isObject())
                return finish(fail(ErrorKind::OperationFailed,
                                   QStringLiteral("Firecracker's answer to %1 is not a JSON object")
                                       .arg(endpoint())));
            return finish(document.object());
        }
        finish(fail(ErrorKind::OperationFailed,
                    QStringLiteral("Firecracker refused %1 (%2): %3")
                        .arg(endpoint())
                        .arg(status)
                        .arg(faultText(response.body()))));
    }

    void finishLater(const Result<QJsonObject> &result)
    {
        QTimer::singleShot(0, this, [this, result] { finish(result); });
    }

    void finish(const Result<QJsonObject> &result)
    {
        if (!m_reply)
            return;
        m_timer.stop();
        Reply reply = std::exchange(m_reply, {});
        if (m_socket) {
            m_socket->disconnect(this);
            m_socket->abort();
        }
        // The client may be destroyed by the callback (the VMM ends); this request goes with it.
        QPointer<FirecrackerApiClient> client = m_client;
        reply(result);
        if (client)
            client->finished(this);
    }

    FirecrackerApiClient *m_client;
    QByteArray m_method;
    QString m_path;
    QByteArray m_wire;
    Reply m_reply;
    QLocalSocket *m_socket = nullptr;
    QByteArray m_in;
    http::response_parser<http::string_body> m_parser;
    QTimer m_timer;
};

FirecrackerApiClient::FirecrackerApiClient(QString socketPath, QObject *parent)
    : QObject(parent), m_socketPath(std::move(socketPath))
{ }

FirecrackerApiClient::~FirecrackerApiClient()
{
    // The requests are children; their callbacks must not run any more.
    m_requests.clear();
}

void FirecrackerApiClient::send(const QByteArray &method, const QString &path,
                                const QJsonObject &body, bool hasBody, int timeoutMs, Reply reply)
{
    QByteArray wire = method + ' ' + path.toUtf8()
        + " HTTP/1.1\r\nHost: localhost\r\n"
          "Accept: application/json\r\n";
    if (hasBody) {
        const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
        wire += "Content-Type: application/json\r\nContent-Length: "
            + QByteArray::number(json.size()) + "\r\n\r\n" + json;
    } else {
        wire += "\r\n";
    }
    auto *request = new Request(this, method, path, std::move(wire), timeoutMs, std::move(reply));
    m_requests.push_back(request);
    request->begin(m_socketPath);
}

void FirecrackerApiClient::finished(Request *request)
{
    std::erase(m_requests, request);
    request->deleteLater();
}

void FirecrackerApiClient::abortAll()
{
    for (Request *request : std::vector<Request *>(m_requests))
        request->abort();
}

namespace {
FirecrackerApiClient::Reply toDone(FirecrackerApiClient::Done done)
{
    return [done = std::move(done)](const Result<QJsonObject> &reply) {
        if (done)
            done(reply ? Result<void>() : Result<void>(std::unexpected(reply.error())));
    };
}
} // namespace

void FirecrackerApiClient::getVersion(std::function<void(const Result<FirecrackerVersion> &)> done)
{
    send("GET", QStringLiteral("/version"), {}, false, kDefaultTimeoutMs,
         [done = std::move(done)](const Result<QJsonObject> &reply) {
             if (!reply)
                 return done(std::unexpected(reply.error()));
             const auto version = FirecrackerVersion::fromJson(*reply);
             if (!version)
                 return done(fail(ErrorKind::OperationFailed,
                                  QStringLiteral("Firecracker's GET /version answer names no "
                                                 "version Airlock can read")));
             done(*version);
         });
}

void FirecrackerApiClient::getInstanceState(std::function<void(const Result<QString> &)> done)
{
    send("GET", QStringLiteral("/"), {}, false, kDefaultTimeoutMs,
         [done = std::move(done)](const Result<QJsonObject> &reply) {
             if (!reply)
                 return done(std::unexpected(reply.error()));
             done(printableText(reply->value(QStringLiteral("state")).toString().left(32)));
         });
}

void FirecrackerApiClient::putLogger(const Logger &logger, Done done)
{
    send("PUT", QStringLiteral("/logger"), logger.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putMachineConfig(const MachineConfig &config, Done done)
{
    send("PUT", QStringLiteral("/machine-config"), config.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putBootSource(const BootSource &source, Done done)
{
    send("PUT", QStringLiteral("/boot-source"), source.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putDrive(const Drive &drive, Done done)
{
    send("PUT", QStringLiteral("/drives/") + drive.driveId, drive.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putNetworkInterface(const NetworkInterface &interface, Done done)
{
    send("PUT", QStringLiteral("/network-interfaces/") + interface.ifaceId, interface.toJson(),
         true, kDefaultTimeoutMs, toDone(std::move(done)));
}

void FirecrackerApiClient::putVsock(const Vsock &vsock, Done done)
{
    send("PUT", QStringLiteral("/vsock"), vsock.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putEntropy(const EntropyDevice &entropy, Done done)
{
    send("PUT", QStringLiteral("/entropy"), entropy.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::putAction(const InstanceActionInfo &action, Done done)
{
    send("PUT", QStringLiteral("/actions"), action.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::patchVm(const VmState &state, Done done)
{
    send("PATCH", QStringLiteral("/vm"), state.toJson(), true, kDefaultTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::createSnapshot(const SnapshotCreateParams &params, Done done)
{
    send("PUT", QStringLiteral("/snapshot/create"), params.toJson(), true, kSnapshotTimeoutMs,
         toDone(std::move(done)));
}

void FirecrackerApiClient::loadSnapshot(const SnapshotLoadParams &params, Done done)
{
    send("PUT", QStringLiteral("/snapshot/load"), params.toJson(), true, kSnapshotTimeoutMs,
         toDone(std::move(done)));
}

} // namespace airlock
