#include "core/e2b/httpconnection.h"

#include "core/e2b/apierror.h"

#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <sstream>

namespace airlock::e2b {

namespace http = boost::beast::http;

namespace {

// A request head larger than this is refused (431); the SDK's are under 2 KiB.
constexpr std::uint32_t kHeaderLimit = 32 * 1024;
// Qt stops reading from the kernel beyond this; the peer then waits on TCP.
constexpr qint64 kSocketReadBuffer = 1024 * 1024;

template<typename Buffers>
QByteArray flatten(const Buffers &buffers)
{
    QByteArray out;
    out.resize(qsizetype(boost::asio::buffer_size(buffers)));
    boost::asio::buffer_copy(boost::asio::buffer(out.data(), size_t(out.size())), buffers);
    return out;
}

template<typename Message>
QByteArray serialize(const Message &message)
{
    std::ostringstream os;
    os << message;
    const std::string text = os.str();
    return QByteArray(text.data(), qsizetype(text.size()));
}

} // namespace

struct HttpConnection::Parser
{
    http::request_parser<http::string_body> parser;
    bool headDone = false;
};

HttpConnection::HttpConnection(QTcpSocket *socket, BodyLimit bodyLimit, QObject *parent)
    : QObject(parent), m_socket(socket), m_bodyLimit(std::move(bodyLimit))
{
    m_socket->setParent(this);
    m_socket->setReadBufferSize(kSocketReadBuffer);
    connect(m_socket, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_socket, &QTcpSocket::bytesWritten, this, &HttpConnection::bytesWritten);
    connect(m_socket, &QTcpSocket::disconnected, this, &HttpConnection::close);
    QTimer::singleShot(0, this, &HttpConnection::onReadyRead);
}

HttpConnection::~HttpConnection() = default;

bool HttpConnection::isOpen() const
{
    return !m_closed;
}

qint64 HttpConnection::pendingBytes() const
{
    return m_closed ? 0 : m_socket->bytesToWrite();
}

void HttpConnection::onReadyRead()
{
    if (m_closed || m_busy)
        return;
    m_in.append(m_socket->readAll());
    parse();
}

void HttpConnection::parse()
{
    while (!m_busy && !m_closed && !m_in.isEmpty()) {
        if (!m_parser) {
            m_parser = std::make_unique<Parser>();
            m_parser->parser.header_limit(kHeaderLimit);
            m_parser->parser.body_limit(std::uint64_t(kMaxBodyBytes));
            // Stop after the head: the route's own limit is known only then.
            m_parser->parser.eager(false);
        }
        auto &parser = m_parser->parser;
        boost::beast::error_code ec;
        const size_t used =
            parser.put(boost::asio::buffer(m_in.constData(), size_t(m_in.size())), ec);
        m_in.remove(0, qsizetype(used));
        if (ec == http::error::need_more) {
            if (used == 0)
                return;
            ec = {};
        }
        if (ec == http::error::body_limit) {
            fail(413,
                 QStringLiteral("request body over %1 bytes")
                     .arg(m_routeLimit > 0 ? m_routeLimit : kMaxBodyBytes));
            return;
        }
        if (ec == http::error::header_limit) {
            fail(431, QStringLiteral("request head over %1 bytes").arg(kHeaderLimit));
            return;
        }
        if (ec) {
            fail(400,
                 QStringLiteral("malformed HTTP request: %1")
                     .arg(QString::fromStdString(ec.message())));
            return;
        }
        if (parser.is_header_done() && !m_parser->headDone) {
            m_parser->headDone = true;
            const auto &head = parser.get();
            HttpRequest request;
            request.method =
                QByteArray(head.method_string().data(), qsizetype(head.method_string().size()));
            const QByteArray target(head.target().data(), qsizetype(head.target().size()));
            request.path = QUrl::fromPercentEncoding(
                target.left(target.indexOf('?') < 0 ? target.size() : target.indexOf('?')));
            m_routeLimit = m_bodyLimit(request);
            const auto length = parser.content_length();
            if (length && *length > std::uint64_t(m_routeLimit)) {
                fail(413,
                     QStringLiteral("request body of %1 bytes is over the limit of %2 bytes for %3")
                         .arg(*length)
                         .arg(m_routeLimit)
                         .arg(request.path));
                return;
            }
            parser.eager(true);
        }
        if (m_parser->headDone && qint64(parser.get().body().size()) > m_routeLimit) {
            fail(413, QStringLiteral("request body over the limit of %1 bytes").arg(m_routeLimit));
            return;
        }
        if (!parser.is_done()) {
            if (used == 0)
                return;
            continue;
        }
        auto message = parser.release();
        m_parser.reset();
        HttpRequest request;
        request.method =
            QByteArray(message.method_string().data(), qsizetype(message.method_string().size()));
        const QByteArray target(message.target().data(), qsizetype(message.target().size()));
        const qsizetype question = target.indexOf('?');
        request.path = QUrl::fromPercentEncoding(question < 0 ? target : target.left(question));
        if (question >= 0)
            request.query = QUrlQuery(QString::fromUtf8(target.mid(question + 1)));
        for (const auto &field : message) {
            request.headers.insert(
                QByteArray(field.name_string().data(), qsizetype(field.name_string().size()))
                    .toLower(),
                QByteArray(field.value().data(), qsizetype(field.value().size())));
        }
        request.body = QByteArray(message.body().data(), qsizetype(message.body().size()));
        m_keepAlive = message.keep_alive();
        m_busy = true;
        Q_EMIT requestReceived(request);
    }
}

void HttpConnection::respond(const HttpResponse &response)
{
    if (m_closed)
        return;
    http::response<http::string_body> message {http::status(unsigned(response.status)), 11};
    message.set(http::field::server, "airlock-e2b");
    if (!response.contentType.isEmpty())
        message.set(http::field::content_type, response.contentType.toStdString());
    for (const auto &[name, value] : response.headers)
        message.set(name.toStdString(), value.toStdString());
    message.body().assign(response.body.constData(), size_t(response.body.size()));
    message.keep_alive(m_keepAlive);
    message.prepare_payload();
    writeRaw(serialize(message));
    m_busy = false;
    if (!m_keepAlive) {
        m_socket->disconnectFromHost();
        return;
    }
    QTimer::singleShot(0, this, &HttpConnection::onReadyRead);
}

void HttpConnection::beginStream(int status, const QByteArray &contentType,
                                 const QList<std::pair<QByteArray, QByteArray>> &headers)
{
    if (m_closed)
        return;
    http::response<http::empty_body> message {http::status(unsigned(status)), 11};
    message.set(http::field::server, "airlock-e2b");
    message.set(http::field::content_type, contentType.toStdString());
    for (const auto &[name, value] : headers)
        message.set(name.toStdString(), value.toStdString());
    message.keep_alive(m_keepAlive);
    message.chunked(true);
    writeRaw(serialize(message.base()));
    m_streaming = true;
}

void HttpConnection::writeChunk(const QByteArray &bytes)
{
    if (m_closed || !m_streaming || bytes.isEmpty())
        return;
    writeRaw(flatten(
        http::make_chunk(boost::asio::const_buffer(bytes.constData(), size_t(bytes.size())))));
}

void HttpConnection::finishStream()
{
    if (m_closed || !m_streaming)
        return;
    writeRaw(flatten(http::make_chunk_last()));
    m_streaming = false;
    m_busy = false;
    if (!m_keepAlive) {
        m_socket->disconnectFromHost();
        return;
    }
    QTimer::singleShot(0, this, &HttpConnection::onReadyRead);
}

void HttpConnection::fail(int status, const QString &message)
{
    // The rest of the connection cannot be framed any more: answer, then close.
    m_keepAlive = false;
    m_busy = true;
    m_parser.reset();
    m_in.clear();
    HttpResponse response;
    response.status = status;
    response.body = apiErrorBody(status, message);
    respond(response);
}

void HttpConnection::writeRaw(const QByteArray &bytes)
{
    m_socket->write(bytes);
}

void HttpConnection::close()
{
    if (m_closed)
        return;
    m_closed = true;
    Q_EMIT closed();
    deleteLater();
}

} // namespace airlock::e2b
