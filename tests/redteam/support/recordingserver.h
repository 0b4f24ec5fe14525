#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QString>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace airlock::redteam {

class TestCa;
struct Stream;

/// One socket a RecordingServer listens on.
struct ServerEndpoint
{
    enum class Kind {
        Http, ///< plain HTTP/1.1 (port 80 style)
        Https, ///< TLS (certificate per SNI from the TestCa), then HTTP/1.1
        Raw, ///< TCP that only records what arrives (SSH, Redis, DoT stand-ins)
        Udp, ///< datagrams, each recorded as its own ConnectionRecord
    };
    QString label; ///< which test server this is ("pkg", "evil", "host-trap", ...)
    QHostAddress address; ///< bound address (IPv6 sockets are v6-only)
    quint16 port = 0;
    Kind kind = Kind::Http;
    QString defaultName; ///< Https: the certificate for a ClientHello without SNI
};

/// One HTTP request as the server parsed it.
struct HttpRequestRecord
{
    QByteArray method;
    QByteArray target;
    QList<std::pair<QByteArray, QByteArray>> headers; ///< in arrival order, names as sent
    QByteArray body;

    /// The values of every header named `name` (case-insensitive).
    QList<QByteArray> values(const QByteArray &name) const;
};

/// What one accepted connection (or one datagram) delivered.
struct ConnectionRecord
{
    QString label;
    quint16 port = 0;
    ServerEndpoint::Kind kind = ServerEndpoint::Kind::Http;
    QHostAddress peer;
    QString sni; ///< Https: the server name the client sent (empty: none)
    bool handshakeCompleted = false; ///< Https only
    QByteArray received; ///< every byte that arrived (decrypted for Https)
    QList<HttpRequestRecord> requests;
};

/// The test's "internet": HTTP, HTTPS, raw TCP and UDP servers that record every connection
/// and byte, running on threads inside one network namespace. Used for the upstream servers
/// (pkg.test, api.test, tenant.test sharing pkg.test's address, evil.test) and as traps in
/// the host namespace (a service the guest must never reach). HTTP answers:
/// - `/redirect-metadata`: 302 with `Location: http://169.254.169.254/` (docs/redteam-cases.md H1),
/// - `/redirect-evil`: 307 with `Location: https://evil.test/c` (H1),
/// - `/v1/hangup...`: no answer, the connection is closed (an upstream error),
/// - `/v1/unauthorized...`: 401 `invalid token <token>` with the token also in
///   `WWW-Authenticate` (I3: an API that reflects the credential it refuses),
/// - `/v1/reflect-encoded...`: 200, chunked in 7-byte chunks, the token raw, base64,
///   percent-encoded and base64 inside JSON (I3),
/// - `/v1/coded-<gzip|gzip-if-asked|deflate|raw-deflate|br|te-gzip>`: the request head echoed
///   in that content-coding (te-gzip: `Transfer-Encoding: gzip, chunked`), whatever
///   Accept-Encoding says (except -if-asked); `br` is a false label on plain bytes,
/// - `/v1/recall...`: 200 "previous credential: <token>", the bearer token of the request
///   before (any connection, any endpoint),
/// - `/v1/range...`: the request head echoed, `Range: bytes=a-b` honoured with a 206
///   (`/v1/range-always`: a 206 even without Range),
/// - anything else: 200, body "label=L sni=S host=H target=T" and the request head echoed
///   (api.test "echoes request headers").
/// Keep-alive is honoured so tests can see exactly which requests of a connection arrived
/// (A6). Records are written before the answer is sent, so a guest that got an answer can
/// assert on them at once.
class RecordingServer final
{
public:
    /// `nsFd`: the namespace to bind in; `ca`: signs the Https certificates (may be null when
    /// no endpoint is Https). Both must outlive the server.
    RecordingServer(int nsFd, TestCa *ca);
    ~RecordingServer();
    RecordingServer(const RecordingServer &) = delete;
    RecordingServer &operator=(const RecordingServer &) = delete;

    /// Binds every endpoint inside the namespace and starts serving; false (qWarning says why)
    /// when any bind fails.
    bool start(const QList<ServerEndpoint> &endpoints);
    /// Closes every socket and joins every thread (idempotent).
    void stop();

    /// A snapshot of the records, all or of one label, in accept order.
    QList<ConnectionRecord> connections(const QString &label = QString()) const;
    /// Forgets every record (between test functions).
    void clear();

private:
    struct Listener
    {
        ServerEndpoint endpoint;
        int fd = -1;
    };

    void acceptLoop();
    void serve(size_t index, int fd, ServerEndpoint endpoint);
    void serveHttp(size_t index, Stream &stream, const ServerEndpoint &endpoint);
    size_t addRecord(ConnectionRecord record);
    void update(size_t index, const std::function<void(ConnectionRecord &)> &change);

    int m_nsFd;
    TestCa *m_ca;
    void *m_sslContext = nullptr; // SSL_CTX*, kept out of the header
    QList<Listener> m_listeners;
    int m_wakeFd = -1;
    std::atomic<bool> m_stopping = false;
    std::thread m_acceptor;
    std::mutex m_threadsMutex;
    std::vector<std::thread> m_handlers;
    std::vector<int> m_openFds;
    mutable std::mutex m_recordsMutex;
    std::vector<ConnectionRecord> m_records;
    QByteArray m_lastToken; ///< the last Authorization credential seen (/v1/recall)
    size_t m_firstVisible = 0; ///< clear() hides older records; handlers keep their indices
};

} // namespace airlock::redteam
