#include "core/gateway/gatewayconnection.h"

#include "core/gateway/dns/dnsnamemapping.h"
#include "core/gateway/dns/dnsupstreamresolver.h"
#include "core/gateway/streamsocket.h"
#include "core/gateway/tls/tlsupstreamcontext.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>

#include <openssl/crypto.h>

namespace airlock::gateway {

namespace {

// Every decision at debug level (the events as they leave): what an operator turns on first,
// so it must never carry a secret (docs/redteam-cases.md I4; tst_redteam_credentials searches it).
Q_LOGGING_CATEGORY(lcHttp, "airlock.gateway.http")

const QString kAllowed = QStringLiteral("allowed");
const QString kCredentialExfil = QStringLiteral("credential_exfil");
const QString kUnscrubbable = QStringLiteral("unscrubbable_response");

// Wipes a buffer that may have held an injected request head before it is freed. A buffer
// shared with another QByteArray (a socket's queue) is only released: that copy is in use.
void wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    bytes.clear();
}

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

GatewayConnection::GatewayConnection(const GatewayEnvironment *environment,
                                     policy::PolicyMatcher policy, int fd,
                                     const OriginalDestination &destination, QObject *parent)
    : QObject(parent)
    , m_env(environment)
    , m_policy(std::move(policy))
    , m_destination(destination)
    , m_port(destination.port)
{
    m_guest = new StreamSocket(fd, this);
    if (const auto name = m_env->mapping->nameFor(destination.address))
        m_expectedName = *name;
    m_idle = new QTimer(this);
    m_idle->setSingleShot(true);
    m_idle->setInterval(m_env->limits.idleTimeoutMs);
    connect(m_idle, &QTimer::timeout, this, [this] {
        if (m_mode == Mode::Closing)
            return finish();
        abandonInflight(QStringLiteral("idle timeout"));
        if (m_events == 0)
            emitEvent(baseEvent(EgressLayer::Tcp, false, QStringLiteral("idle_timeout"),
                                QStringLiteral("no traffic for %1 ms before any decision")
                                    .arg(m_env->limits.idleTimeoutMs)));
        closeGracefully();
    });
    connect(m_guest, &StreamSocket::readyRead, this, &GatewayConnection::onGuestReadable);
    connect(m_guest, &StreamSocket::bytesWritten, this, &GatewayConnection::onGuestBytesWritten);
    connect(
        m_guest, &StreamSocket::errorOccurred, this,
        [this] {
            abandonInflight(
                QStringLiteral("guest connection error: %1").arg(m_guest->errorString()));
            finish();
        },
        Qt::QueuedConnection);
}

GatewayConnection::~GatewayConnection()
{
    // The upstream SSL is referenced by its stream; free the stream first.
    m_upstreamTls.reset();
    m_guestTls.reset();
}

void GatewayConnection::start()
{
    touch();
    const bool explicitProxy =
        m_destination.address.isEqual(m_env->linkGateway, QHostAddress::ConvertV4MappedToIPv4)
        && m_destination.port == m_env->explicitProxyPort;
    if (explicitProxy || m_destination.port == 80) {
        HttpConnectionContext context;
        context.tls = false;
        context.port = m_destination.port;
        context.explicitProxy = explicitProxy;
        context.maxHeaderBytes = m_env->limits.maxHeaderBytes;
        m_guard = std::make_unique<HttpRequestGuard>(context, m_policy);
        m_mode = Mode::Http;
    } else {
        m_mode = Mode::Sniff;
        if (!m_expectedName.isEmpty())
            m_required = TlsRequiredName {m_expectedName, TlsRejectReason::DestinationMismatch};
    }
    onGuestReadable();
}

// ---- events ------------------------------------------------------------------------------

EgressEvent GatewayConnection::baseEvent(EgressLayer layer, bool allowed, const QString &reason,
                                         const QString &detail) const
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.sandbox = m_env->sandbox;
    event.layer = layer;
    event.allowed = allowed;
    event.reason = reason;
    event.detail = detail;
    event.sni = m_sni;
    event.name = !m_sni.isEmpty()    ? m_sni
        : m_pinnedHost               ? *m_pinnedHost
        : !m_required.name.isEmpty() ? m_required.name
                                     : m_expectedName;
    event.port = m_port;
    event.destination = m_destination.address.toString();
    return event;
}

void GatewayConnection::emitEvent(const EgressEvent &event)
{
    ++m_events;
    qCDebug(lcHttp, "%s", QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact).constData());
    if (m_env->emitEvent)
        m_env->emitEvent(event);
}

void GatewayConnection::touch()
{
    if (m_mode != Mode::Closing)
        m_idle->start();
}

// ---- guest side --------------------------------------------------------------------------

