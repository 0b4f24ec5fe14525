#include "recordingserver.h"

#include "zlibcompressed.h"

#include "testca.h"

#include "netns.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

namespace airlock::redteam {

QList<QByteArray> HttpRequestRecord::values(const QByteArray &name) const
{
    QList<QByteArray> result;
    for (const auto &[key, value] : headers)
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            result << value;
    return result;
}

/// A connection's byte stream: plain fd or TLS on it. Every byte read is also handed to
/// `record` so the server's log holds all of it, parsed or not.
struct Stream
{
    int fd = -1;
    SSL *ssl = nullptr;
    std::function<void(const QByteArray &)> record;

    qint64 read(char *buffer, int size)
    {
        const qint64 n = ssl ? SSL_read(ssl, buffer, size) : ::recv(fd, buffer, size_t(size), 0);
        if (n > 0)
            record(QByteArray(buffer, qsizetype(n)));
        return n;
    }
    bool write(const QByteArray &bytes)
    {
        qsizetype done = 0;
        while (done < bytes.size()) {
            const qint64 n = ssl
                ? SSL_write(ssl, bytes.constData() + done, int(bytes.size() - done))
                : ::send(fd, bytes.constData() + done, size_t(bytes.size() - done), MSG_NOSIGNAL);
            if (n <= 0)
                return false;
            done += n;
        }
        return true;
    }
};

namespace {

constexpr int kReadTimeoutSeconds = 10;
constexpr qsizetype kMaxHead = 256 * 1024;

sockaddr_storage socketAddress(const QHostAddress &address, quint16 port, socklen_t *length)
{
    sockaddr_storage storage {};
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        const Q_IPV6ADDR bytes = address.toIPv6Address();
        std::memcpy(&in6->sin6_addr, bytes.c, 16);
        *length = sizeof(sockaddr_in6);
    } else {
        auto *in4 = reinterpret_cast<sockaddr_in *>(&storage);
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        in4->sin_addr.s_addr = htonl(address.toIPv4Address());
        *length = sizeof(sockaddr_in);
    }
    return storage;
}

QHostAddress peerAddress(const sockaddr_storage &storage)
{
    QHostAddress address(reinterpret_cast<const sockaddr *>(&storage));
    return address;
}

int servernameCallback(SSL *ssl, int *alert, void *arg)
{
    auto *ca = static_cast<TestCa *>(arg);
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (!name)
        return SSL_TLSEXT_ERR_NOACK; // keep the default certificate
    const auto leaf = ca->leaf(QString::fromLatin1(name));
    if (!leaf) {
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    SSL_use_certificate(ssl, leaf->certificate.get());
    SSL_use_PrivateKey(ssl, leaf->key.get());
    return SSL_TLSEXT_ERR_OK;
}

QByteArray response(int status, const QByteArray &reason, const QByteArray &body,
                    const QByteArray &extraHeaders, bool close)
{
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\n";
    out +=
        "Content-Type: text/plain\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += extraHeaders;
    out += close ? "Connection: close\r\n" : "Connection: keep-alive\r\n";
    return out + "\r\n" + body;
}

// The credential of an Authorization field: what follows "Bearer ", or the whole value.
QByteArray bearerToken(const HttpRequestRecord &request)
{
    const QByteArray value = request.values("Authorization").value(0);
    return value.startsWith("Bearer ") ? value.mid(7) : value;
}

} // namespace

RecordingServer::RecordingServer(int nsFd, TestCa *ca) : m_nsFd(nsFd), m_ca(ca) { }

RecordingServer::~RecordingServer()
{
    stop();
}

bool RecordingServer::start(const QList<ServerEndpoint> &endpoints)
{
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (m_ca) {
        SSL_CTX_set_tlsext_servername_callback(context, servernameCallback);
        SSL_CTX_set_tlsext_servername_arg(context, m_ca);
    }
    m_sslContext = context;
    m_wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    const bool bound = test::inNamespace(m_nsFd, [&] {
        for (const ServerEndpoint &endpoint : endpoints) {
            const bool v6 = endpoint.address.protocol() == QAbstractSocket::IPv6Protocol;
            const int type = endpoint.kind == ServerEndpoint::Kind::Udp ? SOCK_DGRAM : SOCK_STREAM;
            const int fd = ::socket(v6 ? AF_INET6 : AF_INET, type | SOCK_CLOEXEC, 0);
            const int one = 1;
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (v6)
                ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
            // Bind even to addresses that are not (yet) local, e.g. IPv6 before DAD.
            ::setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
            socklen_t length = 0;
            const sockaddr_storage local = socketAddress(endpoint.address, endpoint.port, &length);
            if (::bind(fd, reinterpret_cast<const sockaddr *>(&local), length) != 0
                || (type == SOCK_STREAM && ::listen(fd, 64) != 0)) {
                qWarning("recording server %s: bind %s port %u: %s", qPrintable(endpoint.label),
                         qPrintable(endpoint.address.toString()), endpoint.port,
                         std::strerror(errno));
                ::close(fd);
                return false;
            }
            m_listeners.append({endpoint, fd});
        }
        return true;
    });
    if (!bound) {
        stop();
        return false;
    }
    m_acceptor = std::thread([this] { acceptLoop(); });
    return true;
}

void RecordingServer::stop()
{
    if (m_stopping.exchange(true))
        return;
    if (m_wakeFd >= 0) {
        const quint64 one = 1;
        [[maybe_unused]] const auto n = ::write(m_wakeFd, &one, sizeof one);
    }
    if (m_acceptor.joinable())
        m_acceptor.join();
    std::vector<std::thread> handlers;
    {
        std::lock_guard lock(m_threadsMutex);
        for (int fd : m_openFds)
            ::shutdown(fd, SHUT_RDWR);
        handlers.swap(m_handlers);
    }
    for (std::thread &thread : handlers)
        thread.join();
    for (const Listener &listener : std::as_const(m_listeners))
        ::close(listener.fd);
    m_listeners.clear();
    if (m_wakeFd >= 0)
        ::close(m_wakeFd);
    m_wakeFd = -1;
    SSL_CTX_free(static_cast<SSL_CTX *>(m_sslContext));
    m_sslContext = nullptr;
}

QList<ConnectionRecord> RecordingServer::connections(const QString &label) const
{
    std::lock_guard lock(m_recordsMutex);
    QList<ConnectionRecord> result;
    for (size_t i = m_firstVisible; i < m_records.size(); ++i)
        if (label.isEmpty() || m_records[i].label == label)
            result << m_records[i];
    return result;
}

void RecordingServer::clear()
{
    std::lock_guard lock(m_recordsMutex);
    m_firstVisible = m_records.size();
}

size_t RecordingServer::addRecord(ConnectionRecord record)
{
    std::lock_guard lock(m_recordsMutex);
    m_records.push_back(std::move(record));
    return m_records.size() - 1;
}

void RecordingServer::update(size_t index, const std::function<void(ConnectionRecord &)> &change)
{
    std::lock_guard lock(m_recordsMutex);
    change(m_records[index]);
}

void RecordingServer::acceptLoop()
{
    std::vector<pollfd> fds;
    for (const Listener &listener : std::as_const(m_listeners))
        fds.push_back({listener.fd, POLLIN, 0});
    fds.push_back({m_wakeFd, POLLIN, 0});
    while (!m_stopping) {
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
            return;
        if (fds.back().revents)
            return;
        for (size_t i = 0; i + 1 < fds.size(); ++i) {
            if (!(fds[i].revents & POLLIN))
                continue;
            const Listener &listener = m_listeners[qsizetype(i)];
            sockaddr_storage peer {};
            socklen_t length = sizeof peer;
            if (listener.endpoint.kind == ServerEndpoint::Kind::Udp) {
                char buffer[65536];
                const ssize_t n = ::recvfrom(listener.fd, buffer, sizeof buffer, MSG_DONTWAIT,
                                             reinterpret_cast<sockaddr *>(&peer), &length);
                if (n < 0)
                    continue;
                ConnectionRecord record;
                record.label = listener.endpoint.label;
                record.port = listener.endpoint.port;
                record.kind = listener.endpoint.kind;
                record.peer = peerAddress(peer);
                record.received = QByteArray(buffer, qsizetype(n));
                addRecord(std::move(record));
                continue;
            }
            const int fd =
                ::accept4(listener.fd, reinterpret_cast<sockaddr *>(&peer), &length, SOCK_CLOEXEC);
            if (fd < 0)
                continue;
            const timeval timeout {kReadTimeoutSeconds, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
            ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
            // Pipelined answers must not wait for delayed ACKs (Nagle: 40 ms per answer).
            const int one = 1;
            if (listener.endpoint.kind != ServerEndpoint::Kind::Raw)
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ConnectionRecord record;
            record.label = listener.endpoint.label;
            record.port = listener.endpoint.port;
            record.kind = listener.endpoint.kind;
            record.peer = peerAddress(peer);
            const size_t index = addRecord(std::move(record));
            std::lock_guard lock(m_threadsMutex);
            m_openFds.push_back(fd);
            m_handlers.emplace_back(
                [this, index, fd, endpoint = listener.endpoint] { serve(index, fd, endpoint); });
        }
    }
}

void RecordingServer::serve(size_t index, int fd, ServerEndpoint endpoint)
{
    // OpenSSL writes with write(2): a peer that closed (a guest that gave up, the gateway
    // cutting a connection) must fail the write with EPIPE, not kill the test with SIGPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    Stream stream;
    stream.fd = fd;
    stream.record = [this, index](const QByteArray &bytes) {
        update(index, [&](ConnectionRecord &record) { record.received += bytes; });
    };
    SSL *ssl = nullptr;
    switch (endpoint.kind) {
    case ServerEndpoint::Kind::Raw: {
        char buffer[16384];
        while (!m_stopping && stream.read(buffer, sizeof buffer) > 0) { }
        break;
    }
    case ServerEndpoint::Kind::Https: {
        ssl = SSL_new(static_cast<SSL_CTX *>(m_sslContext));
        SSL_set_fd(ssl, fd);
        if (m_ca) {
            if (const auto leaf = m_ca->leaf(endpoint.defaultName)) {
                SSL_use_certificate(ssl, leaf->certificate.get());
                SSL_use_PrivateKey(ssl, leaf->key.get());
            }
        }
        const bool ok = SSL_accept(ssl) == 1;
        const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        update(index, [&](ConnectionRecord &record) {
            record.handshakeCompleted = ok;
            record.sni = name ? QString::fromLatin1(name) : QString();
        });
        ERR_clear_error();
        if (!ok)
            break;
        stream.ssl = ssl;
        serveHttp(index, stream, endpoint);
        SSL_shutdown(ssl);
        break;
    }
    case ServerEndpoint::Kind::Http:
        serveHttp(index, stream, endpoint);
        break;
    case ServerEndpoint::Kind::Udp:
        break;
    }
    if (ssl)
        SSL_free(ssl);
    std::lock_guard lock(m_threadsMutex);
    std::erase(m_openFds, fd);
    ::close(fd);
}

void RecordingServer::serveHttp(size_t index, Stream &stream, const ServerEndpoint &endpoint)
{
    QByteArray pending;
    char buffer[16384];
    auto fill = [&]() {
        const qint64 n = stream.read(buffer, sizeof buffer);
        if (n <= 0)
            return false;
        pending.append(buffer, qsizetype(n));
        return true;
    };
    auto takeLine = [&](QByteArray *line) {
        for (;;) {
            const qsizetype end = pending.indexOf("\r\n");
            if (end >= 0) {
                *line = pending.left(end);
                pending.remove(0, end + 2);
                return true;
            }
            if (pending.size() > kMaxHead || !fill())
                return false;
        }
    };
    auto takeBytes = [&](qsizetype count, QByteArray *out) {
        while (pending.size() < count)
            if (!fill())
                return false;
        *out += pending.left(count);
        pending.remove(0, count);
        return true;
    };

    while (!m_stopping) {
        qsizetype head;
        while ((head = pending.indexOf("\r\n\r\n")) < 0) {
            if (pending.size() > kMaxHead || !fill())
                return;
        }
        const QByteArray headBytes = pending.left(head + 4);
        pending.remove(0, head + 4);
        QList<QByteArray> lines = headBytes.left(head).split('\n');
        for (QByteArray &line : lines)
            if (line.endsWith('\r'))
                line.chop(1);
        HttpRequestRecord request;
        const QList<QByteArray> parts = lines.value(0).split(' ');
        request.method = parts.value(0);
        request.target = parts.value(1);
        const bool http10 = parts.value(2) == "HTTP/1.0";
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon > 0)
                request.headers.append({lines[i].left(colon), lines[i].mid(colon + 1).trimmed()});
        }
        // Body: chunked (RFC 9112 §7.1) or Content-Length; enough for what the gateway sends.
        const QList<QByteArray> te = request.values("Transfer-Encoding");
        if (!te.isEmpty() && te.last().toLower().contains("chunked")) {
            for (;;) {
                QByteArray sizeLine;
                if (!takeLine(&sizeLine))
                    return;
                bool ok = false;
                const qsizetype size = sizeLine.split(';').value(0).trimmed().toLongLong(&ok, 16);
                if (!ok)
                    return;
                if (size == 0) {
                    QByteArray trailer;
                    do {
                        if (!takeLine(&trailer))
                            return;
                    } while (!trailer.isEmpty());
                    break;
                }
                QByteArray crlf;
                if (!takeBytes(size, &request.body) || !takeBytes(2, &crlf))
                    return;
            }
        } else if (const QList<QByteArray> cl = request.values("Content-Length"); !cl.isEmpty()) {
            if (!takeBytes(cl.first().toLongLong(), &request.body))
                return;
        }
        const QByteArray host = request.values("Host").value(0);
        const bool close =
            http10 || request.values("Connection").value(0).toLower().contains("close");
        QString sni;
        update(index, [&](ConnectionRecord &record) {
            record.requests.append(request);
            sni = record.sni;
        });

        QByteArray reply;
        if (request.target == "/redirect-metadata") {
            reply =
                response(302, "Found", "moved\n", "Location: http://169.254.169.254/\r\n", close);
        } else if (request.target == "/redirect-evil") {
            reply = response(307, "Temporary Redirect", "moved\n",
                             "Location: https://evil.test/c\r\n", close);
        } else if (request.target.startsWith("/v1/hangup")) {
            // An upstream error after the request arrived: no answer, the connection closes.
            return;
        } else if (request.target.startsWith("/v1/unauthorized")) {
            // An API that reflects the token it refuses (docs/redteam-cases.md I3), in a header and
            // the body.
            const QByteArray token = bearerToken(request);
            reply = response(401, "Unauthorized", "invalid token " + token + "\n",
                             "WWW-Authenticate: Bearer error=\"invalid_token\", token=\"" + token
                                 + "\"\r\n",
                             close);
        } else if (request.target.startsWith("/v1/reflect-encoded")) {
            // The token base64- and percent-encoded, as chunks that split it: the gateway must
            // find every form across chunk boundaries and re-frame the body.
            const QByteArray token = bearerToken(request);
            const QByteArray body = "b64=" + token.toBase64() + " url=" + token.toPercentEncoding()
                + " raw=" + token + " json-b64=" + ("{\"token\":\"" + token + "\"}").toBase64()
                + "\n";
            QByteArray chunked = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 "Transfer-Encoding: chunked\r\n";
            chunked += close ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n";
            for (qsizetype at = 0; at < body.size(); at += 7) {
                const QByteArray piece = body.mid(at, 7);
                chunked += QByteArray::number(piece.size(), 16) + "\r\n" + piece + "\r\n";
            }
            reply = chunked + "0\r\n\r\n";
        } else if (request.target.startsWith("/v1/recall")) {
            // An upstream that keeps what it saw ("recent requests", audit pages): the
            // credential of the request before this one
            // (docs/reviews/2026-12-01-credentials-redteam.md#f7).
            std::lock_guard lock(m_recordsMutex);
            reply = response(200, "OK", "previous credential: " + m_lastToken + "\n", QByteArray(),
                             close);
        } else if (request.target.startsWith("/v1/coded-")) {
            // A compressing front end (docs/reviews/2026-12-01-credentials-redteam.md#f1): the
            // echo, coded whatever the request's Accept-Encoding says ("-if-asked": only when it
            // asks for gzip).
            const QByteArray echo = "label=" + endpoint.label.toLatin1() + "\n" + headBytes;
            const QByteArray coding = request.target.mid(10).split('?').value(0);
            QByteArray extra;
            QByteArray body = echo;
            if (coding == "gzip"
                || (coding == "gzip-if-asked"
                    && request.values("Accept-Encoding").value(0).contains("gzip"))) {
                body = airlock::test::zlibCompressed(echo, 15 + 16);
                extra = "Content-Encoding: gzip\r\n";
            } else if (coding == "deflate") {
                body = airlock::test::zlibCompressed(echo, 15);
                extra = "Content-Encoding: deflate\r\n";
            } else if (coding == "raw-deflate") {
                body = airlock::test::zlibCompressed(echo, -15);
                extra = "Content-Encoding: deflate\r\n";
            } else if (coding == "br") {
                extra = "Content-Encoding: br\r\n"; // not brotli at all: must never pass
            } else if (coding == "te-gzip") {
                // A transfer-coding under chunked (RFC 9112 §7): gzip, then chunked.
                const QByteArray gz = airlock::test::zlibCompressed(echo, 15 + 16);
                reply = QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n")
                    + (close ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n")
                    + QByteArray::number(gz.size(), 16) + "\r\n" + gz + "\r\n0\r\n\r\n";
            }
            if (reply.isEmpty())
                reply = response(200, "OK", body, extra, close);
        } else if (request.target.startsWith("/v1/range")) {
            // The echo with "Range: bytes=a-b" honoured
            // (docs/reviews/2026-12-01-credentials-redteam.md#f3); "/v1/range-always": 206 whatever
            // the request asked for.
            const QByteArray echo = "label=" + endpoint.label.toLatin1() + "\n" + headBytes;
            QByteArray range = request.values("Range").value(0);
            if (range.isEmpty() && request.target.startsWith("/v1/range-always"))
                range = "bytes=0-15";
            if (range.startsWith("bytes=")) {
                const QList<QByteArray> bounds = range.mid(6).split('-');
                const qsizetype first = bounds.value(0).toLongLong();
                const qsizetype last =
                    qMin<qsizetype>(bounds.value(1).toLongLong(), echo.size() - 1);
                reply = response(206, "Partial Content", echo.mid(first, last - first + 1),
                                 "Content-Range: bytes " + QByteArray::number(first) + '-'
                                     + QByteArray::number(last) + '/'
                                     + QByteArray::number(echo.size()) + "\r\n",
                                 close);
            } else {
                reply = response(200, "OK", echo, QByteArray(), close);
            }
        } else {
            const QByteArray body = "label=" + endpoint.label.toLatin1() + " sni=" + sni.toLatin1()
                + " host=" + host + " target=" + request.target + "\n" + headBytes;
            reply = response(200, "OK", body, QByteArray(), close);
        }
        if (const QByteArray token = bearerToken(request); !token.isEmpty()) {
            std::lock_guard lock(m_recordsMutex);
            m_lastToken = token;
        }
        if (!stream.write(reply) || close)
            return;
    }
}

} // namespace airlock::redteam
