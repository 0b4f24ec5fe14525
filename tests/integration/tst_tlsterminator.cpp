// The gateway's TLS termination on 127.0.0.1 (docs/tls.md): a blocking TlsTerminator harness
// around TlsServerContext, an OpenSSL "guest" client that trusts only the sandbox CA, and a
// local HTTPS "upstream" under a test CA for TlsUpstreamContext. Cases of
// docs/redteam-cases.md: A3, A4, A5, B1, B2,
// C1, D2 and D3. Loopback only; every certificate is generated in the test.
#include "core/gateway/tls/tlsservercontext.h"
#include "core/gateway/tls/tlsupstreamcontext.h"
#include "core/pki/sandboxca.h"
#include "core/policy/policymatcher.h"
#include "resultcheck.h"

#include <QTemporaryDir>
#include <QTest>

#include <openssl/err.h>

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace airlock::gateway;
using namespace airlock::pki;
using namespace airlock::policy;
using airlock::EgressReason;

namespace {

constexpr int kTimeoutSeconds = 5;

// A socket fd closed on scope exit.
class Fd
{
public:
    explicit Fd(int fd = -1) : m_fd(fd) { }
    Fd(Fd &&other) noexcept : m_fd(std::exchange(other.m_fd, -1)) { }
    Fd &operator=(Fd &&other) noexcept
    {
        reset(std::exchange(other.m_fd, -1));
        return *this;
    }
    ~Fd() { reset(); }
    void reset(int fd = -1)
    {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = fd;
    }
    int get() const { return m_fd; }

private:
    int m_fd = -1;
};

void setTimeouts(int fd)
{
    timeval tv {kTimeoutSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A listening TCP socket on 127.0.0.1 with an ephemeral port.
struct Listener
{
    Fd fd;
    quint16 port = 0;

    static Listener open()
    {
        Listener listener;
        listener.fd.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (::bind(listener.fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
            || ::listen(listener.fd.get(), 4) != 0
            || ::getsockname(listener.fd.get(), reinterpret_cast<sockaddr *>(&address), &length)
                != 0)
            listener.fd.reset();
        listener.port = ntohs(address.sin_port);
        return listener;
    }

    Fd accept() const
    {
        Fd client(::accept4(fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.get() >= 0)
            setTimeouts(client.get());
        return client;
    }
};

Fd connectLoopback(quint16 port)
{
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
        fd.reset();
    else
        setTimeouts(fd.get());
    return fd;
}

// What the gateway side decided for one guest connection.
struct GuestOutcome
{
    bool handshakeOk = false;
    EgressReason reason = EgressReason::Allowed;
    QString detail;
    QString serverName;
    QByteArray alpn;
};

// The test harness standing in for the gateway's connection loop: sniff the first bytes
// (not_tls before OpenSSL), then SSL_accept on the socket, then answer one line. "Dialing
// upstream" is only counted: it happens only after an accepted handshake.
class TlsTerminator
{
public:
    TlsTerminator(airlock::pki::SandboxCa *ca, TlsConnectionCheck check)
    {
        auto context = TlsServerContext::create(ca, [this, check](const QString &h, quint16 p) {
            ++m_policyChecks;
            return check(h, p);
        });
        if (context)
            m_context.emplace(std::move(*context));
    }

    bool isValid() const { return m_context.has_value(); }
    int policyChecks() const { return m_policyChecks; }
    int upstreamDials() const { return m_upstreamDials; }

    GuestOutcome serveOne(const Listener &listener, quint16 originalPort)
    {
        GuestOutcome outcome;
        Fd fd = listener.accept();
        auto connection = m_context->newConnection(originalPort);
        if (fd.get() < 0 || !connection) {
            outcome.reason = EgressReason::HandshakeFailed;
            return outcome;
        }
        if (sniff(fd.get()) != TlsSniff::ClientHello) {
            connection->reject(EgressReason::NotTls,
                               QStringLiteral("first bytes are not a TLS ClientHello"));
            return finish(*connection, false);
        }
        SSL *ssl = connection->ssl();
        SSL_set_fd(ssl, fd.get());
        if (SSL_accept(ssl) != 1) {
            connection->reject(EgressReason::HandshakeFailed, takeOpenSslErrors());
            return finish(*connection, false);
        }
        ++m_upstreamDials;
        char line[64] = {};
        const int n = SSL_read(ssl, line, sizeof line - 1);
        if (n > 0) {
            const QByteArray answer = "ok " + connection->serverName().toLatin1() + '\n';
            SSL_write(ssl, answer.constData(), int(answer.size()));
        }
        SSL_shutdown(ssl);
        return finish(*connection, true);
    }

private:
    // Peeks until the sniffer decides (at most 6 bytes), the guest's FIN, or timeout.
    static TlsSniff sniff(int fd)
    {
        char buffer[6];
        for (int attempt = 0; attempt < kTimeoutSeconds * 200; ++attempt) {
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_PEEK);
            if (n <= 0)
                return TlsSniff::NotTls;
            const TlsSniff verdict = sniffTlsClientHello(QByteArrayView(buffer, n));
            if (verdict != TlsSniff::NeedMore)
                return verdict;
            // A prefix followed by the guest's FIN can never become a ClientHello.
            pollfd p {fd, POLLRDHUP, 0};
            if (::poll(&p, 1, 5) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0)
                return TlsSniff::NotTls;
        }
        return TlsSniff::NotTls;
    }

    static GuestOutcome finish(TlsGuestConnection &connection, bool ok)
    {
        GuestOutcome outcome;
        outcome.handshakeOk = ok;
        outcome.reason = connection.rejectReason();
        outcome.detail = connection.rejectDetail();
        outcome.serverName = connection.serverName();
        const unsigned char *alpn = nullptr;
        unsigned int alpnLength = 0;
        SSL_get0_alpn_selected(connection.ssl(), &alpn, &alpnLength);
        outcome.alpn = QByteArray(reinterpret_cast<const char *>(alpn), int(alpnLength));
        return outcome;
    }

    std::optional<TlsServerContext> m_context;
    std::atomic<int> m_policyChecks = 0;
    std::atomic<int> m_upstreamDials = 0;
};

// What the guest's OpenSSL client saw.
struct ClientOutcome
{
    bool handshakeOk = false;
    QString verifyResult;
    QByteArray alpn;
    int alertReceived = -1; ///< SSL_AD_* of a fatal alert from the gateway, -1 if none
    QByteArray reply;
};

void recordAlert(const SSL *ssl, int where, int ret)
{
    if ((where & SSL_CB_READ_ALERT) != 0 && (ret >> 8) == SSL3_AL_FATAL)
        *static_cast<int *>(SSL_get_app_data(ssl)) = ret & 0xff;
}

QByteArray alpnWire(const QByteArrayList &protocols)
{
    QByteArray wire;
    for (const QByteArray &p : protocols)
        wire += char(p.size()) + p;
    return wire;
}

// A guest TLS client trusting only `caPem`, verifying `verifyHost`, sending `sni` (none when
// null), offering `alpn`.
ClientOutcome guestConnect(quint16 port, const QByteArray &caPem, const QString &sni,
                           const QString &verifyHost, const QByteArrayList &alpn,
                           int maxVersion = 0)
{
    ClientOutcome outcome;
    SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
    auto ca = certificateFromPem(caPem);
    if (!ctx || !ca)
        return outcome;
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), ca->get());
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (maxVersion != 0) {
        SSL_CTX_set_security_level(ctx.get(), 0);
        SSL_CTX_set_cipher_list(ctx.get(), "DEFAULT@SECLEVEL=0");
        SSL_CTX_set_min_proto_version(ctx.get(), 0);
        SSL_CTX_set_max_proto_version(ctx.get(), maxVersion);
    }
    if (!alpn.isEmpty()) {
        const QByteArray wire = alpnWire(alpn);
        SSL_CTX_set_alpn_protos(ctx.get(), reinterpret_cast<const unsigned char *>(wire.data()),
                                unsigned(wire.size()));
    }
    SslPtr ssl(SSL_new(ctx.get()));
    SSL_set_app_data(ssl.get(), &outcome.alertReceived);
    SSL_set_info_callback(ssl.get(), recordAlert);
    if (!sni.isNull())
        setTlsServerName(ssl.get(), sni.toLatin1().constData());
    if (!verifyHost.isEmpty())
        SSL_set1_host(ssl.get(), verifyHost.toLatin1().constData());
    Fd fd = connectLoopback(port);
    SSL_set_fd(ssl.get(), fd.get());
    outcome.handshakeOk = SSL_connect(ssl.get()) == 1;
    outcome.verifyResult = upstreamVerifyResult(ssl.get());
    if (outcome.handshakeOk) {
        const unsigned char *selected = nullptr;
        unsigned int length = 0;
        SSL_get0_alpn_selected(ssl.get(), &selected, &length);
        outcome.alpn = QByteArray(reinterpret_cast<const char *>(selected), int(length));
        SSL_write(ssl.get(), "hello\n", 6);
        char buffer[128] = {};
        const int n = SSL_read(ssl.get(), buffer, sizeof buffer);
        if (n > 0)
            outcome.reply = QByteArray(buffer, n);
    }
    ERR_clear_error();
    return outcome;
}

// The policy of docs/redteam-cases.md: pkg.test on 443 only.
PolicyMatcher casesMatcher()
{
    airlock::EgressRule rule;
    rule.host = QStringLiteral("pkg.test");
    airlock::EgressPolicy policy;
    policy.rules = {rule};
    auto matcher = PolicyMatcher::create(policy);
    Q_ASSERT(matcher);
    return *matcher;
}

// A local HTTPS "upstream" serving `leaf` for one connection.
struct UpstreamResult
{
    bool handshakeOk = false;
    QByteArray sni;
    QByteArray alpn;
};

int selectHttp11(SSL *, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                 unsigned int inlen, void *)
{
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char *selected = nullptr;
    if (SSL_select_next_proto(&selected, outlen, http11, sizeof http11, in, inlen)
        != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

UpstreamResult serveUpstreamOnce(const Listener &listener, const TlsLeaf &leaf)
{
    UpstreamResult result;
    SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx.get(), leaf.certificate.get());
    SSL_CTX_use_PrivateKey(ctx.get(), leaf.key.get());
    SSL_CTX_set_alpn_select_cb(ctx.get(), selectHttp11, nullptr);
    Fd fd = listener.accept();
    SslPtr ssl(SSL_new(ctx.get()));
    SSL_set_fd(ssl.get(), fd.get());
    result.handshakeOk = SSL_accept(ssl.get()) == 1;
    if (const char *sni = SSL_get_servername(ssl.get(), TLSEXT_NAMETYPE_host_name))
        result.sni = sni;
    const unsigned char *alpn = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl.get(), &alpn, &length);
    result.alpn = QByteArray(reinterpret_cast<const char *>(alpn), int(length));
    if (result.handshakeOk)
        SSL_shutdown(ssl.get());
    ERR_clear_error();
    return result;
}

// A local HTTPS "upstream" serving `leaf` for `count` connections in turn from one SSL_CTX (so
// its session tickets stay valid across them); whether each handshake succeeded and resumed.
struct ServedConnection
{
    bool handshakeOk = false;
    bool resumed = false;
};

std::vector<ServedConnection> serveUpstream(const Listener &listener, const TlsLeaf &leaf,
                                            int count, int maxVersion)
{
    std::vector<ServedConnection> served;
    SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx.get(), leaf.certificate.get());
    SSL_CTX_use_PrivateKey(ctx.get(), leaf.key.get());
    SSL_CTX_set_max_proto_version(ctx.get(), maxVersion);
    SSL_CTX_set_alpn_select_cb(ctx.get(), selectHttp11, nullptr);
    for (int i = 0; i < count; ++i) {
        Fd fd = listener.accept();
        SslPtr ssl(SSL_new(ctx.get()));
        SSL_set_fd(ssl.get(), fd.get());
        ServedConnection result;
        result.handshakeOk = SSL_accept(ssl.get()) == 1;
        result.resumed = SSL_session_reused(ssl.get()) == 1;
        if (result.handshakeOk)
            SSL_shutdown(ssl.get());
        ERR_clear_error();
        served.push_back(result);
    }
    return served;
}

} // namespace

