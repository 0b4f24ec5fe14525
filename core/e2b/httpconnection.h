#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QUrlQuery>

#include <functional>
#include <memory>
#include <utility>

class QTcpSocket;

namespace airlock::e2b {

/// One parsed HTTP/1.1 request (RFC 9112), as Boost.Beast's request parser delivered it.
struct HttpRequest
{
    QByteArray method;
    /// The decoded path of the target, without the query.
    QString path;
    QUrlQuery query;
    /// Field names lower-cased; a repeated field keeps its last value.
    QMap<QByteArray, QByteArray> headers;
    QByteArray body;

    QByteArray header(const QByteArray &lowerName) const { return headers.value(lowerName); }
};

/// A whole response with its body.
struct HttpResponse
{
    int status = 200;
    QByteArray contentType = "application/json";
    QByteArray body;
    QList<std::pair<QByteArray, QByteArray>> headers;
};

/// One accepted TCP connection of airlock-e2b: feeds the socket's bytes to
/// `boost::beast::http::request_parser` (no parser of our own), hands each complete request to
/// the handler, and writes the answer, serialized by Beast: a whole response, or a chunked one
/// for streams (Connect server streaming, file downloads). Requests are served one at a time
/// in order (keep-alive; the next one is parsed only once the answer to the last is done).
///
/// Bodies are bounded: `bodyLimit(request head)` says how many bytes a request may carry; a
/// larger Content-Length, or a chunked body that grows past it, is answered 413 with the limit
/// in the message and the connection closed.
class HttpConnection : public QObject
{
    Q_OBJECT
public:
    /// The most any request may carry (the largest route limit).
    static constexpr qint64 kMaxBodyBytes = 256LL * 1024 * 1024;

    using BodyLimit = std::function<qint64(const HttpRequest &head)>;
    /// Takes ownership of the socket.
    HttpConnection(QTcpSocket *socket, BodyLimit bodyLimit, QObject *parent = nullptr);
    ~HttpConnection() override;

    /// Answers the current request; the next one is read afterwards.
    void respond(const HttpResponse &response);
    /// Starts a chunked answer to the current request; then writeChunk(), then finishStream().
    void beginStream(int status, const QByteArray &contentType,
                     const QList<std::pair<QByteArray, QByteArray>> &headers = {});
    void writeChunk(const QByteArray &bytes);
    void finishStream();
    /// Bytes written to the socket and not yet sent (backpressure for streams).
    qint64 pendingBytes() const;
    bool isOpen() const;

Q_SIGNALS:
    void requestReceived(const airlock::e2b::HttpRequest &request);
    /// The peer went away (or we closed); emitted once. The object deletes itself later.
    void closed();
    /// Bytes of a stream left the socket (see pendingBytes()).
    void bytesWritten();

private:
    void onReadyRead();
    void parse();
    void fail(int status, const QString &message);
    void writeRaw(const QByteArray &bytes);
    void close();

    struct Parser;
    QTcpSocket *m_socket;
    BodyLimit m_bodyLimit;
    std::unique_ptr<Parser> m_parser;
    QByteArray m_in;
    qint64 m_routeLimit = 0;
    bool m_busy = false;
    bool m_streaming = false;
    bool m_keepAlive = true;
    bool m_closed = false;
};

} // namespace airlock::e2b
