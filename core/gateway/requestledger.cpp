#include "core/gateway/requestledger.h"

#include "core/gateway/credentials/wipe.h"

#include <QJsonDocument>
#include <QLoggingCategory>

namespace airlock::gateway {

namespace {

// Every decision at debug level (the events as they leave): what an operator turns on first,
// so it must never carry a secret (docs/redteam-cases.md I4; tst_redteam_credentials searches it).
Q_LOGGING_CATEGORY(lcHttp, "airlock.gateway.http")

void addCredentialFields(EgressEvent &event, qint64 binding, qint64 scrubbed)
{
    if (binding > 0)
        event.binding = binding;
    if (scrubbed > 0) {
        event.scrubbed = scrubbed;
        event.alert = true;
        event.detail += QStringLiteral("; the secret came back in the response %1 time(s) and "
                                       "was replaced by its placeholder")
                            .arg(scrubbed);
    }
}

} // namespace

RequestLedger::RequestLedger(QString sandbox, EventFactory base, EventSink sink)
    : m_sandbox(std::move(sandbox)), m_base(std::move(base)), m_sink(std::move(sink))
{ }

// ---- events ------------------------------------------------------------------------------

EgressEvent RequestLedger::event(EgressLayer layer, bool allowed, EgressReason reason,
                                 const QString &detail) const
{
    return m_base(layer, allowed, reason, detail);
}

void RequestLedger::record(const EgressEvent &event)
{
    ++m_events;
    qCDebug(lcHttp, "%s", QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact).constData());
    m_sink(event);
}

void RequestLedger::describe(EgressEvent &event, const Request &request)
{
    event.host = request.host;
    event.port = request.port;
    event.method = request.method;
    event.path = request.path;
}

void RequestLedger::recordAllowed(const Request &request, const QString &detail)
{
    EgressEvent event = m_base(EgressLayer::Http, true, EgressReason::Allowed, detail);
    describe(event, request);
    if (request.status != 0)
        event.status = request.status;
    event.bytesUp = request.bytesUp;
    event.bytesDown = request.bytesDown;
    addCredentialFields(event, request.binding, request.scrubbed);
    record(event);
}

void RequestLedger::recordCompleted(const Request &request)
{
    // A connection's requests go to one host and port: the text is formatted once for them.
    if (m_forwardedDetail.isEmpty() || m_forwardedHost != request.host
        || m_forwardedPort != request.port) {
        m_forwardedHost = request.host;
        m_forwardedPort = request.port;
        m_forwardedDetail =
            QStringLiteral("forwarded to %1 port %2").arg(request.host).arg(request.port);
    }
    if (request.binding > 0)
        return recordAllowed(request,
                             m_forwardedDetail
                                 + QStringLiteral("; injected binding %1").arg(request.binding));
    recordAllowed(request, m_forwardedDetail);
}

void RequestLedger::abandon(const QString &detail)
{
    while (!m_inflight.isEmpty())
        recordAllowed(m_inflight.takeFirst(), detail);
}

// ---- requests ----------------------------------------------------------------------------

RequestLedger::Request RequestLedger::requestFor(const HttpForward &forward)
{
    Request request;
    request.method = forward.method;
    request.path = EgressEvent::redactPath(forward.target);
    request.host = forward.authority.host;
    request.port = forward.authority.port;
    request.head = forward.method == u"HEAD";
    request.http10 = forward.version == 10;
    request.lastRequest = !forward.keepAlive;
    request.uploadDone = false;
    request.framing = forward.framing;
    return request;
}

std::optional<RequestLedger::CredentialRefusal>
RequestLedger::decideCredentials(Request &request, QByteArray &head,
                                 const std::shared_ptr<const CredentialInjector> &credentials,
                                 bool tls, const QString &sni, const HttpForward &forward)
{
    if (!credentials || credentials->isEmpty())
        return std::nullopt;
    request.credentials = credentials;
    const CredentialInjector &injector = *request.credentials;
    request.credentialRequest = {
        tls, forward.authority.port, sni, forward.authority.host, forward.method, forward.target};
    const CredentialInjector::Verdict verdict = injector.inspect(request.credentialRequest, head);
    const qint64 binding =
        verdict.credential >= 0 ? injector.credentials().at(verdict.credential).binding : 0;
    if (verdict.kind == CredentialInjector::Verdict::Kind::Exfiltration)
        return CredentialRefusal {EgressReason::CredentialExfil, verdict.detail, binding};
    // The response will be scrubbed: no compression, no slices (before the injection, so no
    // copy of the secret is made here).
    if (injector.hasValues())
        head = CredentialInjector::prepareForScrubbing(head);
    if (verdict.kind == CredentialInjector::Verdict::Kind::Inject) {
        for (const int index : verdict.injections) {
            if (injector.hasValue(index))
                continue;
            const qint64 missing = injector.credentials().at(index).binding;
            wipe(head);
            return CredentialRefusal {
                EgressReason::CredentialUnavailable,
                QStringLiteral("binding %1 matches, but airlockd could not hand its secret to "
                               "the gateway (see the helper's log)")
                    .arg(missing),
                missing};
        }
        for (const int index : verdict.injections) {
            QByteArray injected = injector.inject(head, index);
            wipe(head);
            head = std::move(injected);
        }
        request.binding = binding;
    }
    request.bodyScan = injector.bodyScanner(request.credentialRequest);
    return std::nullopt;
}