class TestTlsTerminator : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void sniff_data();
    void sniff();
    void serverNameExtension_data();
    void serverNameExtension();
    void guestHandshake_data();
    void guestHandshake();
    void connectNameBindsSni();
    void notTls_data();
    void notTls();
    void upstreamVerification_data();
    void upstreamVerification();
    void upstreamRejectsBadTrustStoreAndNames();
    void upstreamResumption_data();
    void upstreamResumption();

private:
    std::optional<airlock::pki::SandboxCa> m_ca;
    std::optional<airlock::pki::SandboxCa> m_upstreamCa;
    std::optional<airlock::pki::SandboxCa> m_strangerCa;
    QTemporaryDir m_dir;
};

void TestTlsTerminator::initTestCase()
{
    QVERIFY(m_dir.isValid());
    ::signal(SIGPIPE, SIG_IGN); // a peer that gave up must not kill the test
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("tst-tls"));
    auto upstream = airlock::pki::SandboxCa::generate(QStringLiteral("upstream-test"));
    auto stranger = airlock::pki::SandboxCa::generate(QStringLiteral("stranger-test"));
    QVERIFY(ca && upstream && stranger);
    m_ca.emplace(std::move(*ca));
    m_upstreamCa.emplace(std::move(*upstream));
    m_strangerCa.emplace(std::move(*stranger));
    QVERIFY(m_upstreamCa->save(m_dir.filePath(QStringLiteral("upstream-ca.crt")),
                               m_dir.filePath(QStringLiteral("upstream-ca.key"))));
    QVERIFY(m_strangerCa->save(m_dir.filePath(QStringLiteral("stranger-ca.crt")),
                               m_dir.filePath(QStringLiteral("stranger-ca.key"))));
}

