#include "guestclient.h"

#include "netns.h"

#include "core/gateway/tls/tlsopenssl.h"

#include <QProcess>

#include <QElapsedTimer>
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <ldns/ldns.h>
#include <net/if.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::test {

namespace {

QString sslErrors()
{
    QStringList parts;
    for (unsigned long code; (code = ERR_get_error()) != 0;) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        parts << QString::fromLatin1(text);
    }
    return parts.join(QStringLiteral("; "));
}

bool waitFor(int fd, short events, int timeoutMs)
{
    pollfd entry {fd, events, 0};
    return ::poll(&entry, 1, timeoutMs) == 1 && (entry.revents & (events | POLLHUP | POLLERR));
}

sockaddr_storage toSockaddr(const QHostAddress &address, quint16 port, socklen_t *length)
{
    sockaddr_storage storage {};
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        const Q_IPV6ADDR bytes = address.toIPv6Address();
        std::memcpy(&in6->sin6_addr, bytes.c, 16);
        if (!address.scopeId().isEmpty())
            in6->sin6_scope_id = ::if_nametoindex(address.scopeId().toLatin1().constData());
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

} // namespace

QByteArray HttpResponse::header(const QByteArray &name) const
{
    const QList<QByteArray> lines = head.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0 && lines[i].left(colon).trimmed().compare(name, Qt::CaseInsensitive) == 0)
            return lines[i].mid(colon + 1).trimmed();
    }
    return QByteArray();
}

GuestConnection::~GuestConnection()
{
    if (m_ssl)
        SSL_free(m_ssl);
    if (m_context)
        SSL_CTX_free(m_context);
    if (m_fd >= 0)
        ::close(m_fd);
}

std::unique_ptr<GuestConnection> GuestConnection::connect(int nsFd, const QHostAddress &address,
                                                          quint16 port, int timeoutMs)
{
    const int fd =
        inNamespace(nsFd,
                    [&] {
                        const bool v6 = address.protocol() == QAbstractSocket::IPv6Protocol;
                        const int s = ::socket(v6 ? AF_INET6 : AF_INET,
                                               SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                        socklen_t length = 0;
                        const sockaddr_storage remote = toSockaddr(address, port, &length);
                        ::connect(s, reinterpret_cast<const sockaddr *>(&remote), length);
                        return s + 1; // 0 = setns failed
                    })
        - 1;
    if (fd < 0)
        return nullptr;
    int error = -1;
    socklen_t length = sizeof error;
    if (waitFor(fd, POLLOUT, timeoutMs))
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
        ::close(fd);
        return nullptr;
    }
    std::unique_ptr<GuestConnection> connection(new GuestConnection);
    connection->m_fd = fd;
    return connection;
}

bool GuestConnection::startTls(const std::optional<QByteArray> &sni, const QByteArray &caPem,
                               const QString &verifyName)
{
    m_context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(m_context, TLS1_2_VERSION);
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(m_context, alpn, sizeof alpn);
    if (!caPem.isEmpty()) {
        BIO *bio = BIO_new_mem_buf(caPem.constData(), int(caPem.size()));
        X509 *ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
        BIO_free(bio);
        X509_STORE_add_cert(SSL_CTX_get_cert_store(m_context), ca);
        X509_free(ca);
        SSL_CTX_set_verify(m_context, SSL_VERIFY_PEER, nullptr);
    }
    m_ssl = SSL_new(m_context);
    SSL_set_fd(m_ssl, m_fd);
    SSL_set_app_data(m_ssl, &m_alert);
    SSL_set_info_callback(
        m_ssl, +[](const SSL *ssl, int where, int value) {
            if ((where & SSL_CB_READ_ALERT) != 0 && (value >> 8) == SSL3_AL_FATAL)
                *static_cast<int *>(SSL_get_app_data(ssl)) = value & 0xff;
        });
    if (sni)
        gateway::setTlsServerName(m_ssl, sni->constData());
    if (!caPem.isEmpty())
        SSL_set1_host(m_ssl, verifyName.toLatin1().constData());
    for (;;) {
        const int result = SSL_connect(m_ssl);
        if (result == 1)
            return true;
        const int code = SSL_get_error(m_ssl, result);
        if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
            if (waitFor(m_fd, code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 5000))
                continue;
            m_error = QStringLiteral("handshake timed out");
            return false;
        }
        const long verify = SSL_get_verify_result(m_ssl);
        m_error = QStringLiteral("handshake failed (ssl error %1, verify %2): %3")
                      .arg(code)
                      .arg(QString::fromLatin1(X509_verify_cert_error_string(verify)), sslErrors());
        return false;
    }
}

QByteArray GuestConnection::alpn() const
{
    const unsigned char *data = nullptr;
    unsigned int length = 0;
    if (m_ssl)
        SSL_get0_alpn_selected(m_ssl, &data, &length);
    return QByteArray(reinterpret_cast<const char *>(data), int(length));
}

