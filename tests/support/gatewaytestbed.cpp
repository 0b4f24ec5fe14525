#include "gatewaytestbed.h"

#include "core/gateway/dns/dnsldns.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace airlock::test {

using namespace airlock::gateway;
using namespace airlock::pki;

namespace {

QString run(const QString &program, const QStringList &arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(10000) || process.exitStatus() != QProcess::NormalExit
        || process.exitCode() != 0)
        return QStringLiteral("%1 %2: %3")
            .arg(program, arguments.join(u' '), QString::fromLocal8Bit(process.readAll()));
    return {};
}

sockaddr_in socketAddress(const QHostAddress &address, quint16 port)
{
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(address.toIPv4Address());
    return a;
}

// Waits until `fd` is readable; false on timeout.
bool waitReadable(int fd, int timeoutMs)
{
    pollfd p {fd, POLLIN, 0};
    return ::poll(&p, 1, timeoutMs) > 0;
}

QByteArray bigBody()
{
    static const QByteArray body(1024 * 1024, 'x');
    return body;
}

} // namespace

QString enterGatewayTestNetwork()
{
    if (::unshare(CLONE_NEWNET) != 0)
        return QStringLiteral("unshare(CLONE_NEWNET): %1 (root needed)")
            .arg(QString::fromLocal8Bit(std::strerror(errno)));
    const QList<QStringList> ip {
        {u"link"_s, u"set"_s, u"lo"_s, u"up"_s},
        {u"addr"_s, u"add"_s, kLinkGateway + u"/30"_s, u"dev"_s, u"lo"_s},
        {u"addr"_s, u"add"_s, kLinkGuest + u"/32"_s, u"dev"_s, u"lo"_s},
        {u"route"_s, u"add"_s, u"100.112.0.0/16"_s, u"dev"_s, u"lo"_s},
        {u"route"_s, u"add"_s, u"192.0.2.0/24"_s, u"dev"_s, u"lo"_s},
    };
    for (const QStringList &arguments : ip) {
        if (const QString error = run(QStringLiteral("ip"), arguments); !error.isEmpty())
            return error;
    }
    const QString rules =
        QStringLiteral("add table ip airlocktest; "
                       "add chain ip airlocktest output { type nat hook output priority -100; }; "
                       "add rule ip airlocktest output ip saddr %1 meta l4proto tcp redirect to "
                       ":%2")
            .arg(kLinkGuest)
            .arg(kRedirectPort);
    return run(QStringLiteral("nft"), {rules});
}

// ---- TestUpstream ------------------------------------------------------------------------

struct TestUpstream::Leaf
{
    std::shared_ptr<const TlsLeaf> leaf;
};

TestUpstream::TestUpstream() = default;

TestUpstream::~TestUpstream()
{
    stop();
}

