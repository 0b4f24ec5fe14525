#include "recordingserver.h"

#include "zlibcompressed.h"

#include "testca.h"

#include "guestclient.h"
#include "netns.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

namespace airlock::test {

QList<QByteArray> HttpRequestRecord::values(const QByteArray &name) const
{
    QList<QByteArray> result;
    for (const auto &[key, value] : headers)
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            result << value;
    return result;
}

/// One accepted connection, shared by its handler thread and settle(). The handler holds
/// `busy` whenever it is not waiting for the peer, so whoever holds `busy` sees a handler that
/// has recorded (and parsed) everything it read, or one that has not started yet.
struct ServedConnection
{
    int fd = -1;
    std::mutex busy;
    SSL *ssl = nullptr; ///< under busy
    bool done = false; ///< under busy: the handler is finished, fd about to close
};

namespace {

constexpr int kReadTimeoutMs = 10000;

} // namespace

/// A connection's byte stream: plain fd or TLS on it, non-blocking underneath. Every byte read
/// is also handed to `record` so the server's log holds all of it, parsed or not. `busy` is
/// released only while waiting for the peer (see ServedConnection).
struct Stream
{
    int fd = -1;
    SSL *ssl = nullptr;
    std::unique_lock<std::mutex> *busy = nullptr;
    std::function<void()> waiting;
    std::function<void(const QByteArray &)> record;