void GatewayConnection::onGuestReadable()
{
    for (int round = 0; round < 16; ++round) {
        if (m_mode == Mode::Closing) {
            // Lingering close: discard what the guest still sends until its FIN, so our last
            // bytes are not destroyed by a reset (RFC 9112 §9.6).
            QByteArray discard;
            const auto result = m_guest->read(discard, kReadChunk);
            if (result == StreamSocket::ReadResult::Data)
                continue;
            if (result == StreamSocket::ReadResult::Error)
                return finish();
            if (result == StreamSocket::ReadResult::Eof) {
                m_guestEof = true;
                if (m_guest->bytesToWrite() == 0)
                    finish();
            }
            return;
        }
        if (m_guardStopped || upstreamBacklog() > kHighWater || pipelineFull()) {
            m_guestPaused = true;
            m_guest->setReadEnabled(false);
            return;
        }
        QByteArray bytes;
        const auto result = m_guest->read(bytes, kReadChunk);
        if (result == StreamSocket::ReadResult::WouldBlock)
            return;
        if (result != StreamSocket::ReadResult::Data) {
            onGuestEof();
            return;
        }
        touch();
        handleGuestBytes(bytes);
    }
    // Fairness: let other connections run; the level-triggered notifier brings us back.
}

void GatewayConnection::handleGuestBytes(const QByteArray &bytes)
{
    switch (m_mode) {
    case Mode::Sniff: {
        m_sniff += bytes;
        const TlsSniff sniff = sniffTlsClientHello(m_sniff);
        if (sniff == TlsSniff::NeedMore)
            return;
        if (sniff == TlsSniff::NotTls) {
            emitEvent(baseEvent(EgressLayer::Tcp, false, QStringLiteral("not_tls"),
                                QStringLiteral("the first bytes are not a TLS ClientHello")));
            closeGracefully();
            return;
        }
        startGuestTls(std::exchange(m_sniff, {}));
        return;
    }
    case Mode::TlsHandshake:
        m_guestTls->feed(bytes);
        pumpGuestTls();
        return;
    case Mode::Http:
        if (m_guestTlsMode) {
            m_guestTls->feed(bytes);
            pumpGuestTls();
        } else {
            feedGuard(bytes);
        }
        return;
    case Mode::Closing:
        return;
    }
}

void GatewayConnection::startGuestTls(const QByteArray &clientHello)
{
    auto connection = m_env->tlsServer->newConnection(m_port, m_required);
    if (!connection) {
        emitEvent(baseEvent(EgressLayer::Tls, false, QStringLiteral("handshake_failed"),
                            connection.error().message));
        closeGracefully();
        return;
    }
    m_guestConnection.emplace(std::move(*connection));
    m_guestTls = std::make_unique<TlsMemoryStream>(m_guestConnection->ssl(), true);
    m_guestTlsMode = true;
    m_mode = Mode::TlsHandshake;
    m_guestTls->feed(clientHello);
    pumpGuestTls();
}

void GatewayConnection::flushGuestTls()
{
    const QByteArray out = m_guestTls->takeOutput();
    if (!out.isEmpty())
        m_guest->write(out);
}

void GatewayConnection::pumpGuestTls()
{
    if (m_mode == Mode::TlsHandshake) {
        const auto status = m_guestTls->handshake();
        flushGuestTls();
        if (status == TlsMemoryStream::Status::WantMore)
            return;
        if (status != TlsMemoryStream::Status::Ok) {
            if (m_guestConnection->rejectReason() == TlsRejectReason::None)
                m_guestConnection->reject(TlsRejectReason::HandshakeFailed,
                                          m_guestTls->errorText());
            EgressEvent event = baseEvent(EgressLayer::Tls, false,
                                          tlsRejectReasonName(m_guestConnection->rejectReason()),
                                          m_guestConnection->rejectDetail());
            // The refused name is what the GUI shows ("evil.test denied").
            event.sni = m_guestConnection->requestedName();
            if (!event.sni.isEmpty())
                event.name = event.sni;
            emitEvent(event);
            closeGracefully();
            return;
        }
        onGuestTlsEstablished();
    }
    while (m_mode == Mode::Http && !m_guardStopped && !pipelineFull()) {
        QByteArray plain;
        const auto status = m_guestTls->read(plain, kReadChunk);
        flushGuestTls(); // key updates, alerts
        if (!plain.isEmpty())
            feedGuard(plain);
        if (status == TlsMemoryStream::Status::Ok)
            continue;
        if (status == TlsMemoryStream::Status::Closed) {
            onGuestEof();
        } else if (status == TlsMemoryStream::Status::Failed) {
            abandonInflight(QStringLiteral("guest TLS error: %1").arg(m_guestTls->errorText()));
            finish();
        }
        return;
    }
}

void GatewayConnection::onGuestTlsEstablished()
{
    m_sni = m_guestConnection->serverName();
    HttpConnectionContext context;
    context.tls = true;
    context.sni = m_sni;
    context.port = m_port;
    context.maxHeaderBytes = m_env->limits.maxHeaderBytes;
    m_guard = std::make_unique<HttpRequestGuard>(context, m_policy);
    m_mode = Mode::Http;
}

void GatewayConnection::feedGuard(const QByteArray &plaintext)
{
    if (m_guardStopped || !m_guard)
        return;
    m_guestBacklog += plaintext;
    drainGuestBacklog();
}

bool GatewayConnection::pipelineFull() const
{
    return !m_guestBacklog.isEmpty() || m_inflight.size() >= kMaxPipeline;
}