bool TestUpstream::start(const Options &options)
{
    m_options = options;
    if (options.tls) {
        SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
        m_ctx = ctx;
        QStringList names = options.names;
        if (!options.forcedName.isEmpty())
            names.append(options.forcedName);
        for (const QString &name : std::as_const(names)) {
            auto leaf = options.ca->mintLeaf(name);
            if (!leaf)
                return false;
            m_leaves.insert(name, std::make_shared<Leaf>(Leaf {*leaf}));
        }
        const auto first = m_leaves.value(options.forcedName.isEmpty() ? options.names.value(0)
                                                                       : options.forcedName);
        if (!first)
            return false;
        SSL_CTX_use_certificate(ctx, first->leaf->certificate.get());
        SSL_CTX_use_PrivateKey(ctx, first->leaf->key.get());
        SSL_CTX_set_tlsext_servername_arg(ctx, this);
        SSL_CTX_set_tlsext_servername_callback(
            ctx, +[](SSL *ssl, int *, void *arg) {
                auto *self = static_cast<TestUpstream *>(arg);
                const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
                const QString name = sni ? QString::fromLatin1(sni) : QString();
                {
                    QMutexLocker lock(&self->m_mutex);
                    self->m_snis.append(name);
                }
                if (self->m_options.forcedName.isEmpty()) {
                    if (const auto leaf = self->m_leaves.value(name)) {
                        SSL_use_certificate(ssl, leaf->leaf->certificate.get());
                        SSL_use_PrivateKey(ssl, leaf->leaf->key.get());
                    }
                }
                return SSL_TLSEXT_ERR_OK;
            });
    }
    m_listenFd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(m_listenFd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in local = socketAddress(options.address, options.port);
    if (::bind(m_listenFd, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0
        || ::listen(m_listenFd, 128) != 0)
        return false;
    m_acceptThread = std::thread([this] { acceptLoop(); });
    return true;
}

void TestUpstream::stop()
{
    if (m_listenFd < 0)
        return;
    m_stop = true;
    if (m_acceptThread.joinable())
        m_acceptThread.join();
    for (const auto &thread : std::as_const(m_threads))
        thread->join();
    m_threads.clear();
    ::close(m_listenFd);
    m_listenFd = -1;
    if (m_ctx)
        SSL_CTX_free(static_cast<SSL_CTX *>(m_ctx));
    m_ctx = nullptr;
}

QByteArrayList TestUpstream::requests() const
{
    QMutexLocker lock(&m_mutex);
    return m_requests;
}

QStringList TestUpstream::snis() const
{
    QMutexLocker lock(&m_mutex);
    return m_snis;
}

void TestUpstream::acceptLoop()
{
    while (!m_stop) {
        if (!waitReadable(m_listenFd, 100))
            continue;
        const int fd = ::accept4(m_listenFd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        ++m_connections;
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        QMutexLocker lock(&m_mutex);
        m_threads.append(std::make_shared<std::thread>([this, fd] { serve(fd); }));
    }
}

void TestUpstream::serve(int fd)
{
    SSL *ssl = nullptr;
    if (m_options.tls) {
        ssl = SSL_new(static_cast<SSL_CTX *>(m_ctx));
        SSL_set_fd(ssl, fd);
        timeval tv {5, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (SSL_accept(ssl) != 1) {
            SSL_free(ssl);
            ::close(fd);
            ERR_clear_error();
            return;
        }
    }
    const auto receive = [&](char *buffer, int size) -> int {
        while (!m_stop) {
            if ((!ssl || SSL_pending(ssl) == 0) && !waitReadable(fd, 100))
                continue;
            return ssl ? SSL_read(ssl, buffer, size) : int(::recv(fd, buffer, size_t(size), 0));
        }
        return 0;
    };
    const auto sendAll = [&](const QByteArray &bytes) {
        qsizetype done = 0;
        while (done < bytes.size()) {
            const int n = ssl ? SSL_write(ssl, bytes.constData() + done, int(bytes.size() - done))
                              : int(::send(fd, bytes.constData() + done,
                                           size_t(bytes.size() - done), MSG_NOSIGNAL));
            if (n <= 0)
                return false;
            done += n;
        }
        return true;
    };
    QByteArray buffer;
    char chunk[16384];
    bool open = true;
    while (open && !m_stop) {
        qsizetype end;
        while ((end = buffer.indexOf("\r\n\r\n")) < 0) {
            const int n = receive(chunk, sizeof chunk);
            if (n <= 0) {
                open = false;
                break;
            }
            buffer.append(chunk, n);
        }
        if (!open)
            break;
        const QByteArray head = buffer.left(end + 4);
        buffer.remove(0, end + 4);
        {
            QMutexLocker lock(&m_mutex);
            m_requests.append(head);
        }
        QByteArray host;
        qint64 contentLength = 0;
        bool close = false;
        const QByteArrayList lines = head.split('\n');
        for (const QByteArray &raw : lines) {
            const QByteArray line = raw.trimmed();
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = line.left(colon).toLower();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name == "host")
                host = value;
            else if (name == "content-length")
                contentLength = value.toLongLong();
            else if (name == "connection" && value.toLower() == "close")
                close = true;
        }
        while (buffer.size() < contentLength) {
            const int n = receive(chunk, sizeof chunk);
            if (n <= 0) {
                open = false;
                break;
            }
            buffer.append(chunk, n);
        }
        buffer.remove(0, qMin<qsizetype>(buffer.size(), contentLength));
        const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
        const QByteArray path = requestLine.value(1);
        QByteArray response;
        if (path == "/big") {
            response = "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(bigBody().size())
                + "\r\n\r\n" + bigBody();
        } else if (path == "/redirect") {
            response = "HTTP/1.1 302 Found\r\nLocation: https://evil.test/c\r\n"
                       "Content-Length: 0\r\n\r\n";
        } else {
            const QByteArray body = "hello " + host + ' ' + path + '\n';
            response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        }
        if (!sendAll(response) || close)
            break;
    }
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
        ERR_clear_error();
    }
    ::close(fd);
}

// ---- TestDnsServer -----------------------------------------------------------------------

TestDnsServer::~TestDnsServer()
{
    stop();
}

bool TestDnsServer::start(const QHostAddress &address, quint16 port,
                          QHash<QString, QString> aRecords)
{
    m_records = std::move(aRecords);
    m_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const sockaddr_in local = socketAddress(address, port);
    if (::bind(m_fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0)
        return false;
    m_thread = std::thread([this] { loop(); });
    return true;
}

void TestDnsServer::stop()
{
    if (m_fd < 0)
        return;
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
    ::close(m_fd);
    m_fd = -1;
}

QStringList TestDnsServer::queries() const
{
    QMutexLocker lock(&m_mutex);
    return m_queries;
}

void TestDnsServer::loop()
{
    using namespace ldnsutil;
    char buffer[4096];
    while (!m_stop) {
        if (!waitReadable(m_fd, 100))
            continue;
        sockaddr_in from {};
        socklen_t length = sizeof from;
        const ssize_t n = ::recvfrom(m_fd, buffer, sizeof buffer, 0,
                                     reinterpret_cast<sockaddr *>(&from), &length);
        if (n <= 0)
            continue;
        const Pkt query = parse(QByteArrayView(buffer, n));
        if (!query || ldns_rr_list_rr_count(ldns_pkt_question(query.get())) != 1)
            continue;
        const ldns_rr *question = ldns_rr_list_rr(ldns_pkt_question(query.get()), 0);
        QString name = toString(ldns_rr_owner(question)).toLower();
        name.chop(1);
        {
            QMutexLocker lock(&m_mutex);
            m_queries.append(name);
        }
        Pkt answer(ldns_pkt_query_new(ldns_dname_new_frm_str(name.toLatin1().constData()),
                                      LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD));
        ldns_pkt_set_id(answer.get(), ldns_pkt_id(query.get()));
        ldns_pkt_set_qr(answer.get(), true);
        ldns_pkt_set_aa(answer.get(), true);
        if (m_records.contains(name)) {
            ldns_rr *rr = nullptr;
            const QByteArray text = (name + u". 60 IN A "_s + m_records.value(name)).toLatin1();
            if (ldns_rr_new_frm_str(&rr, text.constData(), 0, nullptr, nullptr) == LDNS_STATUS_OK)
                ldns_pkt_push_rr(answer.get(), LDNS_SECTION_ANSWER, rr);
        } else {
            ldns_pkt_set_rcode(answer.get(), LDNS_RCODE_NXDOMAIN);
        }
        const QByteArray wire = toWire(answer.get());
        ::sendto(m_fd, wire.constData(), size_t(wire.size()), 0,
                 reinterpret_cast<const sockaddr *>(&from), length);
    }
}

// ---- GatewayProcess ----------------------------------------------------------------------

GatewayProcess::~GatewayProcess()
{
    closeControl();
    if (m_process.state() != QProcess::NotRunning) {
        if (!m_process.waitForFinished(3000)) {
            m_process.kill();
            m_process.waitForFinished(3000);
        }
    }
}

bool GatewayProcess::spawn(QString *error, const QList<int> &inherit)
{
    const QString program = QProcessEnvironment::systemEnvironment().value(u"AIRLOCK_GATEWAY"_s);
    if (program.isEmpty()) {
        *error = QStringLiteral("AIRLOCK_GATEWAY is not set (run through ctest)");
        return false;
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        *error = QStringLiteral("socketpair failed");
        return false;
    }
    // The child's end is inherited: clear close-on-exec just for the spawn.
    ::fcntl(pair[1], F_SETFD, 0);
    for (const int fd : inherit)
        ::fcntl(fd, F_SETFD, 0);
    m_process.start(program, {u"--control-fd"_s, QString::number(pair[1])});
    const bool started = m_process.waitForStarted(5000);
    ::close(pair[1]);
    for (const int fd : inherit)
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    m_fd = pair[0];
    if (!started) {
        *error = QStringLiteral("cannot start %1").arg(program);
        return false;
    }
    return true;
}

bool GatewayProcess::startAndWaitReady(const QJsonObject &config, QString *error)
{
    if (!spawn(error))
        return false;
    send(config);
    const auto ready = waitFor(
        [](const QJsonObject &m) {
            return m.value(u"type"_s) == u"ready"_s || m.value(u"type"_s) == u"fatal"_s;
        },
        10000);
    if (!ready || ready->value(u"type"_s) != u"ready"_s) {
        *error = ready
            ? ready->value(u"error"_s).toString()
            : QStringLiteral("no ready message: %1").arg(QString::fromLocal8Bit(standardError()));
        return false;
    }
    return true;
}

void GatewayProcess::send(const QJsonObject &message)
{
    sendRaw(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
}

void GatewayProcess::sendRaw(const QByteArray &bytes)
{
    qsizetype done = 0;
    while (m_fd >= 0 && done < bytes.size()) {
        const ssize_t n =
            ::send(m_fd, bytes.constData() + done, size_t(bytes.size() - done), MSG_NOSIGNAL);
        if (n <= 0)
            return;
        done += n;
    }
}

std::optional<QJsonObject> GatewayProcess::next(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const qsizetype newline = m_buffer.indexOf('\n');
        if (newline >= 0) {
            const QByteArray line = m_buffer.left(newline);
            m_buffer.remove(0, newline + 1);
            const QJsonObject object = QJsonDocument::fromJson(line).object();
            m_received.append(object);
            return object;
        }
        if (m_fd < 0 || deadline.hasExpired())
            return std::nullopt;
        if (!waitReadable(m_fd, int(qMax<qint64>(1, deadline.remainingTime()))))
            return std::nullopt;
        char chunk[65536];
        const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
        if (n <= 0)
            return std::nullopt;
        m_buffer.append(chunk, n);
    }
}

std::optional<QJsonObject>
GatewayProcess::waitFor(const std::function<bool(const QJsonObject &)> &match, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        const auto message = next(int(qMax<qint64>(1, deadline.remainingTime())));
        if (!message)
            return std::nullopt;
        if (match(*message))
            return message;
    }
    return std::nullopt;
}

QList<QJsonObject> GatewayProcess::events() const
{
    QList<QJsonObject> events;
    for (const QJsonObject &message : m_received) {
        if (message.value(u"type"_s) == u"egress"_s)
            events.append(message.value(u"event"_s).toObject());
    }
    return events;
}

void GatewayProcess::closeControl()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}

int GatewayProcess::waitForExit(int timeoutMs)
{
    if (!m_process.waitForFinished(timeoutMs) || m_process.exitStatus() != QProcess::NormalExit)
        return -1;
    return m_process.exitCode();
}

QByteArray GatewayProcess::standardError()
{
    return m_process.readAllStandardError();
}

QJsonObject gatewayTestConfig(const QString &caCertPath, const QString &caKeyPath,
                              const QString &trustCaFile, const QJsonObject &policy)
{
    QFile cert(caCertPath);
    QFile key(caKeyPath);
    cert.open(QIODevice::ReadOnly);
    key.open(QIODevice::ReadOnly);
    return QJsonObject {
        {u"type"_s, u"config"_s},
        {u"version"_s, 1},
        {u"sandbox"_s, u"test"_s},
        {u"listen"_s,
         QJsonObject {{u"tcp"_s, u"127.0.0.1:%1"_s.arg(kRedirectPort)},
                      {u"dns"_s, kLinkGateway + u":53"_s}}},
        {u"link"_s,
         QJsonObject {
             {u"gateway"_s, kLinkGateway}, {u"guest"_s, kLinkGuest}, {u"prefixLength"_s, 30}}},
        {u"explicitProxyPort"_s, 3128},
        {u"syntheticPool"_s, u"100.112.0.0/16"_s},
        {u"upstreamDns"_s,
         QJsonObject {{u"address"_s, kDnsUpstream}, {u"port"_s, 53}, {u"timeoutMs"_s, 2000}}},
        // The default refused ranges without 127.0.0.0/8: the test upstreams are on loopback.
        {u"refusedRanges"_s,
         QJsonArray {u"0.0.0.0/8"_s, u"10.0.0.0/8"_s, u"100.64.0.0/10"_s, u"169.254.0.0/16"_s,
                     u"172.16.0.0/12"_s, u"192.168.0.0/16"_s, u"224.0.0.0/4"_s}},
        {u"refuseHostAddresses"_s, false},
        {u"trustStore"_s, QJsonObject {{u"caFile"_s, trustCaFile}}},
        {u"ca"_s,
         QJsonObject {{u"certificatePem"_s, QString::fromLatin1(cert.readAll())},
                      {u"keyPem"_s, QString::fromLatin1(key.readAll())}}},
        {u"policy"_s, policy},
        {u"limits"_s,
         QJsonObject {{u"maxConnections"_s, 256},
                      {u"idleTimeoutMs"_s, 10000},
                      {u"maxHeaderBytes"_s, 65536}}},
    };
}

// ---- GuestConnection ---------------------------------------------------------------------

GuestConnection::~GuestConnection()
{
    if (m_ssl)
        SSL_free(static_cast<SSL *>(m_ssl));
    if (m_ctx)
        SSL_CTX_free(static_cast<SSL_CTX *>(m_ctx));
    if (m_fd >= 0)
        ::close(m_fd);
    ERR_clear_error();
}

bool GuestConnection::connectTcp(const QHostAddress &address, quint16 port, bool asGuest)
{
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in local = socketAddress(QHostAddress(kLinkGuest), 0);
    const sockaddr_in remote = socketAddress(address, port);
    timeval tv {5, 0};
    ::setsockopt(m_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return (!asGuest || ::bind(m_fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) == 0)
        && ::connect(m_fd, reinterpret_cast<const sockaddr *>(&remote), sizeof remote) == 0;
}

bool GuestConnection::startTls(const QString &sni, const QByteArray &caPem)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    m_ctx = ctx;
    if (auto ca = certificateFromPem(caPem))
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca->get());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn);
    SSL *ssl = SSL_new(ctx);
    m_ssl = ssl;
    SSL_set_app_data(ssl, &m_alert);
    SSL_set_info_callback(
        ssl, +[](const SSL *s, int where, int ret) {
            if ((where & SSL_CB_READ_ALERT) != 0 && (ret >> 8) == SSL3_AL_FATAL)
                *static_cast<int *>(SSL_get_app_data(s)) = ret & 0xff;
        });
    if (!sni.isNull()) {
        SSL_set_tlsext_host_name(ssl, sni.toLatin1().constData());
        SSL_set1_host(ssl, sni.toLatin1().constData());
    }
    timeval tv {5, 0};
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL_set_fd(ssl, m_fd);
    const bool ok = SSL_connect(ssl) == 1;
    ERR_clear_error();
    return ok;
}