void TestTlsTerminator::sniff_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<TlsSniff>("verdict");
    QTest::newRow("empty") << QByteArray() << TlsSniff::NeedMore;
    QTest::newRow("0x16") << QByteArray("\x16", 1) << TlsSniff::NeedMore;
    QTest::newRow("5 bytes") << QByteArray("\x16\x03\x01\x02\x00", 5) << TlsSniff::NeedMore;
    QTest::newRow("ClientHello 1.0 record")
        << QByteArray("\x16\x03\x01\x02\x00\x01", 6) << TlsSniff::ClientHello;
    QTest::newRow("ClientHello 1.2 record")
        << QByteArray("\x16\x03\x03\x00\x2f\x01", 6) << TlsSniff::ClientHello;
    QTest::newRow("D3 SSH banner") << QByteArray("SSH-2.0-x\r\n") << TlsSniff::NotTls;
    QTest::newRow("HTTP") << QByteArray("GET / HTTP/1.1\r\n") << TlsSniff::NotTls;
    QTest::newRow("SSLv2 hello") << QByteArray("\x80\x2e\x01\x03\x01", 5) << TlsSniff::NotTls;
    QTest::newRow("SSL 3.0 record") << QByteArray("\x16\x03\x00", 3) << TlsSniff::NotTls;
    QTest::newRow("zero length") << QByteArray("\x16\x03\x01\x00\x00\x01", 6) << TlsSniff::NotTls;
    QTest::newRow("length 16385") << QByteArray("\x16\x03\x01\x40\x01\x01", 6) << TlsSniff::NotTls;
    QTest::newRow("ServerHello") << QByteArray("\x16\x03\x03\x00\x2f\x02", 6) << TlsSniff::NotTls;
    QTest::newRow("application data") << QByteArray("\x17\x03\x03\x00\x10", 5) << TlsSniff::NotTls;
}