void GatewayConnection::drainGuestBacklog()
{
    while (!m_guestBacklog.isEmpty() && m_inflight.size() < kMaxPipeline && !m_guardStopped
           && m_guard && m_mode != Mode::Closing) {
        const qsizetype take = qMin(kGuardSlice, m_guestBacklog.size());
        QList<HttpEvent> events = m_guard->feed(QByteArrayView(m_guestBacklog).first(take));
        m_guestBacklog.remove(0, take);
        processGuardEvents(events);
        if (!m_guard && m_mode != Mode::Closing) {
            // A CONNECT tunnel started (onTunnel took the rest of this slice): what follows
            // is the tunnel's TLS, not requests.
            const QByteArray rest = std::exchange(m_guestBacklog, {});
            if (!rest.isEmpty())
                handleGuestBytes(rest);
            return;
        }
    }
    if (m_guardStopped || m_mode == Mode::Closing)
        m_guestBacklog.clear();
}

void GatewayConnection::resumeGuestIfPossible()
{
    if (m_resumeQueued)
        return;
    m_resumeQueued = true;
    QPointer<GatewayConnection> self(this);
    QMetaObject::invokeMethod(
        this,
        [self] {
            if (!self)
                return;
            self->m_resumeQueued = false;
            if (self->m_mode == Mode::Closing || self->m_guardStopped)
                return;
            self->drainGuestBacklog();
            if (self->pipelineFull() || !self->m_guestPaused
                || self->upstreamBacklog() >= kLowWater)
                return;
            self->m_guestPaused = false;
            self->m_guest->setReadEnabled(true);
            // Decrypted records may wait inside TLS already, with nothing new on the socket.
            if (self->m_guestTlsMode && self->m_mode == Mode::Http)
                self->pumpGuestTls();
            if (self && self->m_mode != Mode::Closing)
                self->onGuestReadable();
        },
        Qt::QueuedConnection);
}

void GatewayConnection::processGuardEvents(QList<HttpEvent> &events)
{
    for (HttpEvent &event : events) {
        if (m_guardStopped || m_mode == Mode::Closing)
            return;
        if (auto *forward = std::get_if<HttpForward>(&event)) {
            onForward(*forward);
        } else if (auto *body = std::get_if<HttpBody>(&event)) {
            onBody(*body);
        } else if (std::holds_alternative<HttpRequestEnd>(event)) {
            onRequestEnd();
        } else if (auto *deny = std::get_if<HttpDeny>(&event)) {
            m_guardStopped = true;
            EgressEvent e = baseEvent(EgressLayer::Http, false, deny->reason, deny->detail);
            e.status = deny->status;
            e.method = deny->method;
            e.path = EgressEvent::redactPath(deny->target);
            e.host = deny->host;
            if (e.name.isEmpty())
                e.name = deny->host;
            emitEvent(e);
            if (!m_inflight.isEmpty() && !m_inflight.last().uploadDone) {
                // A body went bad half-way: the upstream must not see the rest; abort it.
                abandonInflight(QStringLiteral("request aborted: %1").arg(deny->reason));
                if (m_upstream)
                    m_upstream->close();
                m_pendingDenial = deny->response;
                sendPendingDenialIfIdle();
                return;
            }
            m_pendingDenial = deny->response;
            sendPendingDenialIfIdle();
        } else if (auto *tunnel = std::get_if<HttpTunnel>(&event)) {
            onTunnel(*tunnel);
        }
    }
}

