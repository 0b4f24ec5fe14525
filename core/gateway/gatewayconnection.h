#pragma once

#include "core/gateway/credentials/credentialinjector.h"
#include "core/gateway/dns/addressrange.h"
#include "core/gateway/gatewayconfig.h"
#include "core/gateway/http/httprequestguard.h"
#include "core/gateway/http/httpresponsetracker.h"
#include "core/gateway/tls/tlsmemorystream.h"
#include "core/gateway/tls/tlsservercontext.h"
#include "core/gateway/transparentlistener.h"
#include "core/model/egressevent.h"
#include "core/policy/policymatcher.h"

#include <QHostAddress>
#include <QList>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>

class QTimer;

namespace airlock::gateway {

class DnsNameMapping;
class DnsUpstreamResolver;
class StreamSocket;
class TlsUpstreamContext;

/// What every connection of one gateway shares; owned by EgressGateway, outlives connections.
struct GatewayEnvironment
{
    QString sandbox;
    QHostAddress linkGateway;
    quint16 explicitProxyPort = 3128;
    GatewayLimits limits;
    TlsServerContext *tlsServer = nullptr;
    const TlsUpstreamContext *tlsUpstream = nullptr;
    DnsUpstreamResolver *resolver = nullptr;
    const DnsNameMapping *mapping = nullptr;
    RefusedRanges refused; ///< the configured ranges plus the sandbox link
    /// The sandbox's credentials now (replaced whole by a credentials message); each request
    /// is decided with the set current when its head arrives, and keeps it for its response.
    std::shared_ptr<const CredentialInjector> credentials;
    std::function<void(const EgressEvent &)> emitEvent;
};

/// One guest TCP connection through the gateway (docs/gateway.md, "Connection handling";
/// docs/redteam-cases.md principles 1, 5, 6). The original destination picks the mode: the
/// gateway's explicit proxy port → plain HTTP proxy (absolute-form, CONNECT); port 80 → plain HTTP
/// by Host; anything else → TLS (sniffed; not TLS is closed with `not_tls`). TLS is terminated
/// with the sandbox CA over memory BIOs; if the guest dialed a synthetic address, the SNI (or
/// Host) must be that address's name (`destination_mismatch`). Every request goes through one
/// HttpRequestGuard; the first request that passes opens the only upstream connection of this
/// guest connection, to the gateway's own resolution of the name (never the address the guest
/// chose), with full certificate verification; later requests must name the same host and port
/// (`host_mismatch`, 421). Credentials come last (docs/credentials.md): a request that passed
/// every check is inspected by the sandbox's CredentialInjector, which injects the secret into an
/// exact match (https, port 443, SNI = Host = binding host, path, method) or denies any other
/// request carrying a placeholder or value (403 `credential_exfil`, an alert); request bodies
/// are scanned on the way (held back by the scanner, never forwarded past a match). Responses
/// are streamed back unchanged and followed by an HttpResponseTracker to finish each request's
/// event; while the sandbox has credentials the tracker scrubs them instead (every form of a
/// value becomes the placeholder, the body re-framed). Reading from one side pauses while the
/// other side's write queue is above kHighWater. Single-threaded, never blocks.
class GatewayConnection final : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kHighWater = 512 * 1024; ///< pause the producer above this
    static constexpr qsizetype kLowWater = 128 * 1024; ///< resume below this
    static constexpr qsizetype kReadChunk = 64 * 1024;
    static constexpr int kConnectTimeoutMs = 10000;
    static constexpr int kLingerMs = 2000; ///< waiting for the guest's FIN after ours
    /// Requests forwarded and not yet answered, per connection: above it the gateway stops
    /// reading the guest until responses complete
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f5: pipelined requests that are never read
    /// grew the bookkeeping without bound).
    static constexpr int kMaxPipeline = 32;
    /// The guest's plaintext is handed to the guard in slices of this size, so one read adds
    /// at most a slice's worth of requests beyond kMaxPipeline.
    static constexpr qsizetype kGuardSlice = 4096;

    /// Takes ownership of the accepted socket `fd`. `policy` is this connection's snapshot
    /// (a policy change applies to new connections).
    GatewayConnection(const GatewayEnvironment *environment, policy::PolicyMatcher policy, int fd,
                      const OriginalDestination &destination, QObject *parent = nullptr);
    ~GatewayConnection() override;

    /// Starts reading from the guest.
    void start();

Q_SIGNALS:
    /// Both sides are closed; the owner deletes the connection (deleteLater).
    void finished();

private:
    enum class Mode { Sniff, TlsHandshake, Http, Closing };

    /// A request forwarded upstream and not yet answered completely.
    struct Request
    {
        QString method;
        QString path; ///< redacted (no query)
        QString host;
        quint16 port = 0;
        bool head = false;
        bool http10 = false;
        bool uploadDone = false;
        int status = 0;
        qint64 bytesUp = 0;
        qint64 bytesDown = 0;
        /// The credentials this request was decided with (keeps their locked forms alive for
        /// the body scanner and the response scrubber); null when the sandbox has none.
        std::shared_ptr<const CredentialInjector> credentials;
        qint64 binding = 0; ///< the binding injected into, 0: none
        qint64 scrubbed = 0; ///< secret forms replaced in the response
        /// The request body, scanned for placeholders and values it may not carry; with it the
        /// body is re-framed by us from what the scanner released.
        std::optional<StreamReplacer> bodyScan;
        HttpFraming framing = HttpFraming::None;
        CredentialInjector::Request credentialRequest;
    };