bool GuestConnection::write(const QByteArray &bytes)
{
    if (m_ssl)
        return SSL_write(static_cast<SSL *>(m_ssl), bytes.constData(), int(bytes.size()))
            == bytes.size();
    return ::send(m_fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL) == bytes.size();
}

qsizetype GuestConnection::readSome(QByteArray &into, int timeoutMs)
{
    SSL *ssl = static_cast<SSL *>(m_ssl);
    if ((!ssl || SSL_pending(ssl) == 0) && !waitReadable(m_fd, timeoutMs))
        return -1;
    char chunk[65536];
    const int n =
        ssl ? SSL_read(ssl, chunk, sizeof chunk) : int(::recv(m_fd, chunk, sizeof chunk, 0));
    if (n > 0) {
        into.append(chunk, n);
        return n;
    }
    ERR_clear_error();
    return 0;
}

QByteArray GuestConnection::readResponse(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const qsizetype end = m_buffer.indexOf("\r\n\r\n");
        if (end >= 0) {
            qint64 length = 0;
            for (const QByteArray &line : m_buffer.left(end).split('\n')) {
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            }
            if (m_buffer.size() >= end + 4 + length) {
                const QByteArray response = m_buffer.left(end + 4 + length);
                m_buffer.remove(0, response.size());
                return response;
            }
        }
        if (deadline.hasExpired()
            || readSome(m_buffer, int(qMax<qint64>(1, deadline.remainingTime()))) <= 0)
            return {};
    }
}

bool GuestConnection::readUntilClosed(QByteArray *bytes, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    QByteArray all = std::exchange(m_buffer, {});
    bool closed = false;
    while (!deadline.hasExpired()) {
        const qsizetype n = readSome(all, int(qMax<qint64>(1, deadline.remainingTime())));
        if (n == 0) {
            closed = true;
            break;
        }
        if (n < 0)
            break;
    }
    if (bytes)
        *bytes = all;
    return closed;
}

int responseStatus(const QByteArray &response)
{
    if (!response.startsWith("HTTP/1."))
        return 0;
    return response.mid(9, 3).toInt();
}

QByteArray responseBody(const QByteArray &response)
{
    const qsizetype end = response.indexOf("\r\n\r\n");
    return end < 0 ? QByteArray() : response.mid(end + 4);
}

} // namespace airlock::test