void GatewayConnection::onForward(HttpForward &forward)
{
    if (!m_expectedName.isEmpty() && forward.authority.host != m_expectedName)
        return denyHttp(421, QStringLiteral("destination_mismatch"),
                        QStringLiteral("the guest dialed the address of %1, the request is for %2")
                            .arg(m_expectedName, forward.authority.host),
                        &forward);
    if (m_pinnedHost
        && (forward.authority.host != *m_pinnedHost || forward.authority.port != m_pinnedPort))
        return denyHttp(421, QStringLiteral("host_mismatch"),
                        QStringLiteral("this connection is for %1 port %2, the request is for %3 "
                                       "port %4")
                            .arg(*m_pinnedHost)
                            .arg(m_pinnedPort)
                            .arg(forward.authority.host)
                            .arg(forward.authority.port),
                        &forward);

    Request request;
    request.method = forward.method;
    request.path = EgressEvent::redactPath(forward.target);
    request.host = forward.authority.host;
    request.port = forward.authority.port;
    request.head = forward.method == u"HEAD";
    request.http10 = forward.version == 10;
    request.uploadDone = false;
    request.framing = forward.framing;

    // Credentials last, after every other check passed (docs/redteam-cases.md principle 7).
    QByteArray head = std::move(forward.head);
    if (m_env->credentials && !m_env->credentials->isEmpty()) {
        request.credentials = m_env->credentials;
        const CredentialInjector &injector = *request.credentials;
        request.credentialRequest = {m_guestTlsMode, forward.authority.port,
                                     m_sni,          forward.authority.host,
                                     forward.method, forward.target};
        const CredentialInjector::Verdict verdict =
            injector.inspect(request.credentialRequest, head);
        const qint64 binding =
            verdict.credential >= 0 ? injector.credentials().at(verdict.credential).binding : 0;
        if (verdict.kind == CredentialInjector::Verdict::Kind::Exfiltration)
            return denyCredential(403, kCredentialExfil, verdict.detail, binding, forward.method,
                                  forward.target, forward.authority.host, false);
        // The response will be scrubbed: no compression, no slices (before the injection, so
        // no copy of the secret is made here).
        if (injector.hasValues())
            head = CredentialInjector::prepareForScrubbing(head);
        if (verdict.kind == CredentialInjector::Verdict::Kind::Inject) {
            for (const int index : verdict.injections) {
                if (injector.hasValue(index))
                    continue;
                const qint64 missing = injector.credentials().at(index).binding;
                wipe(head);
                return denyCredential(
                    503, QStringLiteral("credential_unavailable"),
                    QStringLiteral("binding %1 matches, but airlockd could not hand its secret "
                                   "to the gateway (see the helper's log)")
                        .arg(missing),
                    missing, forward.method, forward.target, forward.authority.host, false);
            }
            for (const int index : verdict.injections) {
                QByteArray injected = injector.inject(head, index);
                wipe(head);
                head = std::move(injected);
            }
            request.binding = binding;
        }
        request.bodyScan = injector.bodyScanner(request.credentialRequest);
    }

    m_pinnedHost = forward.authority.host;
    m_pinnedPort = forward.authority.port;
    if (!m_guestTlsMode)
        m_port = forward.authority.port;
    request.bytesUp = head.size();
    qCDebug(lcHttp, "%s: forwarding %s %s port %u %s%s", qPrintable(m_env->sandbox),
            qPrintable(request.method), qPrintable(request.host), unsigned(request.port),
            qPrintable(request.path),
            request.binding > 0
                ? qPrintable(QStringLiteral(" (injected binding %1)").arg(request.binding))
                : "");
    m_inflight.append(request);
    if (m_inflight.size() == 1 && !m_tracker.active())
        expectResponse(m_inflight.first());
    sendUpstream(head);
    wipe(head);
    if (!m_upstream && !m_resolving)
        openUpstream();
}

void GatewayConnection::onBody(const HttpBody &body)
{
    if (m_inflight.isEmpty())
        return;
    Request &request = m_inflight.last();
    if (!request.bodyScan || request.bodyScan->isEmpty()) {
        request.bytesUp += body.bytes.size();
        sendUpstream(body.bytes);
        return;
    }
    // Only what the scanner released goes up, re-framed by us: a placeholder or value is
    // detected before any byte of its last piece leaves (the guard's chunk framing around the
    // data is replaced by ours; its last chunk is written in onRequestEnd).
    const QByteArray released =
        request.bodyScan->feed(QByteArrayView(body.bytes).sliced(body.dataOffset, body.dataLength));
    if (request.bodyScan->matches() > 0)
        return denyBody(request);
    if (released.isEmpty())
        return;
    const QByteArray framed = request.framing == HttpFraming::Chunked
        ? QByteArray::number(released.size(), 16) + "\r\n" + released + "\r\n"
        : released;
    request.bytesUp += framed.size();
    sendUpstream(framed);
}

void GatewayConnection::onRequestEnd()
{
    if (m_inflight.isEmpty())
        return;
    Request &request = m_inflight.last();
    if (request.bodyScan && !request.bodyScan->isEmpty()) {
        const QByteArray tail = request.bodyScan->finish();
        if (request.bodyScan->matches() > 0)
            return denyBody(request);
        QByteArray framed = tail;
        if (request.framing == HttpFraming::Chunked) {
            framed = tail.isEmpty() ? QByteArray()
                                    : QByteArray::number(tail.size(), 16) + "\r\n" + tail + "\r\n";
            framed += "0\r\n\r\n";
        }
        if (!framed.isEmpty()) {
            request.bytesUp += framed.size();
            sendUpstream(framed);
        }
        request.bodyScan.reset();
    }
    request.uploadDone = true;
}

void GatewayConnection::denyBody(const Request &uploading)
{
    const Request request = uploading; // denyCredential drops it from m_inflight
    const int index = request.credentials->credentialOfForm(request.bodyScan->lastMatch());
    const GatewayCredential *credential =
        index >= 0 ? &request.credentials->credentials().at(index) : nullptr;
    denyCredential(403, kCredentialExfil,
                   QStringLiteral("the request body carries the placeholder or the value of "
                                  "binding %1, which this request may not carry")
                       .arg(credential ? credential->binding : 0),
                   credential ? credential->binding : 0, request.method, request.path, request.host,
                   true);
}