    // Guest side.
    void onGuestReadable();
    void handleGuestBytes(const QByteArray &bytes);
    void startGuestTls(const QByteArray &clientHello);
    void pumpGuestTls();
    void flushGuestTls();
    void onGuestTlsEstablished();
    void feedGuard(const QByteArray &plaintext);
    /// Hands m_guestBacklog to the guard slice by slice while the pipeline has room.
    void drainGuestBacklog();
    void processGuardEvents(QList<HttpEvent> &events);
    /// True while the guest must not be read: requests at kMaxPipeline or plaintext waiting.
    bool pipelineFull() const;
    /// Reading resumes when nothing holds it back any more (queued: never inside a callback).
    void resumeGuestIfPossible();
    void onForward(HttpForward &forward);
    void onBody(const HttpBody &body);
    void onRequestEnd();
    /// Refuses a request for a credential reason: the event carries the binding and an alert.
    void denyCredential(int status, const QString &reason, const QString &detail, qint64 binding,
                        const QString &method, const QString &target, const QString &host,
                        bool midBody);
    /// Refuses the request whose body the scanner caught (the binding it belongs to named).
    void denyBody(const Request &uploading);
    /// Starts following (and, with credentials, scrubbing) the response of the front request.
    void expectResponse(const Request &request);
    void onTunnel(HttpTunnel &tunnel);
    void onGuestEof();
    void sendGuest(QByteArrayView bytes);
    void onGuestBytesWritten();

    // Upstream side.
    void openUpstream();
    void onResolved(const QList<QHostAddress> &addresses);
    void connectNextCandidate();
    void onUpstreamConnected();
    void onUpstreamError();
    void onUpstreamReadable();
    void pumpUpstreamTls();
    void handleUpstreamPlaintext(QByteArrayView bytes);
    void onUpstreamEof();
    void sendUpstream(const QByteArray &bytes);
    void flushUpstreamPending();
    void onUpstreamBytesWritten();
    bool upstreamReady() const;
    qsizetype upstreamBacklog() const;

    // Decisions and endings.
    void denyHttp(int status, const QString &reason, const QString &detail,
                  const HttpForward *forward = nullptr);
    void failUpstream(int status, const QString &reason, const QString &detail);
    /// The front request's response cannot be scrubbed (HttpResponseTracker::Progress::refused):
    /// 502 `unscrubbable_response` with an alert, and the connection ends.
    void refuseUnscrubbable(const QString &why);
    void sendPendingDenialIfIdle();
    void completeFront();
    void abandonInflight(const QString &detail);
    void closeGracefully();
    void finish();
    void touch();
    EgressEvent baseEvent(EgressLayer layer, bool allowed, const QString &reason,
                          const QString &detail) const;
    void emitEvent(const EgressEvent &event);

    const GatewayEnvironment *m_env;
    policy::PolicyMatcher m_policy;
    OriginalDestination m_destination;
    QString m_expectedName; ///< the name of the synthetic address the guest dialed, if any
    StreamSocket *m_guest = nullptr;
    StreamSocket *m_upstream = nullptr;
    Mode m_mode = Mode::Sniff;
    quint16 m_port = 0; ///< the connection's port: original destination or CONNECT port
    bool m_guestTlsMode = false;
    TlsRequiredName m_required;
    QByteArray m_sniff;
    std::optional<TlsGuestConnection> m_guestConnection;
    std::unique_ptr<TlsMemoryStream> m_guestTls;
    std::unique_ptr<HttpRequestGuard> m_guard;
    bool m_guardStopped = false;
    QString m_sni;
    std::optional<QString> m_pinnedHost;
    quint16 m_pinnedPort = 0;
    QList<Request> m_inflight;
    QByteArray m_guestBacklog; ///< guest plaintext not yet given to the guard (pipeline full)
    bool m_resumeQueued = false;
    HttpResponseTracker m_tracker;
    std::optional<QByteArray> m_pendingDenial;
    QByteArray m_upstreamPending;
    bool m_resolving = false;
    QList<QHostAddress> m_candidates;
    qsizetype m_candidateIndex = 0;
    QString m_lastUpstreamError;
    quint64 m_upstreamGeneration = 0; ///< which upstream socket a queued error belongs to
    SslPtr m_upstreamSsl;
    std::unique_ptr<TlsMemoryStream> m_upstreamTls;
    bool m_guestEof = false;
    bool m_guestPaused = false;
    bool m_upstreamPaused = false;
    int m_events = 0;
    bool m_finished = false;
    QTimer *m_idle = nullptr;
    QTimer *m_connectTimer = nullptr;
    QTimer *m_linger = nullptr;
};

} // namespace airlock::gateway