void RequestLedger::append(Request request)
{
    qCDebug(lcHttp, "%s: forwarding %s %s port %u %s%s", qPrintable(m_sandbox),
            qPrintable(request.method), qPrintable(request.host), unsigned(request.port),
            qPrintable(request.path),
            request.binding > 0
                ? qPrintable(QStringLiteral(" (injected binding %1)").arg(request.binding))
                : "");
    m_inflight.append(std::move(request));
    if (m_inflight.size() == 1 && !m_tracker.active())
        expectResponse(m_inflight.first());
}

std::optional<QByteArray> RequestLedger::uploadBody(const HttpBody &body)
{
    if (m_inflight.isEmpty())
        return QByteArray();
    Request &request = m_inflight.last();
    if (!request.bodyScan || request.bodyScan->isEmpty()) {
        request.bytesUp += body.bytes.size();
        return body.bytes;
    }
    // Only what the scanner released goes up, re-framed by us: a placeholder or value is
    // detected before any byte of its last piece leaves (the guard's chunk framing around the
    // data is replaced by ours; its last chunk is written in endUpload).
    const QByteArray released =
        request.bodyScan->feed(QByteArrayView(body.bytes).sliced(body.dataOffset, body.dataLength));
    if (request.bodyScan->matches() > 0)
        return std::nullopt;
    if (released.isEmpty())
        return QByteArray();
    const QByteArray framed = request.framing == HttpFraming::Chunked
        ? QByteArray::number(released.size(), 16) + "\r\n" + released + "\r\n"
        : released;
    request.bytesUp += framed.size();
    return framed;
}

std::optional<QByteArray> RequestLedger::endUpload()
{
    if (m_inflight.isEmpty())
        return QByteArray();
    Request &request = m_inflight.last();
    QByteArray framed;
    if (request.bodyScan && !request.bodyScan->isEmpty()) {
        const QByteArray tail = request.bodyScan->finish();
        if (request.bodyScan->matches() > 0)
            return std::nullopt;
        framed = tail;
        if (request.framing == HttpFraming::Chunked) {
            framed = tail.isEmpty() ? QByteArray()
                                    : QByteArray::number(tail.size(), 16) + "\r\n" + tail + "\r\n";
            framed += "0\r\n\r\n";
        }
        request.bytesUp += framed.size();
        request.bodyScan.reset();
    }
    request.uploadDone = true;
    return framed;
}

RequestLedger::CredentialRefusal RequestLedger::bodyRefusal() const
{
    const Request &request = m_inflight.last();
    const int index = request.credentials->credentialOfForm(request.bodyScan->lastMatch());
    const qint64 binding = index >= 0 ? request.credentials->credentials().at(index).binding : 0;
    return CredentialRefusal {
        EgressReason::CredentialExfil,
        QStringLiteral("the request body carries the placeholder or the value of binding %1, "
                       "which this request may not carry")
            .arg(binding),
        binding};
}

// ---- responses ---------------------------------------------------------------------------

void RequestLedger::expectResponse(const Request &request)
{
    HttpResponseTracker::Rewrite rewrite;
    if (request.credentials && request.credentials->hasValues()) {
        rewrite.rules = request.credentials->allScrubRules();
        rewrite.http10 = request.http10;
    }
    m_tracker.expect(request.head, std::move(rewrite));
}

RequestLedger::ResponsePiece RequestLedger::feedResponse(QByteArrayView bytes)
{
    ResponsePiece piece;
    piece.rewriting = m_tracker.rewriting();
    piece.progress = m_tracker.feed(bytes);
    Request &front = m_inflight.first();
    front.scrubbed += piece.progress.replacements;
    front.bytesDown += piece.forward(bytes).size();
    return piece;
}

void RequestLedger::noteStatus(const HttpResponseTracker::Progress &progress)
{
    Request &front = m_inflight.first();
    if (progress.status != 0 && (!progress.interim || front.status == 0))
        front.status = progress.status;
}

std::optional<QByteArray> RequestLedger::finishOnEof()
{
    QByteArray tail;
    if (m_inflight.isEmpty() || !m_tracker.finishOnEof(&tail))
        return std::nullopt;
    m_inflight.first().bytesDown += tail.size();
    return tail;
}

void RequestLedger::expectNext()
{
    if (!m_inflight.isEmpty())
        expectResponse(m_inflight.first());
}

} // namespace airlock::gateway