bool GuestConnection::send(const QByteArray &bytes)
{
    qsizetype done = 0;
    while (done < bytes.size()) {
        qint64 n;
        if (m_ssl) {
            n = SSL_write(m_ssl, bytes.constData() + done, int(bytes.size() - done));
            if (n <= 0) {
                const int code = SSL_get_error(m_ssl, int(n));
                if ((code == SSL_ERROR_WANT_WRITE || code == SSL_ERROR_WANT_READ)
                    && waitFor(m_fd, code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 3000))
                    continue;
                m_error = QStringLiteral("write failed: ") + sslErrors();
                return false;
            }
        } else {
            n = ::send(m_fd, bytes.constData() + done, size_t(bytes.size() - done), MSG_NOSIGNAL);
            if (n < 0 && errno == EAGAIN && waitFor(m_fd, POLLOUT, 3000))
                continue;
            if (n <= 0) {
                m_error =
                    QStringLiteral("write failed: ") + QString::fromLocal8Bit(std::strerror(errno));
                return false;
            }
        }
        done += n;
    }
    return true;
}

qint64 GuestConnection::readSome(char *buffer, int size, int timeoutMs)
{
    for (;;) {
        if (m_ssl) {
            const int n = SSL_read(m_ssl, buffer, size);
            if (n > 0)
                return n;
            const int code = SSL_get_error(m_ssl, n);
            if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
                if (!waitFor(m_fd, code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, timeoutMs))
                    return -1;
                continue;
            }
            ERR_clear_error();
            return 0; // close_notify, alert, reset, EOF
        }
        const ssize_t n = ::recv(m_fd, buffer, size_t(size), 0);
        if (n > 0)
            return n;
        if (n < 0 && errno == EAGAIN) {
            if (!waitFor(m_fd, POLLIN, timeoutMs))
                return -1;
            continue;
        }
        return 0;
    }
}

HttpResponse GuestConnection::readResponse(int timeoutMs)
{
    return read(timeoutMs, false);
}

HttpResponse GuestConnection::readHead(int timeoutMs)
{
    return read(timeoutMs, true);
}

namespace {

// A complete chunked body (RFC 9112 §7.1) at the start of `data`: its decoded bytes in `*body`
// and the length it takes, -1 when more bytes are needed, -2 when it does not parse.
qsizetype decodeChunked(const QByteArray &data, QByteArray *body)
{
    qsizetype at = 0;
    body->clear();
    for (;;) {
        const qsizetype lineEnd = data.indexOf("\r\n", at);
        if (lineEnd < 0)
            return -1;
        bool ok = false;
        const qsizetype size = data.mid(at, lineEnd - at).split(';').value(0).toLongLong(&ok, 16);
        if (!ok || size < 0)
            return -2;
        at = lineEnd + 2;
        if (size == 0) {
            // Trailer fields, then the empty line.
            for (;;) {
                const qsizetype end = data.indexOf("\r\n", at);
                if (end < 0)
                    return -1;
                const bool empty = end == at;
                at = end + 2;
                if (empty)
                    return at;
            }
        }
        if (data.size() < at + size + 2)
            return -1;
        if (data.mid(at + size, 2) != "\r\n")
            return -2;
        body->append(data.mid(at, size));
        at += size + 2;
    }
}

} // namespace

HttpResponse GuestConnection::read(int timeoutMs, bool headOnly)
{
    HttpResponse response;
    QElapsedTimer timer;
    timer.start();
    char buffer[16384];
    qsizetype headEnd = -1;
    qint64 contentLength = -1;
    bool closed = false;
    for (;;) {
        if (headEnd < 0 && (headEnd = m_buffered.indexOf("\r\n\r\n")) >= 0) {
            response.head = m_buffered.left(headEnd + 2);
            response.size = headEnd + 4;
            m_buffered.remove(0, headEnd + 4);
            const QList<QByteArray> status = response.head.split(' ');
            response.status = status.value(1).toInt();
            const QByteArray length = response.header("Content-Length");
            contentLength = length.isEmpty() ? -1 : length.toLongLong();
            response.chunked = response.header("Transfer-Encoding").toLower().contains("chunked");
            if (headOnly) {
                response.complete = true;
                return response;
            }
        }
        if (headEnd >= 0 && response.chunked) {
            const qsizetype used = decodeChunked(m_buffered, &response.body);
            if (used == -2) {
                response.size += m_buffered.size();
                response.body = m_buffered;
                m_buffered.clear();
                return response; // malformed framing: not complete
            }
            if (used > 0) {
                m_buffered.remove(0, used);
                response.size += used;
                response.complete = true;
                return response;
            }
        }
        if (headEnd >= 0 && !response.chunked && contentLength >= 0
            && m_buffered.size() >= contentLength) {
            response.body = m_buffered.left(contentLength);
            m_buffered.remove(0, contentLength);
            response.size += contentLength;
            response.complete = true;
            return response;
        }
        if (closed)
            break;
        const int left = int(timeoutMs - timer.elapsed());
        const qint64 n = left > 0 ? readSome(buffer, sizeof buffer, left) : -1;
        if (n < 0)
            break;
        if (n == 0)
            closed = true;
        else
            m_buffered.append(buffer, qsizetype(n));
    }
    response.size += m_buffered.size();
    if (headEnd >= 0) {
        response.body = m_buffered;
        response.complete = closed && contentLength < 0 && !response.chunked;
    } else {
        response.head = m_buffered;
    }
    m_buffered.clear();
    return response;
}