void TestTlsTerminator::sniff()
{
    QFETCH(QByteArray, bytes);
    QFETCH(TlsSniff, verdict);
    QCOMPARE(sniffTlsClientHello(bytes), verdict);
}

void TestTlsTerminator::serverNameExtension_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<QByteArray>("name"); // null: rejected
    QTest::newRow("one host_name")
        << QByteArray("\x00\x0b\x00\x00\x08pkg.test", 13) << QByteArray("pkg.test");
    QTest::newRow("two host_names") << QByteArray("\x00\x16\x00\x00\x08pkg.test\x00\x00\x08"
                                                  "evl.test",
                                                  24)
                                    << QByteArray();
    QTest::newRow("type 1") << QByteArray("\x00\x0b\x01\x00\x08pkg.test", 13) << QByteArray();
    QTest::newRow("empty name") << QByteArray("\x00\x03\x00\x00\x00", 5) << QByteArray();
    QTest::newRow("list length short")
        << QByteArray("\x00\x0a\x00\x00\x08pkg.test", 13) << QByteArray();
    QTest::newRow("name length long")
        << QByteArray("\x00\x0b\x00\x00\x09pkg.test", 13) << QByteArray();
    QTest::newRow("trailing byte")
        << QByteArray("\x00\x0c\x00\x00\x08pkg.testX", 14) << QByteArray();
    QTest::newRow("truncated") << QByteArray("\x00", 1) << QByteArray();
}

