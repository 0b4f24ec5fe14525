#pragma once

#include "core/gateway/credentials/credentialinjector.h"
#include "core/gateway/dns/addressrange.h"
#include "core/gateway/gatewayconfig.h"
#include "core/gateway/http/httprequestguard.h"
#include "core/gateway/requestledger.h"
#include "core/gateway/tls/tlsmemorystream.h"
#include "core/gateway/tls/tlsservercontext.h"
#include "core/gateway/transparentlistener.h"
#include "core/model/egressevent.h"
#include "core/policy/policymatcher.h"

#include <QHostAddress>
#include <QList>
#include <QObject>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

class QTimer;

namespace airlock::gateway {

class DnsNameMapping;
class DnsUpstreamResolver;
class StreamSocket;
class TlsUpstreamContext;
class UpstreamLeg;

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
/// docs/redteam-cases.md principles 1, 5, 6): the guest side's state machine, composing the
/// UpstreamLeg (the one upstream connection) and the RequestLedger (the requests in flight and the
/// events). The original destination picks the mode: the gateway's explicit proxy port → plain HTTP
/// proxy (absolute-form, CONNECT); port 80 → plain HTTP by Host; anything else → TLS (sniffed; not
/// TLS is closed with `not_tls`). TLS is terminated with the sandbox CA over memory BIOs; if the
/// guest dialed a synthetic address, the SNI (or Host) must be that address's name
/// (`destination_mismatch`). Every request goes through one HttpRequestGuard; the first request
/// that passes opens the upstream leg to its host and port; later requests must name the same
/// host and port (`host_mismatch`, 421). Credentials come last (RequestLedger::decideCredentials,
/// docs/credentials.md); request bodies are scanned on the way (held back by the scanner, never
/// forwarded past a match). Responses are streamed back unchanged (or scrubbed while the sandbox
/// has credentials) as the ledger follows them. Reading from one side pauses while the other
/// side's write queue is above kHighWater. Single-threaded, never blocks.
class GatewayConnection final : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kHighWater = 512 * 1024; ///< pause the producer above this
    static constexpr qsizetype kLowWater = 128 * 1024; ///< resume below this
    static constexpr int kLingerMs = 2000; ///< waiting for the guest's FIN after ours
    /// The guest's plaintext is handed to the guard in slices of this size, so one read adds
    /// at most a slice's worth of requests beyond RequestLedger::kMaxPipeline.
    static constexpr qsizetype kGuardSlice = 4096;

    /// Takes ownership of the accepted socket `fd`. `policy` is the policy in force now;
    /// applyPolicy() replaces it while the connection is open.
    GatewayConnection(const GatewayEnvironment *environment, policy::PolicyMatcher policy, int fd,
                      const OriginalDestination &destination, QObject *parent = nullptr);
    ~GatewayConnection() override;

    /// Starts reading from the guest.
    void start();
    /// A policy change (docs/gateway.md, "Policy changes and open connections"): every request
    /// from now on is checked against `policy`; when it no longer allows the name and port
    /// this connection was admitted for, the connection is closed at once (a policy_revoked
    /// event; a request still waiting for its response is answered 403 when nothing of the
    /// response went out yet). A connection whose name is not decided yet (before the TLS
    /// handshake or the first plain-HTTP request) is decided by the new policy.
    void applyPolicy(const policy::PolicyMatcher &policy);

Q_SIGNALS:
    /// Both sides are closed; the owner deletes the connection (deleteLater).
    void finished();

private:
    enum class Mode { Sniff, TlsHandshake, Http, Closing };
    /// The name and port the connection was admitted for, once decided.
    std::optional<std::pair<QString, quint16>> admittedFor() const;
    using Request = RequestLedger::Request;

    // Guest side.
    void onGuestReadable();
    /// Stops reading from the guest while the guard is stopped, the upstream is behind or the
    /// pipeline is full (backpressure); true if it did. A paused guest is resumed by
    /// resumeGuestIfPossible() when a response completes or the upstream drains.
    bool pauseGuestIfFull();
    void handleGuestBytes(QByteArrayView bytes);
    void startGuestTls(const QByteArray &clientHello);
    void pumpGuestTls();
    void flushGuestTls();
    void onGuestTlsEstablished();
    void feedGuard(QByteArrayView plaintext);
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
    /// Refuses a request for a credential reason: the event carries the binding, and an alert
    /// for credential_exfil.
    void denyCredential(const RequestLedger::CredentialRefusal &refusal, const QString &method,
                        const QString &target, const QString &host, bool midBody);
    /// Refuses the request whose body the scanner caught (the binding it belongs to named).
    void denyBody();
    void onTunnel(HttpTunnel &tunnel);
    void onGuestEof();
    void sendGuest(QByteArrayView bytes);
    void onGuestBytesWritten();

    // Upstream side (the leg's signals).
    void onUpstreamPlaintext(QByteArrayView bytes);
    void onUpstreamEof();
    void onUpstreamBroken(const QString &error);
    void onUpstreamDrained();

    // Decisions and endings.
    /// When `head` (of a request denied for another reason) carries a credential placeholder
    /// outside its binding: names the binding in `event` and makes it an alert.
    void noteCarriedPlaceholder(EgressEvent &event, QByteArrayView head, const QString &method,
                                const QString &target, const QString &host) const;
    void denyHttp(EgressReason reason, const QString &detail, const HttpForward *forward = nullptr);
    /// The upstream leg could not be opened (or failed before the front request's response
    /// began): the denial with the reason's status, and the connection ends.
    void failUpstream(EgressReason reason, const QString &detail);
    /// The front request's response cannot be scrubbed (HttpResponseTracker::Progress::refused):
    /// 502 `unscrubbable_response` with an alert, and the connection ends.
    void refuseUnscrubbable(const QString &why);
    void sendPendingDenialIfIdle();
    void completeFront();
    void closeGracefully();
    void finish();
    /// Notes traffic now (the idle timeout counts from the last one).
    void touch();
    EgressEvent baseEvent(EgressLayer layer, bool allowed, EgressReason reason,
                          const QString &detail) const;

    const GatewayEnvironment *m_env;
    policy::PolicyMatcher m_policy;
    OriginalDestination m_destination;
    QString m_destinationText; ///< formatted once: every event carries it
    QString m_expectedName; ///< the name of the synthetic address the guest dialed, if any
    StreamSocket *m_guest = nullptr;
    UpstreamLeg *m_upstream = nullptr;
    RequestLedger m_ledger;
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
    QByteArray m_guestBacklog; ///< guest plaintext not yet given to the guard (pipeline full)
    bool m_resumeQueued = false;
    std::optional<QByteArray> m_pendingDenial;
    bool m_guestEof = false;
    bool m_guestPaused = false;
    bool m_finished = false;
    QTimer *m_idle = nullptr; ///< fires limits.idleTimeoutMs after the last traffic
    std::chrono::steady_clock::time_point m_lastActivity;
    QTimer *m_linger = nullptr;
};

} // namespace airlock::gateway