QByteArray GuestConnection::readAll(int timeoutMs)
{
    QByteArray data;
    closedByPeer(timeoutMs, &data);
    return data;
}

bool GuestConnection::closedByPeer(int timeoutMs, QByteArray *data)
{
    QElapsedTimer timer;
    timer.start();
    char buffer[16384];
    if (data)
        *data += m_buffered;
    m_buffered.clear();
    for (;;) {
        const int left = int(timeoutMs - timer.elapsed());
        if (left <= 0)
            return false;
        const qint64 n = readSome(buffer, sizeof buffer, left);
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        if (data)
            data->append(buffer, qsizetype(n));
    }
}

DnsResult guestDnsQuery(int nsFd, const QHostAddress &server, const QString &name, quint16 type,
                        bool tcp, quint16 port, int timeoutMs)
{
    DnsResult result;
    ldns_pkt *query = ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                                         ldns_rr_type(type), LDNS_RR_CLASS_IN, LDNS_RD);
    if (!query)
        return result;
    ldns_pkt_set_random_id(query);
    uint8_t *wire = nullptr;
    size_t size = 0;
    ldns_pkt2wire(&wire, query, &size);
    QByteArray bytes(reinterpret_cast<const char *>(wire), qsizetype(size));
    std::free(wire);
    const quint16 id = ldns_pkt_id(query);
    ldns_pkt_free(query);

    QByteArray reply;
    if (tcp) {
        auto connection = GuestConnection::connect(nsFd, server, port, timeoutMs);
        if (!connection)
            return result;
        QByteArray framed;
        framed.append(char(bytes.size() >> 8)).append(char(bytes.size() & 0xff));
        if (!connection->send(framed + bytes))
            return result;
        const QByteArray data = connection->readAll(timeoutMs);
        if (data.size() < 2)
            return result;
        reply = data.mid(2, (quint8(data[0]) << 8) | quint8(data[1]));
    } else {
        const int fd =
            inNamespace(
                nsFd,
                [] { return ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) + 1; })
            - 1;
        if (fd < 0)
            return result;
        socklen_t length = 0;
        const sockaddr_storage remote = toSockaddr(server, port, &length);
        ::sendto(fd, bytes.constData(), size_t(bytes.size()), 0,
                 reinterpret_cast<const sockaddr *>(&remote), length);
        QElapsedTimer timer;
        timer.start();
        while (reply.isEmpty() && timer.elapsed() < timeoutMs) {
            if (!waitFor(fd, POLLIN, int(timeoutMs - timer.elapsed())))
                break;
            char buffer[4096];
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n >= 12 && ((quint8(buffer[0]) << 8) | quint8(buffer[1])) == id)
                reply = QByteArray(buffer, qsizetype(n));
        }
        ::close(fd);
    }
    ldns_pkt *answer = nullptr;
    if (reply.isEmpty()
        || ldns_wire2pkt(&answer, reinterpret_cast<const uint8_t *>(reply.constData()),
                         size_t(reply.size()))
            != LDNS_STATUS_OK)
        return result;
    result.answered = true;
    result.rcode = ldns_pkt_get_rcode(answer);
    const ldns_rr_list *rrs = ldns_pkt_answer(answer);
    for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); ++i) {
        const ldns_rr *rr = ldns_rr_list_rr(rrs, i);
        const ldns_rr_type rrType = ldns_rr_get_type(rr);
        if (rrType != LDNS_RR_TYPE_A && rrType != LDNS_RR_TYPE_AAAA)
            continue;
        char *text = ldns_rdf2str(ldns_rr_rdf(rr, 0));
        result.addresses << QHostAddress(QString::fromLatin1(text));
        std::free(text);
    }
    ldns_pkt_free(answer);
    return result;
}

CommandResult runInNamespace(int nsFd, const QString &program, const QStringList &arguments,
                             int timeoutMs, const QByteArray &input)
{
    CommandResult result;
    QProcess process;
    process.setProgram(program);
    process.setArguments(arguments);
    process.setChildProcessModifier([nsFd] {
        if (::setns(nsFd, CLONE_NEWNET) != 0)
            ::_exit(126);
    });
    process.start();
    if (!process.waitForStarted(10000))
        return result;
    if (!input.isEmpty())
        process.write(input);
    process.closeWriteChannel();
    result.finished = process.waitForFinished(timeoutMs);
    if (!result.finished) {
        process.kill();
        process.waitForFinished(5000);
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.standardOutput = process.readAllStandardOutput();
    result.standardError = process.readAllStandardError();
    return result;
}

} // namespace airlock::test