void TestTlsTerminator::serverNameExtension()
{
    QFETCH(QByteArray, data);
    QFETCH(QByteArray, name);
    const auto parsed = parseServerNameExtension(data);
    QCOMPARE(parsed.has_value(), !name.isNull());
    if (parsed)
        QCOMPARE(*parsed, name);
}

void TestTlsTerminator::guestHandshake_data()
{
    QTest::addColumn<QString>("sni"); // null: no server_name extension
    QTest::addColumn<quint16>("port"); // the original destination port
    QTest::addColumn<QByteArrayList>("alpn");
    QTest::addColumn<int>("maxVersion");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("alert"); // what the guest receives; -1: none
    QTest::addColumn<int>("policyChecks");

    const QByteArrayList http11 {QByteArrayLiteral("http/1.1")};
    const QByteArrayList h2 {QByteArrayLiteral("h2")};
    const QByteArrayList both {QByteArrayLiteral("h2"), QByteArrayLiteral("http/1.1")};
    const QString none = QStringLiteral("allowed"); // nothing refused
    QTest::newRow("pkg.test") << QStringLiteral("pkg.test") << quint16(443) << http11 << 0 << none
                              << -1 << 1;
    QTest::newRow("B2 case") << QStringLiteral("Pkg.TEST") << quint16(443) << http11 << 0 << none
                             << -1 << 1;
    QTest::newRow("B1 trailing dot")
        << QStringLiteral("pkg.test.") << quint16(443) << http11 << 0 << none << -1 << 1;
    QTest::newRow("no ALPN") << QStringLiteral("pkg.test") << quint16(443) << QByteArrayList() << 0
                             << none << -1 << 1;
    QTest::newRow("h2 and http/1.1")
        << QStringLiteral("pkg.test") << quint16(443) << both << 0 << none << -1 << 1;
    QTest::newRow("only h2") << QStringLiteral("pkg.test") << quint16(443) << h2 << 0
                             << QStringLiteral("no_http11_alpn")
                             << int(SSL_AD_NO_APPLICATION_PROTOCOL) << 1;
    QTest::newRow("A4 no SNI") << QString() << quint16(443) << http11 << 0
                               << QStringLiteral("no_sni") << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("A4 IPv4 SNI") << QStringLiteral("127.0.0.1") << quint16(443) << http11 << 0
                                 << QStringLiteral("bad_sni") << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("A4 IPv4 short SNI")
        << QStringLiteral("127.1") << quint16(443) << http11 << 0 << QStringLiteral("bad_sni")
        << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("A4 IPv6 SNI") << QStringLiteral("::1") << quint16(443) << http11 << 0
                                 << QStringLiteral("bad_sni") << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("underscore SNI")
        << QStringLiteral("a_b.pkg.test") << quint16(443) << http11 << 0
        << QStringLiteral("bad_sni") << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("B1 two trailing dots")
        << QStringLiteral("pkg.test..") << quint16(443) << http11 << 0 << QStringLiteral("bad_sni")
        << int(SSL_AD_UNRECOGNIZED_NAME) << 0;
    QTest::newRow("C1 evilpkg.test")
        << QStringLiteral("evilpkg.test") << quint16(443) << http11 << 0
        << QStringLiteral("host_not_allowed") << int(SSL_AD_ACCESS_DENIED) << 1;
    QTest::newRow("C1 notpkg.test")
        << QStringLiteral("notpkg.test") << quint16(443) << http11 << 0
        << QStringLiteral("host_not_allowed") << int(SSL_AD_ACCESS_DENIED) << 1;
    QTest::newRow("C1 pkg.test.evil.test")
        << QStringLiteral("pkg.test.evil.test") << quint16(443) << http11 << 0
        << QStringLiteral("host_not_allowed") << int(SSL_AD_ACCESS_DENIED) << 1;
    QTest::newRow("A3 tenant.test")
        << QStringLiteral("tenant.test") << quint16(443) << http11 << 0
        << QStringLiteral("host_not_allowed") << int(SSL_AD_ACCESS_DENIED) << 1;
    QTest::newRow("D2 pkg.test:8443")
        << QStringLiteral("pkg.test") << quint16(8443) << http11 << 0
        << QStringLiteral("port_not_allowed") << int(SSL_AD_ACCESS_DENIED) << 1;
    QTest::newRow("TLS 1.1 client")
        << QStringLiteral("pkg.test") << quint16(443) << http11 << int(TLS1_1_VERSION)
        << QStringLiteral("handshake_failed") << int(SSL_AD_PROTOCOL_VERSION) << 1;
}

