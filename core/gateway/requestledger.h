#pragma once

#include "core/gateway/credentials/credentialinjector.h"
#include "core/gateway/http/httprequestguard.h"
#include "core/gateway/http/httpresponsetracker.h"
#include "core/model/egressevent.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace airlock::gateway {

/// The requests of one guest connection that went upstream and are not answered completely
/// yet, oldest first (HTTP/1.1 pipelining: responses come back in request order, RFC 9112
/// §9.3.2), with what was decided for each (credentials injected, body scanner, response
/// scrubbing) and counted (bytes, status, replacements); and the connection's event accounting:
/// every event of the connection goes out through record(), so events() says whether a decision
/// was reported at all. Follows the front request's response with an HttpResponseTracker.
/// Knows nothing of sockets: GatewayConnection moves the bytes.
class RequestLedger final
{
public:
    /// Requests forwarded and not yet answered, per connection: above it the gateway stops
    /// reading the guest until responses complete
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f5: pipelined requests that are never read
    /// grew the bookkeeping without bound).
    static constexpr int kMaxPipeline = 32;

    /// A request forwarded upstream and not yet answered completely.
    struct Request
    {
        QString method;
        QString path; ///< redacted (no query)
        QString host;
        quint16 port = 0;
        bool head = false;
        bool http10 = false;
        /// The guest asked to close after this request (RFC 9112 §9.6: `Connection: close`,
        /// or HTTP/1.0 without keep-alive): nothing after it is read, and the connection
        /// closes once its response went out.
        bool lastRequest = false;
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

    /// Why the credential layer refuses a request: CredentialExfil (403, an alert) or
    /// CredentialUnavailable (503), the binding concerned (0: none) and an English detail.
    struct CredentialRefusal
    {
        EgressReason reason = EgressReason::CredentialExfil;
        QString detail;
        qint64 binding = 0;
    };

    /// One piece of the front request's response, as HttpResponseTracker::feed found it.
    struct ResponsePiece
    {
        HttpResponseTracker::Progress progress;
        bool rewriting = false;
        /// What goes to the guest for `input` (the bytes fed): the scrubbed output, or the
        /// consumed input unchanged.
        QByteArrayView forward(QByteArrayView input) const
        {
            return rewriting ? QByteArrayView(progress.output) : input.first(progress.consumed);
        }
    };

    /// An event with the connection's fields (time, sandbox, names, port, destination).
    using EventFactory =
        std::function<EgressEvent(EgressLayer, bool allowed, EgressReason, const QString &detail)>;
    using EventSink = std::function<void(const EgressEvent &)>;

    /// `sandbox` names the connection in debug logs; `sink` receives every event.
    RequestLedger(QString sandbox, EventFactory base, EventSink sink);

    // Events.
    /// An event of this connection (see EventFactory).
    EgressEvent event(EgressLayer layer, bool allowed, EgressReason reason,
                      const QString &detail) const;
    /// Counts, logs (at debug level, airlock.gateway.http) and hands on one event.
    void record(const EgressEvent &event);
    /// Events recorded so far: 0 means no decision was reported yet.
    int events() const { return m_events; }

    // Requests.
    /// The bookkeeping for `forward`, before any credential decision.
    static Request requestFor(const HttpForward &forward);
    /// The credential decision for `request`, last after every other check (docs/credentials.md;
    /// docs/redteam-cases.md principle 7). With `credentials` (null or empty: nothing to do) the
    /// head is inspected: a placeholder or value it may not carry refuses it; else the head is made
    /// for scrubbing and the matching secrets are injected into `head` (a binding whose secret is
    /// missing refuses it, `head` wiped), and the body scanner is set up. `tls` and `sni` are
    /// the connection's.
    static std::optional<CredentialRefusal>
    decideCredentials(Request &request, QByteArray &head,
                      const std::shared_ptr<const CredentialInjector> &credentials, bool tls,
                      const QString &sni, const HttpForward &forward);
    /// Adds a forwarded request (logged at debug level); the first one's response is expected.
    void append(Request request);
    bool isEmpty() const { return m_inflight.isEmpty(); }
    qsizetype size() const { return m_inflight.size(); }
    /// kMaxPipeline requests are waiting for their responses.
    bool full() const { return m_inflight.size() >= kMaxPipeline; }
    const Request &front() const { return m_inflight.first(); }
    const Request &back() const { return m_inflight.last(); }
    /// The newest request's body is still being uploaded.
    bool uploading() const { return !m_inflight.isEmpty() && !m_inflight.last().uploadDone; }
    /// Takes the oldest request out without an event (the caller reports it).
    Request takeFront() { return m_inflight.takeFirst(); }
    /// Drops the newest request without an event (the caller reports it).
    void dropBack() { m_inflight.removeLast(); }
    /// Drops every request without an event.
    void clear() { m_inflight.clear(); }

    /// What of a piece of the newest request's body goes upstream (re-framed from what the
    /// scanner released when there is one; may be empty), or std::nullopt when the scanner
    /// caught a placeholder or value (nothing of it went up).
    std::optional<QByteArray> uploadBody(const HttpBody &body);
    /// The newest request's body is complete: what remains to send (the scanner's tail and the
    /// last chunk), or std::nullopt when the scanner caught something.
    std::optional<QByteArray> endUpload();
    /// The refusal for a body the scanner caught: the binding whose form it found.
    CredentialRefusal bodyRefusal() const;

    // Responses.
    /// True while the front request's response is expected: upstream bytes are welcome.
    bool awaitingResponse() const { return m_tracker.active() && !m_inflight.isEmpty(); }
    /// Feeds upstream bytes to the front request's response; counts replacements and the bytes
    /// that go to the guest (ResponsePiece::forward).
    ResponsePiece feedResponse(QByteArrayView bytes);
    /// Takes the status of a head the last feedResponse completed (an interim 1xx only while no
    /// status is known).
    void noteStatus(const HttpResponseTracker::Progress &progress);
    /// The upstream closed: when that ends the front response cleanly, its last bytes for the
    /// guest (counted; may be empty), else std::nullopt.
    std::optional<QByteArray> finishOnEof();
    /// After the front request completed: starts following the next one's response, if any.
    void expectNext();

    /// The allowed event of a request (taken out with takeFront) whose response completed.
    void recordCompleted(const Request &request);
    /// Requests that were allowed and forwarded but got no complete answer still get their
    /// allowed event (with what was counted and `detail`), so the history shows them.
    void abandon(const QString &detail);
    /// Sets host, port, method and path of `event` to `request`'s.
    static void describe(EgressEvent &event, const Request &request);

private:
    /// Starts following (and, with credentials, scrubbing) the response of `request`.
    void expectResponse(const Request &request);
    /// The allowed event of a request leaving the ledger.
    void recordAllowed(const Request &request, const QString &detail);

    QString m_sandbox;
    EventFactory m_base;
    QString m_forwardedHost; ///< recordCompleted's detail, kept for the next request
    int m_forwardedPort = -1;
    QString m_forwardedDetail;
    EventSink m_sink;
    int m_events = 0;
    QList<Request> m_inflight;
    HttpResponseTracker m_tracker;
};

} // namespace airlock::gateway
