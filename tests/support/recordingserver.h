#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace airlock::test {

class TestCa;
struct Stream;
struct ServedConnection;

/// One socket a RecordingServer listens on.
struct ServerEndpoint
{
    enum class Kind {
        Http, ///< plain HTTP/1.1 (port 80 style)
        Https, ///< TLS (certificate per SNI from the TestCa), then HTTP/1.1
        Raw, ///< TCP that only records what arrives (SSH, Redis, DoT stand-ins)
        Udp, ///< datagrams, each recorded as its own ConnectionRecord
    };
    /// How Http and Https endpoints answer (RecordingServer lists the paths).
    enum class Answer {
        Echo, ///< the red-team upstream: label, SNI, Host and target, the request head echoed
        Hello, ///< a plain upstream: "hello <host> <target>\n", /big and /redirect
    };
    QString label; ///< which test server this is ("pkg", "evil", "host-trap", ...)
    QHostAddress address; ///< bound address (IPv6 sockets are v6-only)
    quint16 port = 0;
    Kind kind = Kind::Http;
    QString defaultName; ///< Https: the certificate for a ClientHello without SNI
    Answer answer = Answer::Echo;
    /// Https: when set, the certificate of this name whatever the SNI (a server presenting
    /// the wrong certificate).
    QString certificateName;
};

/// One HTTP request as the server parsed it.
struct HttpRequestRecord
{
    QByteArray head; ///< the request line and fields as they arrived, up to the blank line
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
/// the host namespace (a service the guest must never reach). Answer::Hello endpoints answer
/// every request with 200 "hello <host> <target>\n", except `/big` (1 MiB of 'x') and
/// `/redirect` (302 to https://evil.test/c). Answer::Echo endpoints answer:
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
/// assert on them at once; "nothing arrived" is asserted after settle().
/// Where RecordingServer::settle() connects from and to: a namespace whose packets to the server
/// travel the path the tested traffic takes (the uplink from the gateway's namespace), and an
/// address of the server's namespace; the server listens on it at kBarrierPort. (Outside the
/// class: g++ 12 cannot use a nested type's member initializers in a default argument.)
struct RecordingBarrier
{
    int fromNsFd = -1;
    QHostAddress address;
};

class RecordingServer final
{
public:
    using Barrier = RecordingBarrier;
    static constexpr quint16 kBarrierPort = 9;

    /// `nsFd`: the namespace to bind in; `ca`: signs the Https certificates (may be null when
    /// no endpoint is Https). Both must outlive the server.
    RecordingServer(int nsFd, TestCa *ca);
    ~RecordingServer();
    RecordingServer(const RecordingServer &) = delete;
    RecordingServer &operator=(const RecordingServer &) = delete;

    /// Binds every endpoint (and the barrier's listener, when `barrier` names an address)
    /// inside the namespace and starts serving; false (qWarning says why) when any bind fails.
    bool start(const QList<ServerEndpoint> &endpoints, const Barrier &barrier = {});
    /// Closes every socket and joins every thread (idempotent).
    void stop();

    /// The barrier for "nothing arrived": connects from the barrier's namespace and waits for
    /// the server's answer, which it sends only once it has accepted every connection waiting
    /// in its listeners' queues, read every datagram waiting on its UDP sockets, and recorded
    /// every byte (and parsed every request) waiting on its connections. Anything sent to the
    /// server along the barrier's path before settle() is in the records when it returns true.
    /// False on timeout (5 s) or without a barrier.
    bool settle(int timeoutMs = 5000);

    /// A snapshot of the records, all or of one label, in accept order.
    QList<ConnectionRecord> connections(const QString &label = QString()) const;
    /// Every HTTP request of connections(label) on `port` (any port: 0), in order.
    QList<HttpRequestRecord> requests(const QString &label = QString(), quint16 port = 0) const;
    /// Forgets every record (between test functions).
    void clear();

private:
    struct Listener
    {
        ServerEndpoint endpoint;
        int fd = -1;
        bool barrier = false;
    };

    void acceptLoop();
    void acceptPending(const Listener &listener);
    void serve(size_t index, std::shared_ptr<ServedConnection> connection, ServerEndpoint endpoint);
    void serveHttp(size_t index, Stream &stream, const ServerEndpoint &endpoint);
    void serveBarrier(int fd);
    /// True once nothing waits in a listener's queue or on a connection (see settle()).
    bool quiet(int timeoutMs);
    void progressed();
    size_t addRecord(ConnectionRecord record);
    void update(size_t index, const std::function<void(ConnectionRecord &)> &change);

    int m_nsFd;
    TestCa *m_ca;
    Barrier m_barrier;
    void *m_sslContext = nullptr; // SSL_CTX*, kept out of the header
    QList<Listener> m_listeners;
    int m_wakeFd = -1;
    std::atomic<bool> m_stopping = false;
    std::thread m_acceptor;
    /// Held by the acceptor while it accepts and reads datagrams, released while it polls.
    std::mutex m_acceptBusy;
    std::mutex m_threadsMutex;
    std::vector<std::thread> m_handlers;
    std::vector<std::shared_ptr<ServedConnection>> m_open;
    /// Counts the passes of the acceptor and the handlers, for quiet() to wait on.
    std::mutex m_progressMutex;
    std::condition_variable m_progressChanged;
    quint64 m_progress = 0;
    mutable std::mutex m_recordsMutex;
    std::vector<ConnectionRecord> m_records;
    QByteArray m_lastToken; ///< the last Authorization credential seen (/v1/recall)
    size_t m_firstVisible = 0; ///< clear() hides older records; handlers keep their indices
};

} // namespace airlock::test