void TestTlsTerminator::guestHandshake()
{
    QFETCH(QString, sni);
    QFETCH(quint16, port);
    QFETCH(QByteArrayList, alpn);
    QFETCH(int, maxVersion);
    QFETCH(QString, reason);
    QFETCH(int, alert);
    QFETCH(int, policyChecks);

    const PolicyMatcher matcher = casesMatcher();
    TlsTerminator terminator(&*m_ca, [&matcher](const QString &host, quint16 p) {
        return matcher.checkConnection(host, p);
    });
    QVERIFY(terminator.isValid());
    const Listener listener = Listener::open();
    QVERIFY(listener.fd.get() >= 0);

    GuestOutcome gateway;
    std::thread server([&] { gateway = terminator.serveOne(listener, port); });
    const ClientOutcome guest = guestConnect(listener.port, m_ca->certificatePem(), sni,
                                             QStringLiteral("pkg.test"), alpn, maxVersion);
    server.join();

    QCOMPARE(wireName(gateway.reason), reason);
    QCOMPARE(terminator.policyChecks(), policyChecks);
    QCOMPARE(guest.alertReceived, alert);
    if (reason == QStringLiteral("allowed")) {
        QVERIFY(guest.handshakeOk);
        QVERIFY(gateway.handshakeOk);
        QCOMPARE(guest.verifyResult, QStringLiteral("ok")); // the leaf verifies for pkg.test
        QCOMPARE(gateway.serverName, QStringLiteral("pkg.test"));
        QCOMPARE(guest.alpn, alpn.isEmpty() ? QByteArray() : QByteArrayLiteral("http/1.1"));
        QCOMPARE(guest.reply, QByteArrayLiteral("ok pkg.test\n"));
        QCOMPARE(terminator.upstreamDials(), 1);
    } else {
        QVERIFY(!guest.handshakeOk);
        QVERIFY(!gateway.handshakeOk);
        QVERIFY(gateway.serverName.isEmpty());
        QVERIFY(!gateway.detail.isEmpty());
        QCOMPARE(terminator.upstreamDials(), 0); // nothing upstream
    }
}

// docs/redteam-cases.md A5: `CONNECT pkg.test:443`, then a ClientHello with SNI evil.test. The
// connection check binds the SNI to the CONNECT name before asking the policy.
void TestTlsTerminator::connectNameBindsSni()
{
    const PolicyMatcher matcher = casesMatcher();
    const QString connectName = QStringLiteral("pkg.test");
    TlsTerminator terminator(&*m_ca, [&](const QString &host, quint16 p) {
        if (host != connectName)
            return Verdict {
                EgressReason::HostNotAllowed, -1,
                QStringLiteral("SNI %1 differs from CONNECT %2").arg(host, connectName)};
        return matcher.checkConnection(host, p);
    });
    QVERIFY(terminator.isValid());
    for (const QString &sni : {QStringLiteral("evil.test"), QStringLiteral("pkg.test")}) {
        const Listener listener = Listener::open();
        GuestOutcome gateway;
        std::thread server([&] { gateway = terminator.serveOne(listener, 443); });
        const ClientOutcome guest = guestConnect(listener.port, m_ca->certificatePem(), sni, sni,
                                                 {QByteArrayLiteral("http/1.1")});
        server.join();
        const bool allowed = sni == connectName;
        QCOMPARE(guest.handshakeOk, allowed);
        QCOMPARE(wireName(gateway.reason),
                 allowed ? QStringLiteral("allowed") : QStringLiteral("host_not_allowed"));
    }
    QCOMPARE(terminator.upstreamDials(), 1);
}