    /// Waits for `events` without holding `busy`; false after kReadTimeoutMs.
    bool wait(short events)
    {
        busy->unlock();
        waiting();
        pollfd entry {fd, events, 0};
        int ready;
        do
            ready = ::poll(&entry, 1, kReadTimeoutMs);
        while (ready < 0 && errno == EINTR);
        busy->lock();
        return ready == 1;
    }
    /// For SSL_ERROR_WANT_READ/WRITE: waits for it; false for any other code or on timeout.
    bool waitFor(int code)
    {
        if (code == SSL_ERROR_WANT_READ)
            return wait(POLLIN);
        if (code == SSL_ERROR_WANT_WRITE)
            return wait(POLLOUT);
        return false;
    }
    qint64 read(char *buffer, int size)
    {
        for (;;) {
            qint64 n;
            if (ssl) {
                n = SSL_read(ssl, buffer, size);
                if (n <= 0) {
                    if (waitFor(SSL_get_error(ssl, int(n))))
                        continue;
                    return n;
                }
            } else {
                n = ::recv(fd, buffer, size_t(size), MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                    if (!wait(POLLIN))
                        return -1;
                    continue;
                }
            }
            if (n > 0)
                record(QByteArray(buffer, qsizetype(n)));
            return n;
        }
    }
    bool write(const QByteArray &bytes)
    {
        qsizetype done = 0;
        while (done < bytes.size()) {
            qint64 n;
            if (ssl) {
                n = SSL_write(ssl, bytes.constData() + done, int(bytes.size() - done));
                if (n <= 0) {
                    if (waitFor(SSL_get_error(ssl, int(n))))
                        continue;
                    return false;
                }
            } else {
                n = ::send(fd, bytes.constData() + done, size_t(bytes.size() - done),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                    if (!wait(POLLOUT))
                        return false;
                    continue;
                }
                if (n <= 0)
                    return false;
            }
            done += n;
        }
        return true;
    }
};

namespace {

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
    const auto *endpoint = static_cast<const ServerEndpoint *>(SSL_get_app_data(ssl));
    if (endpoint && !endpoint->certificateName.isEmpty())
        return SSL_TLSEXT_ERR_OK; // the same (wrong) certificate for every name
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

bool RecordingServer::start(const QList<ServerEndpoint> &endpoints, const Barrier &barrier)
{
    m_barrier = barrier;
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (m_ca) {
        // SSL_CTX_set_tlsext_servername_callback spelled out: the macro casts the callback
        // in C style; OpenSSL calls it with its own signature again.
        SSL_CTX_callback_ctrl(context, SSL_CTRL_SET_TLSEXT_SERVERNAME_CB,
                              reinterpret_cast<void (*)()>(servernameCallback));
        SSL_CTX_set_tlsext_servername_arg(context, m_ca);
    }
    m_sslContext = context;
    m_wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    QList<Listener> wanted;
    for (const ServerEndpoint &endpoint : endpoints)
        wanted.append({endpoint, -1, false});
    if (!barrier.address.isNull())
        wanted.append({ServerEndpoint {QStringLiteral("barrier"), barrier.address, kBarrierPort,
                                       ServerEndpoint::Kind::Raw, QString()},
                       -1, true});
    const bool bound = inNamespace(m_nsFd, [&] {
        for (Listener &listener : wanted) {
            const ServerEndpoint &endpoint = listener.endpoint;
            const bool v6 = endpoint.address.protocol() == QAbstractSocket::IPv6Protocol;
            const int type = endpoint.kind == ServerEndpoint::Kind::Udp ? SOCK_DGRAM : SOCK_STREAM;
            // Non-blocking: the acceptor takes everything that waits, then polls again.
            const int fd =
                ::socket(v6 ? AF_INET6 : AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
            listener.fd = fd;
            m_listeners.append(listener);
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
    progressed(); // a waiting settle() gives up
    std::vector<std::thread> handlers;
    {
        std::lock_guard lock(m_threadsMutex);
        for (const auto &connection : m_open)
            ::shutdown(connection->fd, SHUT_RDWR);
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

QList<HttpRequestRecord> RecordingServer::requests(const QString &label, quint16 port) const
{
    QList<HttpRequestRecord> result;
    for (const ConnectionRecord &record : connections(label)) {
        if (port == 0 || record.port == port)
            result += record.requests;
    }
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

void RecordingServer::progressed()
{
    {
        std::lock_guard lock(m_progressMutex);
        ++m_progress;
    }
    m_progressChanged.notify_all();
}

void RecordingServer::acceptLoop()
{
    std::vector<pollfd> fds;
    for (const Listener &listener : std::as_const(m_listeners))
        fds.push_back({listener.fd, POLLIN, 0});
    fds.push_back({m_wakeFd, POLLIN, 0});
    std::unique_lock busy(m_acceptBusy, std::defer_lock);
    while (!m_stopping) {
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
            return;
        if (fds.back().revents)
            return;
        busy.lock();
        for (size_t i = 0; i + 1 < fds.size(); ++i) {
            if (fds[i].revents & POLLIN)
                acceptPending(m_listeners[qsizetype(i)]);
        }
        busy.unlock();
        progressed();
    }
}

void RecordingServer::acceptPending(const Listener &listener)
{
    for (;;) {
        sockaddr_storage peer {};
        socklen_t length = sizeof peer;
        if (listener.endpoint.kind == ServerEndpoint::Kind::Udp) {
            char buffer[65536];
            const ssize_t n = ::recvfrom(listener.fd, buffer, sizeof buffer, MSG_DONTWAIT,
                                         reinterpret_cast<sockaddr *>(&peer), &length);
            if (n < 0)
                return;
            ConnectionRecord record;
            record.label = listener.endpoint.label;
            record.port = listener.endpoint.port;
            record.kind = listener.endpoint.kind;
            record.peer = peerAddress(peer);
            record.received = QByteArray(buffer, qsizetype(n));
            addRecord(std::move(record));
            continue;
        }
        const int fd = ::accept4(listener.fd, reinterpret_cast<sockaddr *>(&peer), &length,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (listener.barrier) {
            std::lock_guard lock(m_threadsMutex);
            m_handlers.emplace_back([this, fd] { serveBarrier(fd); });
            continue;
        }
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
        auto connection = std::make_shared<ServedConnection>();
        connection->fd = fd;
        std::lock_guard lock(m_threadsMutex);
        m_open.push_back(connection);
        m_handlers.emplace_back([this, index, connection, endpoint = listener.endpoint] {
            serve(index, connection, endpoint);
        });
    }
}

bool RecordingServer::quiet(int timeoutMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    std::vector<pollfd> listeners;
    for (const Listener &listener : std::as_const(m_listeners)) {
        if (!listener.barrier)
            listeners.push_back({listener.fd, POLLIN, 0});
    }
    for (;;) {
        quint64 seen;
        {
            std::lock_guard lock(m_progressMutex);
            seen = m_progress;
        }
        bool waiting = false;
        {
            // The acceptor is polling (not between poll and accept) and no listener has a
            // connection or datagram waiting.
            std::lock_guard busy(m_acceptBusy);
            waiting = ::poll(listeners.data(), listeners.size(), 0) > 0;
        }
        if (!waiting) {
            std::vector<std::shared_ptr<ServedConnection>> open;
            {
                std::lock_guard lock(m_threadsMutex);
                open = m_open;
            }
            for (const auto &connection : open) {
                // The handler is waiting for the peer (or has not started): what it read is
                // recorded; bytes still in the socket or in TLS's buffer are not.
                std::lock_guard busy(connection->busy);
                int unread = 0;
                if (!connection->done
                    && ((::ioctl(connection->fd, FIONREAD, &unread) == 0 && unread > 0)
                        || (connection->ssl && SSL_pending(connection->ssl) > 0))) {
                    waiting = true;
                    break;
                }
            }
        }
        if (!waiting)
            return true;
        std::unique_lock lock(m_progressMutex);
        if (!m_progressChanged.wait_until(lock, deadline,
                                          [&] { return m_progress != seen || m_stopping; })
            || m_stopping)
            return false;
    }
}

void RecordingServer::serveBarrier(int fd)
{
    // One byte from settle(), then '1' once quiet() (or '0' when it timed out).
    pollfd entry {fd, POLLIN, 0};
    char byte = 0;
    if (::poll(&entry, 1, kReadTimeoutMs) == 1 && ::recv(fd, &byte, 1, 0) == 1) {
        const char answer = quiet(5000) ? '1' : '0';
        ::send(fd, &answer, 1, MSG_NOSIGNAL);
    }
    ::close(fd);
}

bool RecordingServer::settle(int timeoutMs)
{
    if (m_barrier.fromNsFd < 0 || m_barrier.address.isNull())
        return false;
    auto connection =
        GuestConnection::connect(m_barrier.fromNsFd, m_barrier.address, kBarrierPort, timeoutMs);
    return connection && connection->send("?") && connection->readAll(timeoutMs) == "1";
}

void RecordingServer::serve(size_t index, std::shared_ptr<ServedConnection> connection,
                            ServerEndpoint endpoint)
{
    // OpenSSL writes with write(2): a peer that closed (a guest that gave up, the gateway
    // cutting a connection) must fail the write with EPIPE, not kill the test with SIGPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    std::unique_lock busy(connection->busy);
    const int fd = connection->fd;
    Stream stream;
    stream.fd = fd;
    stream.busy = &busy;
    stream.waiting = [this] { progressed(); };
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
        connection->ssl = ssl;
        SSL_set_fd(ssl, fd);
        SSL_set_app_data(ssl, &endpoint);
        if (m_ca) {
            const QString name = endpoint.certificateName.isEmpty() ? endpoint.defaultName
                                                                    : endpoint.certificateName;
            if (const auto leaf = m_ca->leaf(name)) {
                SSL_use_certificate(ssl, leaf->certificate.get());
                SSL_use_PrivateKey(ssl, leaf->key.get());
            }
        }
        int accepted;
        while ((accepted = SSL_accept(ssl)) != 1 && stream.waitFor(SSL_get_error(ssl, accepted))) {
        }
        const bool ok = accepted == 1;
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
    connection->done = true;
    connection->ssl = nullptr;
    if (ssl)
        SSL_free(ssl);
    busy.unlock();
    progressed();
    std::lock_guard lock(m_threadsMutex);
    std::erase(m_open, connection);
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
        request.head = headBytes;
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
        if (endpoint.answer == ServerEndpoint::Answer::Hello) {
            if (request.target == "/big") {
                reply = response(200, "OK", QByteArray(1024 * 1024, 'x'), QByteArray(), close);
            } else if (request.target == "/redirect") {
                reply = response(302, "Found", QByteArray(), "Location: https://evil.test/c\r\n",
                                 close);
            } else {
                reply = response(200, "OK", "hello " + host + ' ' + request.target + '\n',
                                 QByteArray(), close);
            }
        } else if (request.target == "/redirect-metadata") {
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

} // namespace airlock::test