void GatewayConnection::denyCredential(int status, const QString &reason, const QString &detail,
                                       qint64 binding, const QString &method, const QString &target,
                                       const QString &host, bool midBody)
{
    m_guardStopped = true;
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason, detail);
    event.status = status;
    event.host = host;
    event.method = method;
    event.path = EgressEvent::redactPath(target);
    if (event.name.isEmpty())
        event.name = host;
    if (binding > 0)
        event.binding = binding;
    event.alert = reason == kCredentialExfil;
    if (midBody) {
        // The head went up already: the upstream must not see the rest; abort that exchange.
        m_inflight.removeLast();
        abandonInflight(QStringLiteral("request aborted: %1").arg(reason));
        wipe(m_upstreamPending);
        if (m_upstream) {
            m_upstream->disconnect(this);
            m_upstream->close();
        }
    }
    emitEvent(event);
    m_pendingDenial = HttpRequestGuard::denialResponse(status, reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::expectResponse(const Request &request)
{
    HttpResponseTracker::Rewrite rewrite;
    if (request.credentials && request.credentials->hasValues()) {
        rewrite.rules = request.credentials->allScrubRules();
        rewrite.http10 = request.http10;
    }
    m_tracker.expect(request.head, std::move(rewrite));
}

void GatewayConnection::onTunnel(HttpTunnel &tunnel)
{
    if (m_pinnedHost || m_upstream || !m_inflight.isEmpty())
        return denyHttp(400, QStringLiteral("bad_target"),
                        QStringLiteral("CONNECT after other requests on the same connection"));
    // The tunnel carries TLS for exactly this name and port (docs/redteam-cases.md A5).
    m_guard.reset();
    m_port = tunnel.authority.port;
    m_required = TlsRequiredName {tunnel.authority.host, TlsRejectReason::ConnectSniMismatch};
    m_mode = Mode::Sniff;
    m_guest->write(HttpRequestGuard::connectEstablishedResponse());
    if (!tunnel.leftover.isEmpty())
        handleGuestBytes(tunnel.leftover);
}

void GatewayConnection::onGuestEof()
{
    m_guestEof = true;
    if (m_mode == Mode::Sniff || m_mode == Mode::TlsHandshake) {
        if (m_events == 0)
            emitEvent(baseEvent(m_mode == Mode::Sniff ? EgressLayer::Tcp : EgressLayer::Tls, false,
                                QStringLiteral("closed_before_decision"),
                                QStringLiteral("the guest closed the connection before a "
                                               "decision")));
        return finish();
    }
    if (!m_inflight.isEmpty() && !m_inflight.last().uploadDone) {
        abandonInflight(QStringLiteral("the guest closed the connection inside a request"));
        return finish();
    }
    if (m_inflight.isEmpty() && !m_pendingDenial)
        return closeGracefully();
    // Half-close: the answers to the requests in flight still go to the guest.
    m_guest->setReadEnabled(false);
}

void GatewayConnection::sendGuest(QByteArrayView bytes)
{
    if (m_guestTlsMode) {
        if (m_guestTls->write(bytes) != TlsMemoryStream::Status::Ok) {
            abandonInflight(QStringLiteral("guest TLS error: %1").arg(m_guestTls->errorText()));
            return finish();
        }
        flushGuestTls();
    } else {
        m_guest->write(bytes);
    }
    if (m_upstream && !m_upstreamPaused && m_guest->bytesToWrite() > kHighWater) {
        m_upstreamPaused = true;
        m_upstream->setReadEnabled(false);
    }
}

void GatewayConnection::onGuestBytesWritten()
{
    touch();
    if (m_mode == Mode::Closing) {
        if (m_guest->bytesToWrite() == 0 && m_guestEof)
            return finish();
        if (m_linger)
            m_linger->start(); // still draining: the guest is reading
        return;
    }
    if (m_upstreamPaused && m_guest->bytesToWrite() < kLowWater && m_upstream) {
        m_upstreamPaused = false;
        m_upstream->setReadEnabled(true);
        QMetaObject::invokeMethod(this, &GatewayConnection::onUpstreamReadable,
                                  Qt::QueuedConnection);
    }
}

// ---- upstream side -----------------------------------------------------------------------

qsizetype GatewayConnection::upstreamBacklog() const
{
    return m_upstreamPending.size() + (m_upstream ? m_upstream->bytesToWrite() : 0);
}

bool GatewayConnection::upstreamReady() const
{
    return m_upstream && m_upstream->isConnected()
        && (!m_guestTlsMode || (m_upstreamTls && m_upstreamTls->handshakeDone()));
}

void GatewayConnection::sendUpstream(const QByteArray &bytes)
{
    if (!upstreamReady()) {
        m_upstreamPending += bytes;
        return;
    }
    if (m_upstreamTls) {
        m_upstreamTls->write(bytes);
        m_upstream->write(m_upstreamTls->takeOutput());
    } else {
        m_upstream->write(bytes);
    }
}

void GatewayConnection::flushUpstreamPending()
{
    if (!m_upstreamPending.isEmpty()) {
        // It may hold an injected head: wiped once TLS has taken it.
        QByteArray pending = std::exchange(m_upstreamPending, {});
        sendUpstream(pending);
        wipe(pending);
    }
    onUpstreamBytesWritten();
}

void GatewayConnection::onUpstreamBytesWritten()
{
    touch();
    if (m_guestPaused && !m_guardStopped && upstreamBacklog() < kLowWater
        && m_mode != Mode::Closing)
        resumeGuestIfPossible();
}

void GatewayConnection::openUpstream()
{
    m_resolving = true;
    QPointer<GatewayConnection> self(this);
    m_env->resolver->resolve(*m_pinnedHost, [self](const DnsResolution &resolution) {
        if (!self || self->m_mode == Mode::Closing)
            return;
        self->m_resolving = false;
        if (!resolution) {
            const bool refused = resolution.error().reason == DnsReason::PrivateDestination;
            self->failUpstream(refused ? 403 : 502,
                               refused ? QStringLiteral("private_destination")
                                       : QStringLiteral("upstream_unreachable"),
                               resolution.error().detail);
            return;
        }
        self->onResolved(*resolution);
    });
}

void GatewayConnection::onResolved(const QList<QHostAddress> &addresses)
{
    // The resolver refuses answers into refused ranges already; checked again at the dial.
    m_candidates.clear();
    for (const QHostAddress &address : addresses) {
        if (!m_env->refused.contains(address))
            m_candidates.append(address);
    }
    if (m_candidates.isEmpty())
        return failUpstream(
            403, QStringLiteral("private_destination"),
            QStringLiteral("every address of %1 is in a refused range").arg(*m_pinnedHost));
    m_candidateIndex = 0;
    connectNextCandidate();
}

void GatewayConnection::connectNextCandidate()
{
    if (m_upstream) {
        m_upstream->disconnect(this);
        m_upstream->deleteLater();
        m_upstream = nullptr;
        ++m_upstreamGeneration;
    }
    if (m_candidateIndex >= m_candidates.size())
        return failUpstream(502, QStringLiteral("upstream_unreachable"),
                            QStringLiteral("cannot connect to %1 port %2: %3")
                                .arg(*m_pinnedHost)
                                .arg(m_pinnedPort)
                                .arg(m_lastUpstreamError));
    const QHostAddress address = m_candidates.at(m_candidateIndex++);
    QString error;
    m_upstream = StreamSocket::connectTo(address, m_pinnedPort, this, &error);
    if (!m_upstream) {
        m_lastUpstreamError = error;
        QMetaObject::invokeMethod(this, &GatewayConnection::connectNextCandidate,
                                  Qt::QueuedConnection);
        return;
    }
    connect(m_upstream, &StreamSocket::connected, this, &GatewayConnection::onUpstreamConnected);
    connect(m_upstream, &StreamSocket::readyRead, this, &GatewayConnection::onUpstreamReadable);
    connect(m_upstream, &StreamSocket::bytesWritten, this,
            &GatewayConnection::onUpstreamBytesWritten);
    // Queued (the error may surface inside a write); a stale error of a socket already given
    // up for the next candidate must not touch its successor.
    const quint64 generation = ++m_upstreamGeneration;
    connect(
        m_upstream, &StreamSocket::errorOccurred, this,
        [this, generation] {
            if (generation == m_upstreamGeneration)
                onUpstreamError();
        },
        Qt::QueuedConnection);
    if (!m_connectTimer) {
        m_connectTimer = new QTimer(this);
        m_connectTimer->setSingleShot(true);
        connect(m_connectTimer, &QTimer::timeout, this, [this] {
            m_lastUpstreamError = QStringLiteral("connect timed out");
            connectNextCandidate();
        });
    }
    m_connectTimer->start(qMin(kConnectTimeoutMs, m_env->limits.idleTimeoutMs));
}

void GatewayConnection::onUpstreamConnected()
{
    m_connectTimer->stop();
    touch();
    if (!m_guestTlsMode) {
        flushUpstreamPending();
        return;
    }
    auto ssl = m_env->tlsUpstream->newConnection(*m_pinnedHost);
    if (!ssl)
        return failUpstream(502, QStringLiteral("upstream_tls_failed"), ssl.error().message);
    m_upstreamSsl = std::move(*ssl);
    m_upstreamTls = std::make_unique<TlsMemoryStream>(m_upstreamSsl.get(), false);
    pumpUpstreamTls();
}

void GatewayConnection::onUpstreamError()
{
    if (!m_upstream || m_mode == Mode::Closing)
        return;
    m_lastUpstreamError = m_upstream->errorString();
    if (!m_upstream->isConnected()) {
        connectNextCandidate();
        return;
    }
    if (!m_inflight.isEmpty() && m_inflight.first().status == 0)
        return failUpstream(
            502, QStringLiteral("upstream_unreachable"),
            QStringLiteral("the upstream connection failed: %1").arg(m_lastUpstreamError));
    abandonInflight(QStringLiteral("the upstream connection failed: %1").arg(m_lastUpstreamError));
    closeGracefully();
}

void GatewayConnection::onUpstreamReadable()
{
    for (int round = 0; round < 16 && m_upstream && m_mode != Mode::Closing; ++round) {
        if (m_upstreamPaused)
            return;
        QByteArray bytes;
        const auto result = m_upstream->read(bytes, kReadChunk);
        if (result == StreamSocket::ReadResult::WouldBlock)
            return;
        if (result == StreamSocket::ReadResult::Error) {
            onUpstreamError();
            return;
        }
        if (result == StreamSocket::ReadResult::Eof) {
            onUpstreamEof();
            return;
        }
        touch();
        if (m_upstreamTls) {
            m_upstreamTls->feed(bytes);
            pumpUpstreamTls();
        } else {
            handleUpstreamPlaintext(bytes);
        }
    }
}

void GatewayConnection::pumpUpstreamTls()
{
    if (!m_upstreamTls->handshakeDone()) {
        const auto status = m_upstreamTls->handshake();
        const QByteArray out = m_upstreamTls->takeOutput();
        if (!out.isEmpty())
            m_upstream->write(out);
        if (status == TlsMemoryStream::Status::WantMore)
            return;
        if (status != TlsMemoryStream::Status::Ok) {
            const QString verify = upstreamVerifyResult(m_upstreamSsl.get());
            return failUpstream(502, QStringLiteral("upstream_tls_failed"),
                                verify != u"ok" ? verify : m_upstreamTls->errorText());
        }
        flushUpstreamPending();
    }
    while (m_upstreamTls && m_mode != Mode::Closing) {
        QByteArray plain;
        const auto status = m_upstreamTls->read(plain, 4 * kReadChunk);
        const QByteArray out = m_upstreamTls->takeOutput();
        if (!out.isEmpty() && m_upstream)
            m_upstream->write(out);
        if (!plain.isEmpty())
            handleUpstreamPlaintext(plain);
        if (status == TlsMemoryStream::Status::Ok)
            continue;
        if (status == TlsMemoryStream::Status::Closed)
            onUpstreamEof();
        else if (status == TlsMemoryStream::Status::Failed)
            onUpstreamError();
        return;
    }
}

void GatewayConnection::handleUpstreamPlaintext(QByteArrayView bytes)
{
    while (!bytes.isEmpty() && m_mode != Mode::Closing) {
        if (!m_tracker.active() || m_inflight.isEmpty()) {
            abandonInflight(QStringLiteral("the upstream sent bytes no request asked for"));
            return closeGracefully();
        }
        const bool rewriting = m_tracker.rewriting();
        const HttpResponseTracker::Progress progress = m_tracker.feed(bytes);
        Request &front = m_inflight.first();
        front.scrubbed += progress.replacements;
        if (rewriting && !progress.output.isEmpty()) {
            front.bytesDown += progress.output.size();
            sendGuest(progress.output);
            if (m_mode == Mode::Closing)
                return;
        } else if (!rewriting && progress.consumed > 0) {
            front.bytesDown += progress.consumed;
            sendGuest(bytes.first(progress.consumed));
            if (m_mode == Mode::Closing)
                return;
        }
        if (progress.status != 0 && (!progress.interim || front.status == 0))
            front.status = progress.status;
        if (progress.refused)
            return refuseUnscrubbable(progress.errorText);
        if (progress.error) {
            abandonInflight(QStringLiteral("the upstream's response does not parse: %1")
                                .arg(progress.errorText));
            return closeGracefully();
        }
        bytes = bytes.sliced(progress.consumed);
        if (progress.finished) {
            completeFront();
            if (!progress.keepAlive) {
                abandonInflight(QStringLiteral("the upstream closed the connection"));
                if (m_pendingDenial)
                    return sendPendingDenialIfIdle();
                return closeGracefully();
            }
            if (!m_inflight.isEmpty())
                expectResponse(m_inflight.first());
        } else if (progress.consumed == 0) {
            break;
        }
    }
    if (m_inflight.isEmpty()) {
        if (m_pendingDenial)
            sendPendingDenialIfIdle();
        else if (m_guestEof)
            closeGracefully();
    }
}

void GatewayConnection::onUpstreamEof()
{
    if (m_mode == Mode::Closing)
        return;
    QByteArray tail;
    if (!m_inflight.isEmpty() && m_tracker.finishOnEof(&tail)) {
        if (!tail.isEmpty()) {
            m_inflight.first().bytesDown += tail.size();
            sendGuest(tail);
            if (m_mode == Mode::Closing)
                return;
        }
        completeFront();
    }
    abandonInflight(QStringLiteral("the upstream closed the connection before the response ended"));
    if (m_pendingDenial)
        return sendPendingDenialIfIdle();
    closeGracefully();
}

// ---- decisions and endings ---------------------------------------------------------------

void GatewayConnection::denyHttp(int status, const QString &reason, const QString &detail,
                                 const HttpForward *forward)
{
    m_guardStopped = true;
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason, detail);
    event.status = status;
    if (forward) {
        event.host = forward->authority.host;
        event.method = forward->method;
        event.path = EgressEvent::redactPath(forward->target);
    }
    emitEvent(event);
    m_pendingDenial = HttpRequestGuard::denialResponse(status, reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::failUpstream(int status, const QString &reason, const QString &detail)
{
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason, detail);
    event.status = status;
    if (!m_inflight.isEmpty()) {
        const Request &front = m_inflight.first();
        event.method = front.method;
        event.path = front.path;
        event.host = front.host;
        event.port = front.port;
    }
    emitEvent(event);
    m_inflight.clear();
    wipe(m_upstreamPending);
    if (m_upstream) {
        m_upstream->disconnect(this);
        m_upstream->close();
    }
    if (m_connectTimer)
        m_connectTimer->stop();
    m_guardStopped = true;
    m_pendingDenial = HttpRequestGuard::denialResponse(status, reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::refuseUnscrubbable(const QString &why)
{
    // Nothing of this response reached the guest: it gets a 502 instead, and the upstream
    // connection (in the middle of a body) goes.
    const Request front = m_inflight.takeFirst();
    EgressEvent event = baseEvent(EgressLayer::Http, false, kUnscrubbable,
                                  QStringLiteral("%1; the response was not forwarded").arg(why));
    event.status = 502;
    event.host = front.host;
    event.port = front.port;
    event.method = front.method;
    event.path = front.path;
    event.bytesUp = front.bytesUp;
    if (front.binding > 0)
        event.binding = front.binding;
    event.alert = true;
    emitEvent(event);
    abandonInflight(
        QStringLiteral("not sent: an earlier response was refused (%1)").arg(kUnscrubbable));
    wipe(m_upstreamPending);
    if (m_upstream) {
        m_upstream->disconnect(this);
        m_upstream->close();
    }
    m_guardStopped = true;
    m_pendingDenial = HttpRequestGuard::denialResponse(502, kUnscrubbable);
    sendPendingDenialIfIdle();
}

void GatewayConnection::sendPendingDenialIfIdle()
{
    if (!m_pendingDenial || !m_inflight.isEmpty() || m_mode == Mode::Closing)
        return;
    sendGuest(*std::exchange(m_pendingDenial, std::nullopt));
    closeGracefully();
}

void GatewayConnection::completeFront()
{
    if (m_inflight.isEmpty())
        return;
    const Request request = m_inflight.takeFirst();
    if (m_guestPaused && m_inflight.size() < kMaxPipeline)
        resumeGuestIfPossible();
    EgressEvent event =
        baseEvent(EgressLayer::Http, true, kAllowed,
                  QStringLiteral("forwarded to %1 port %2").arg(request.host).arg(request.port));
    event.host = request.host;
    event.port = request.port;
    event.method = request.method;
    event.path = request.path;
    if (request.status != 0)
        event.status = request.status;
    event.bytesUp = request.bytesUp;
    event.bytesDown = request.bytesDown;
    if (request.binding > 0)
        event.detail += QStringLiteral("; injected binding %1").arg(request.binding);
    addCredentialFields(event, request.binding, request.scrubbed);
    emitEvent(event);
}

void GatewayConnection::abandonInflight(const QString &detail)
{
    // Requests that were allowed and forwarded but got no complete answer still get their
    // event (with what was counted), so the history shows them.
    while (!m_inflight.isEmpty()) {
        const Request request = m_inflight.takeFirst();
        EgressEvent event = baseEvent(EgressLayer::Http, true, kAllowed, detail);
        event.host = request.host;
        event.port = request.port;
        event.method = request.method;
        event.path = request.path;
        if (request.status != 0)
            event.status = request.status;
        event.bytesUp = request.bytesUp;
        event.bytesDown = request.bytesDown;
        addCredentialFields(event, request.binding, request.scrubbed);
        emitEvent(event);
    }
}

void GatewayConnection::closeGracefully()
{
    if (m_mode == Mode::Closing || m_finished)
        return;
    if (m_events == 0 && m_guestTls && m_guestTls->handshakeDone())
        emitEvent(baseEvent(EgressLayer::Tls, true, kAllowed,
                            QStringLiteral("TLS accepted; the connection ended without a "
                                           "request")));
    m_mode = Mode::Closing;
    m_idle->stop();
    if (m_connectTimer)
        m_connectTimer->stop();
    if (m_upstream) {
        m_upstream->disconnect(this);
        m_upstream->close();
    }
    if (m_guestTls && m_guestTls->handshakeDone()) {
        m_guestTls->shutdown();
        flushGuestTls();
    }
    m_guest->shutdownWriteWhenFlushed();
    if (m_guestEof && m_guest->bytesToWrite() == 0)
        return finish();
    m_linger = new QTimer(this);
    m_linger->setSingleShot(true);
    connect(m_linger, &QTimer::timeout, this, &GatewayConnection::finish);
    m_linger->start(kLingerMs);
    m_guest->setReadEnabled(true);
}

void GatewayConnection::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_events == 0)
        emitEvent(baseEvent(EgressLayer::Tcp, false, QStringLiteral("closed_before_decision"),
                            QStringLiteral("the connection ended before a decision")));
    m_mode = Mode::Closing;
    m_idle->stop();
    if (m_linger)
        m_linger->stop();
    if (m_connectTimer)
        m_connectTimer->stop();
    if (m_upstream) {
        m_upstream->disconnect(this);
        m_upstream->close();
    }
    m_guest->disconnect(this);
    m_guest->close();
    Q_EMIT finished();
}

} // namespace airlock::gateway