void TestTlsTerminator::notTls_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("D3 SSH banner") << QByteArray("SSH-2.0-x\r\n");
    QTest::newRow("plain HTTP") << QByteArray("GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
    QTest::newRow("SSLv2 hello") << QByteArray("\x80\x2e\x01\x03\x01\x00\x15", 7);
    QTest::newRow("short then EOF") << QByteArray("\x16\x03", 2);
}

void TestTlsTerminator::notTls()
{
    QFETCH(QByteArray, bytes);
    const PolicyMatcher matcher = casesMatcher();
    TlsTerminator terminator(&*m_ca, [&matcher](const QString &host, quint16 p) {
        return matcher.checkConnection(host, p);
    });
    const Listener listener = Listener::open();
    GuestOutcome gateway;
    std::thread server([&] { gateway = terminator.serveOne(listener, 443); });
    Fd fd = connectLoopback(listener.port);
    QVERIFY(fd.get() >= 0);
    QCOMPARE(::send(fd.get(), bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL),
             ssize_t(bytes.size()));
    ::shutdown(fd.get(), SHUT_WR); // so "short then EOF" ends the peek
    char reply[64];
    const ssize_t n = ::recv(fd.get(), reply, sizeof reply, 0);
    server.join();
    // Closed without a byte (no TLS alert, no HTTP answer): EOF, or a reset because the
    // gateway closed with the guest's bytes unread.
    QVERIFY2(n == 0 || (n < 0 && errno == ECONNRESET), qPrintable(QString::number(n)));
    QCOMPARE(wireName(gateway.reason), QStringLiteral("not_tls"));
    QCOMPARE(terminator.policyChecks(), 0);
    QCOMPARE(terminator.upstreamDials(), 0);
}

void TestTlsTerminator::upstreamVerification_data()
{
    QTest::addColumn<QString>("trustFile"); // empty: the system store
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("verifyError");
    QTest::newRow("right name, test CA") << QStringLiteral("upstream-ca.crt")
                                         << QStringLiteral("pkg.test") << true << int(X509_V_OK);
    QTest::newRow("wrong name") << QStringLiteral("upstream-ca.crt")
                                << QStringLiteral("tenant.test") << false
                                << int(X509_V_ERR_HOSTNAME_MISMATCH);
    QTest::newRow("subdomain of the name")
        << QStringLiteral("upstream-ca.crt") << QStringLiteral("a.pkg.test") << false
        << int(X509_V_ERR_HOSTNAME_MISMATCH);
    QTest::newRow("untrusted CA") << QStringLiteral("stranger-ca.crt") << QStringLiteral("pkg.test")
                                  << false << int(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    QTest::newRow("system store") << QString() << QStringLiteral("pkg.test") << false
                                  << int(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

void TestTlsTerminator::upstreamVerification()
{
    QFETCH(QString, trustFile);
    QFETCH(QString, name);
    QFETCH(bool, ok);
    QFETCH(int, verifyError);

    TlsTrustStore trust;
    if (!trustFile.isEmpty())
        trust.caFile = m_dir.filePath(trustFile);
    auto context = TlsUpstreamContext::create(trust);
    QVERIFY_RESULT(context);
    auto leaf = m_upstreamCa->mintLeaf(QStringLiteral("pkg.test"));
    QVERIFY(leaf);

    const Listener listener = Listener::open();
    UpstreamResult upstream;
    std::thread server([&] { upstream = serveUpstreamOnce(listener, **leaf); });
    auto ssl = context->newConnection(name);
    QVERIFY(ssl);
    Fd fd = connectLoopback(listener.port);
    SSL_set_fd(ssl->get(), fd.get());
    const bool connected = SSL_connect(ssl->get()) == 1;
    const long verify = SSL_get_verify_result(ssl->get());
    ERR_clear_error();
    fd.reset(); // the upstream sees EOF on failure
    server.join();

    QCOMPARE(connected, ok);
    QCOMPARE(int(verify), verifyError);
    QCOMPARE(upstream.sni, name.toLatin1()); // SNI sent: the canonical name
    if (ok) {
        QVERIFY(upstream.handshakeOk);
        QCOMPARE(upstream.alpn, QByteArrayLiteral("http/1.1"));
    }
}

void TestTlsTerminator::upstreamRejectsBadTrustStoreAndNames()
{
    TlsTrustStore missing;
    missing.caFile = m_dir.filePath(QStringLiteral("no-such-ca.crt"));
    QVERIFY(!TlsUpstreamContext::create(missing));

    auto context = TlsUpstreamContext::create({});
    QVERIFY(context);
    QVERIFY(!context->newConnection(QStringLiteral("127.0.0.1")));
    QVERIFY(!context->newConnection(QStringLiteral("Pkg.test"))); // not canonical
    QVERIFY(!context->newConnection(QString()));
    QVERIFY(context->newConnection(QStringLiteral("pkg.test")));
}

void TestTlsTerminator::upstreamResumption_data()
{
    QTest::addColumn<int>("maxVersion");
    QTest::newRow("TLS 1.2") << int(TLS1_2_VERSION);
    QTest::newRow("TLS 1.3") << int(TLS1_3_VERSION);
}

void TestTlsTerminator::upstreamResumption()
{
    // docs/tls.md, "Session resumption": the second connection to a name resumes the session
    // of the first; a connection for another name is offered nothing and is verified in full
    // (and fails: the leaf is not for it); another port of the same name is offered nothing.
    QFETCH(int, maxVersion);
    TlsTrustStore trust;
    trust.caFile = m_dir.filePath(QStringLiteral("upstream-ca.crt"));
    auto context = TlsUpstreamContext::create(trust);
    QVERIFY_RESULT(context);
    auto leaf = m_upstreamCa->mintLeaf(QStringLiteral("pkg.test"));
    QVERIFY(leaf);
    const Listener listener = Listener::open();
    std::vector<ServedConnection> served;
    std::thread server([&] { served = serveUpstream(listener, **leaf, 3, maxVersion); });

    struct Client
    {
        bool connected = false;
        bool offered = false;
        bool resumed = false;
        long verify = 0;
    };
    const auto connectAs = [&](const QString &name) {
        Client client;
        auto ssl = context->newConnection(name, listener.port);
        if (!ssl)
            return client;
        client.offered = SSL_get_session(ssl->get()) != nullptr;
        Fd fd = connectLoopback(listener.port);
        SSL_set_fd(ssl->get(), fd.get());
        client.connected = SSL_connect(ssl->get()) == 1;
        client.verify = SSL_get_verify_result(ssl->get());
        client.resumed = SSL_session_reused(ssl->get()) == 1;
        if (client.connected) {
            // Read to the server's close_notify: TLS 1.3 tickets arrive after the handshake.
            char byte = 0;
            while (SSL_read(ssl->get(), &byte, 1) > 0) { }
            // An SSL freed without close_notify marks its session not resumable (OpenSSL's
            // ssl_clear_bad_session); the gateway's upstream leg sends one too.
            SSL_shutdown(ssl->get());
        }
        ERR_clear_error();
        return client;
    };

    const Client first = connectAs(QStringLiteral("pkg.test"));
    const Client second = connectAs(QStringLiteral("pkg.test"));
    const Client other = connectAs(QStringLiteral("tenant.test"));
    server.join();

    QVERIFY(first.connected);
    QVERIFY(!first.offered);
    QVERIFY(!first.resumed);
    QVERIFY(second.connected);
    QVERIFY(second.offered);
    QVERIFY(second.resumed);
    QCOMPARE(int(second.verify), int(X509_V_OK));
    QVERIFY(!other.offered);
    QVERIFY(!other.connected);
    QCOMPARE(int(other.verify), int(X509_V_ERR_HOSTNAME_MISMATCH));
    QCOMPARE(served.size(), size_t(3));
    QVERIFY(served[0].handshakeOk && !served[0].resumed);
    QVERIFY(served[1].handshakeOk && served[1].resumed);
    QVERIFY(!served[2].handshakeOk);
    QVERIFY(context->sessions().size() == 1);

    // Another port of the same name: nothing is offered.
    auto otherPort = context->newConnection(QStringLiteral("pkg.test"), quint16(listener.port + 1));
    QVERIFY(otherPort);
    QVERIFY(!SSL_get_session(otherPort->get()));
}

QTEST_GUILESS_MAIN(TestTlsTerminator)
#include "tst_tlsterminator.moc"
