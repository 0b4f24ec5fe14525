#include "core/gateway/gatewayconnection.h"

#include "core/gateway/credentials/wipe.h"
#include "core/gateway/dns/dnsnamemapping.h"
#include "core/gateway/readbuffer.h"
#include "core/gateway/streamsocket.h"
#include "core/gateway/upstreamleg.h"

#include <QPointer>
#include <QTimer>

namespace airlock::gateway {

GatewayConnection::GatewayConnection(const GatewayEnvironment *environment,
                                     policy::PolicyMatcher policy, int fd,
                                     const OriginalDestination &destination, QObject *parent)
    : QObject(parent)
    , m_env(environment)
    , m_policy(std::move(policy))
    , m_destination(destination)
    , m_destinationText(destination.address.toString())
    , m_ledger(
          environment->sandbox,
          [this](EgressLayer layer, bool allowed, EgressReason reason, const QString &detail) {
              return baseEvent(layer, allowed, reason, detail);
          },
          [environment](const EgressEvent &event) {
              if (environment->emitEvent)
                  environment->emitEvent(event);
          })
    , m_port(destination.port)
{
    m_guest = new StreamSocket(fd, this);
    m_upstream = new UpstreamLeg(m_env, this);
    if (const auto name = m_env->mapping->nameFor(destination.address))
        m_expectedName = *name;
    m_idle = new QTimer(this);
    m_idle->setSingleShot(true);
    m_idle->setInterval(m_env->limits.idleTimeoutMs);
    connect(m_idle, &QTimer::timeout, this, [this] {
        if (m_mode == Mode::Closing)
            return finish();
        // touch() only notes the time; the timer, armed once per idle period, checks it.
        const auto quiet = std::chrono::steady_clock::now() - m_lastActivity;
        const std::chrono::milliseconds limit(m_env->limits.idleTimeoutMs);
        if (quiet < limit) {
            const auto rest = std::chrono::ceil<std::chrono::milliseconds>(limit - quiet);
            m_idle->start(int(rest.count()));
            return;
        }
        m_ledger.abandon(QStringLiteral("idle timeout"));
        if (m_ledger.events() == 0)
            m_ledger.record(baseEvent(EgressLayer::Tcp, false, EgressReason::IdleTimeout,
                                      QStringLiteral("no traffic for %1 ms before any decision")
                                          .arg(m_env->limits.idleTimeoutMs)));
        closeGracefully();
    });
    connect(m_guest, &StreamSocket::readyRead, this, &GatewayConnection::onGuestReadable);
    connect(m_guest, &StreamSocket::bytesWritten, this, &GatewayConnection::onGuestBytesWritten);
    connect(
        m_guest, &StreamSocket::errorOccurred, this,
        [this] {
            m_ledger.abandon(
                QStringLiteral("guest connection error: %1").arg(m_guest->errorString()));
            finish();
        },
        Qt::QueuedConnection);
    connect(m_upstream, &UpstreamLeg::activity, this, &GatewayConnection::touch);
    connect(m_upstream, &UpstreamLeg::received, this, &GatewayConnection::onUpstreamPlaintext);
    connect(m_upstream, &UpstreamLeg::drained, this, &GatewayConnection::onUpstreamDrained);
    connect(m_upstream, &UpstreamLeg::ended, this, &GatewayConnection::onUpstreamEof);
    connect(m_upstream, &UpstreamLeg::broken, this, &GatewayConnection::onUpstreamBroken);
    connect(m_upstream, &UpstreamLeg::failed, this, &GatewayConnection::failUpstream);
}

GatewayConnection::~GatewayConnection()
{
    // The guest SSL is referenced by its stream; free the stream first.
    m_guestTls.reset();
}

void GatewayConnection::start()
{
    touch();
    m_idle->start();
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
            m_required = TlsRequiredName {m_expectedName, EgressReason::DestinationMismatch};
    }
    onGuestReadable();
}

std::optional<std::pair<QString, quint16>> GatewayConnection::admittedFor() const
{
    if (m_guestTlsMode && m_mode == Mode::Http && !m_sni.isEmpty())
        return std::pair {m_sni, m_port};
    if (!m_guestTlsMode && m_pinnedHost)
        return std::pair {*m_pinnedHost, m_pinnedPort};
    return std::nullopt;
}

void GatewayConnection::applyPolicy(const policy::PolicyMatcher &policy)
{
    m_policy = policy;
    if (m_guard)
        m_guard->setMatcher(policy);
    if (m_mode == Mode::Closing)
        return;
    const auto admitted = admittedFor();
    if (!admitted)
        return;
    const policy::Verdict verdict = policy.checkConnection(admitted->first, admitted->second);
    if (verdict.allowed())
        return;
    m_ledger.record(baseEvent(m_guestTlsMode ? EgressLayer::Tls : EgressLayer::Http, false,
                              EgressReason::PolicyRevoked,
                              QStringLiteral("the policy no longer allows %1 port %2 (%3)")
                                  .arg(admitted->first)
                                  .arg(admitted->second)
                                  .arg(wireName(verdict.reason))));
    m_guardStopped = true;
    m_guestBacklog.clear();
    const bool answerable = !m_ledger.isEmpty() && m_ledger.front().bytesDown == 0;
    m_ledger.abandon(QStringLiteral("the policy changed"));
    // What the upstream sends from now on is dropped with its leg; a guest still waiting for a
    // response learns why instead of seeing its connection vanish.
    if (answerable)
        sendGuest(HttpRequestGuard::denialResponse(403, EgressReason::PolicyRevoked));
    closeGracefully();
}

EgressEvent GatewayConnection::baseEvent(EgressLayer layer, bool allowed, EgressReason reason,
                                         const QString &detail) const
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.sandbox = m_env->sandbox;
    event.layer = layer;
    event.allowed = allowed;
    event.reason = wireName(reason);
    event.detail = detail;
    event.sni = m_sni;
    event.name = !m_sni.isEmpty()    ? m_sni
        : m_pinnedHost               ? *m_pinnedHost
        : !m_required.name.isEmpty() ? m_required.name
                                     : m_expectedName;
    event.port = m_port;
    event.destination = m_destinationText;
    return event;
}

void GatewayConnection::touch()
{
    // Restarting a QTimer on every read was 12.8% of the gateway's time (issue 16): the time is
    // noted here, and the idle timer, when it fires, re-arms itself for what is left.
    m_lastActivity = std::chrono::steady_clock::now();
}

// ---- guest side --------------------------------------------------------------------------

void GatewayConnection::onGuestReadable()
{
    const ReadBufferLease buffer;
    for (int round = 0; round < 16; ++round) {
        qsizetype got = 0;
        if (m_mode == Mode::Closing) {
            // Lingering close: discard what the guest still sends until its FIN, so our last
            // bytes are not destroyed by a reset (RFC 9112 §9.6).
            const auto result = m_guest->read(buffer.data(), buffer.size(), &got);
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
        if (pauseGuestIfFull())
            return;
        const auto result = m_guest->read(buffer.data(), buffer.size(), &got);
        if (result == StreamSocket::ReadResult::WouldBlock)
            return;
        if (result != StreamSocket::ReadResult::Data) {
            onGuestEof();
            return;
        }
        touch();
        handleGuestBytes(QByteArrayView(buffer.data(), got));
        // A short read emptied the socket: the level-triggered notifier brings us back when
        // more arrives, without a recv that would only say EAGAIN. What it delivered may have
        // filled the pipeline with the rest waiting inside TLS, and only a paused guest is
        // resumed when a response completes: the check comes before the return.
        if (got < buffer.size()) {
            if (m_mode != Mode::Closing)
                pauseGuestIfFull();
            return;
        }
    }
    // Fairness: let other connections run; the level-triggered notifier brings us back.
}

bool GatewayConnection::pauseGuestIfFull()
{
    if (!m_guardStopped && m_upstream->backlog() <= kHighWater && !pipelineFull())
        return false;
    m_guestPaused = true;
    m_guest->setReadEnabled(false);
    return true;
}

void GatewayConnection::handleGuestBytes(QByteArrayView bytes)
{
    switch (m_mode) {
    case Mode::Sniff: {
        m_sniff += bytes;
        const TlsSniff sniff = sniffTlsClientHello(m_sniff);
        if (sniff == TlsSniff::NeedMore)
            return;
        if (sniff == TlsSniff::NotTls) {
            m_ledger.record(baseEvent(EgressLayer::Tcp, false, EgressReason::NotTls,
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
        m_ledger.record(baseEvent(EgressLayer::Tls, false, EgressReason::HandshakeFailed,
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
            if (m_guestConnection->rejectReason() == EgressReason::Allowed)
                m_guestConnection->reject(EgressReason::HandshakeFailed, m_guestTls->errorText());
            EgressEvent event =
                baseEvent(EgressLayer::Tls, false, m_guestConnection->rejectReason(),
                          m_guestConnection->rejectDetail());
            // The refused name is what the GUI shows ("evil.test denied").
            event.sni = m_guestConnection->requestedName();
            if (!event.sni.isEmpty())
                event.name = event.sni;
            m_ledger.record(event);
            closeGracefully();
            return;
        }
        onGuestTlsEstablished();
    }
    const ReadBufferLease buffer;
    while (m_mode == Mode::Http && !m_guardStopped && !pipelineFull()) {
        qsizetype got = 0;
        const auto status = m_guestTls->read(buffer.data(), buffer.size(), &got);
        flushGuestTls(); // key updates, alerts
        if (got > 0)
            feedGuard(QByteArrayView(buffer.data(), got));
        if (status == TlsMemoryStream::Status::Ok)
            continue;
        if (status == TlsMemoryStream::Status::Closed) {
            onGuestEof();
        } else if (status == TlsMemoryStream::Status::Failed) {
            m_ledger.abandon(QStringLiteral("guest TLS error: %1").arg(m_guestTls->errorText()));
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

void GatewayConnection::feedGuard(QByteArrayView plaintext)
{
    if (m_guardStopped || !m_guard)
        return;
    m_guestBacklog += plaintext;
    drainGuestBacklog();
}

bool GatewayConnection::pipelineFull() const
{
    return !m_guestBacklog.isEmpty() || m_ledger.full();
}

void GatewayConnection::drainGuestBacklog()
{
    while (!m_guestBacklog.isEmpty() && !m_ledger.full() && !m_guardStopped && m_guard
           && m_mode != Mode::Closing) {
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
                || self->m_upstream->backlog() >= kLowWater)
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
            noteCarriedPlaceholder(e, deny->head, deny->method, deny->target, deny->host);
            wipe(deny->head);
            m_ledger.record(e);
            if (m_ledger.uploading()) {
                // A body went bad half-way: the upstream must not see the rest; abort it.
                m_ledger.abandon(QStringLiteral("request aborted: %1").arg(wireName(deny->reason)));
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
        return denyHttp(EgressReason::DestinationMismatch,
                        QStringLiteral("the guest dialed the address of %1, the request is for %2")
                            .arg(m_expectedName, forward.authority.host),
                        &forward);
    if (m_pinnedHost
        && (forward.authority.host != *m_pinnedHost || forward.authority.port != m_pinnedPort))
        return denyHttp(EgressReason::HostMismatch,
                        QStringLiteral("this connection is for %1 port %2, the request is for %3 "
                                       "port %4")
                            .arg(*m_pinnedHost)
                            .arg(m_pinnedPort)
                            .arg(forward.authority.host)
                            .arg(forward.authority.port),
                        &forward);

    Request request = RequestLedger::requestFor(forward);
    // Credentials last, after every other check passed (docs/redteam-cases.md principle 7).
    QByteArray head = std::move(forward.head);
    if (const auto refusal = RequestLedger::decideCredentials(request, head, m_env->credentials,
                                                              m_guestTlsMode, m_sni, forward))
        return denyCredential(*refusal, forward.method, forward.target, forward.authority.host,
                              false);

    m_pinnedHost = forward.authority.host;
    m_pinnedPort = forward.authority.port;
    if (!m_guestTlsMode)
        m_port = forward.authority.port;
    request.bytesUp = head.size();
    m_ledger.append(std::move(request));
    m_upstream->send(head);
    wipe(head);
    if (!m_upstream->started())
        m_upstream->open(*m_pinnedHost, m_pinnedPort, m_guestTlsMode);
}

void GatewayConnection::onBody(const HttpBody &body)
{
    const std::optional<QByteArray> upload = m_ledger.uploadBody(body);
    if (!upload)
        return denyBody();
    if (!upload->isEmpty())
        m_upstream->send(*upload);
}

void GatewayConnection::onRequestEnd()
{
    const bool last = !m_ledger.isEmpty() && m_ledger.back().lastRequest;
    const std::optional<QByteArray> tail = m_ledger.endUpload();
    if (!tail)
        return denyBody();
    if (!tail->isEmpty())
        m_upstream->send(*tail);
    // RFC 9112 §9.6: a server must not process requests after one with the close option.
    if (last) {
        m_guardStopped = true;
        m_guestBacklog.clear();
    }
}

void GatewayConnection::denyBody()
{
    const Request request = m_ledger.back(); // denyCredential drops it from the ledger
    denyCredential(m_ledger.bodyRefusal(), request.method, request.path, request.host, true);
}

void GatewayConnection::denyCredential(const RequestLedger::CredentialRefusal &refusal,
                                       const QString &method, const QString &target,
                                       const QString &host, bool midBody)
{
    m_guardStopped = true;
    const int status = denialStatus(refusal.reason);
    EgressEvent event = baseEvent(EgressLayer::Http, false, refusal.reason, refusal.detail);
    event.status = status;
    event.host = host;
    event.method = method;
    event.path = EgressEvent::redactPath(target);
    if (event.name.isEmpty())
        event.name = host;
    if (refusal.binding > 0)
        event.binding = refusal.binding;
    event.alert = refusal.reason == EgressReason::CredentialExfil;
    if (midBody) {
        // The head went up already: the upstream must not see the rest; abort that exchange.
        m_ledger.dropBack();
        m_ledger.abandon(QStringLiteral("request aborted: %1").arg(wireName(refusal.reason)));
        m_upstream->close();
    }
    m_ledger.record(event);
    m_pendingDenial = HttpRequestGuard::denialResponse(status, refusal.reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::onTunnel(HttpTunnel &tunnel)
{
    if (m_pinnedHost || m_upstream->started() || !m_ledger.isEmpty())
        return denyHttp(EgressReason::BadTarget,
                        QStringLiteral("CONNECT after other requests on the same connection"));
    // The tunnel carries TLS for exactly this name and port (docs/redteam-cases.md A5).
    m_guard.reset();
    m_port = tunnel.authority.port;
    m_required = TlsRequiredName {tunnel.authority.host, EgressReason::ConnectSniMismatch};
    m_mode = Mode::Sniff;
    m_guest->write(HttpRequestGuard::connectEstablishedResponse());
    if (!tunnel.leftover.isEmpty())
        handleGuestBytes(tunnel.leftover);
}

void GatewayConnection::onGuestEof()
{
    m_guestEof = true;
    if (m_mode == Mode::Sniff || m_mode == Mode::TlsHandshake) {
        if (m_ledger.events() == 0)
            m_ledger.record(baseEvent(m_mode == Mode::Sniff ? EgressLayer::Tcp : EgressLayer::Tls,
                                      false, EgressReason::ClosedBeforeDecision,
                                      QStringLiteral("the guest closed the connection before a "
                                                     "decision")));
        return finish();
    }
    if (m_ledger.uploading()) {
        m_ledger.abandon(QStringLiteral("the guest closed the connection inside a request"));
        return finish();
    }
    if (m_ledger.isEmpty() && !m_pendingDenial)
        return closeGracefully();
    // Half-close: the answers to the requests in flight still go to the guest.
    m_guest->setReadEnabled(false);
}

void GatewayConnection::sendGuest(QByteArrayView bytes)
{
    if (m_guestTlsMode) {
        if (m_guestTls->write(bytes) != TlsMemoryStream::Status::Ok) {
            m_ledger.abandon(QStringLiteral("guest TLS error: %1").arg(m_guestTls->errorText()));
            return finish();
        }
        flushGuestTls();
    } else {
        m_guest->write(bytes);
    }
    if (!m_upstream->readingPaused() && m_guest->bytesToWrite() > kHighWater)
        m_upstream->pauseReading();
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
    if (m_upstream->readingPaused() && m_guest->bytesToWrite() < kLowWater)
        m_upstream->resumeReading();
}

// ---- upstream side -----------------------------------------------------------------------

void GatewayConnection::onUpstreamDrained()
{
    touch();
    if (m_guestPaused && !m_guardStopped && m_upstream->backlog() < kLowWater
        && m_mode != Mode::Closing)
        resumeGuestIfPossible();
}

void GatewayConnection::onUpstreamBroken(const QString &error)
{
    if (!m_ledger.isEmpty() && m_ledger.front().status == 0)
        return failUpstream(EgressReason::UpstreamUnreachable,
                            QStringLiteral("the upstream connection failed: %1").arg(error));
    m_ledger.abandon(QStringLiteral("the upstream connection failed: %1").arg(error));
    closeGracefully();
}

void GatewayConnection::onUpstreamPlaintext(QByteArrayView bytes)
{
    while (!bytes.isEmpty() && m_mode != Mode::Closing) {
        if (!m_ledger.awaitingResponse()) {
            m_ledger.abandon(QStringLiteral("the upstream sent bytes no request asked for"));
            return closeGracefully();
        }
        const RequestLedger::ResponsePiece piece = m_ledger.feedResponse(bytes);
        const HttpResponseTracker::Progress &progress = piece.progress;
        if (const QByteArrayView forward = piece.forward(bytes); !forward.isEmpty()) {
            sendGuest(forward);
            if (m_mode == Mode::Closing)
                return;
        }
        m_ledger.noteStatus(progress);
        if (progress.refused)
            return refuseUnscrubbable(progress.errorText);
        if (progress.error) {
            m_ledger.abandon(QStringLiteral("the upstream's response does not parse: %1")
                                 .arg(progress.errorText));
            return closeGracefully();
        }
        bytes = bytes.sliced(progress.consumed);
        if (progress.finished) {
            const bool guestClose = m_ledger.front().lastRequest;
            completeFront();
            // RFC 9112 §9.6: the guest's close is honoured after the response to its request,
            // whatever the upstream would do.
            if (!progress.keepAlive || guestClose) {
                m_ledger.abandon(guestClose
                                     ? QStringLiteral("the guest asked to close the connection")
                                     : QStringLiteral("the upstream closed the connection"));
                if (m_pendingDenial)
                    return sendPendingDenialIfIdle();
                return closeGracefully();
            }
            m_ledger.expectNext();
        } else if (progress.consumed == 0) {
            break;
        }
    }
    if (m_ledger.isEmpty()) {
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
    if (const std::optional<QByteArray> tail = m_ledger.finishOnEof()) {
        if (!tail->isEmpty()) {
            sendGuest(*tail);
            if (m_mode == Mode::Closing)
                return;
        }
        completeFront();
    }
    m_ledger.abandon(
        QStringLiteral("the upstream closed the connection before the response ended"));
    if (m_pendingDenial)
        return sendPendingDenialIfIdle();
    closeGracefully();
}

// ---- decisions and endings ---------------------------------------------------------------

void GatewayConnection::noteCarriedPlaceholder(EgressEvent &event, QByteArrayView head,
                                               const QString &method, const QString &target,
                                               const QString &host) const
{
    const std::shared_ptr<const CredentialInjector> &injector = m_env->credentials;
    if (!injector || injector->isEmpty() || head.isEmpty())
        return;
    // A placeholder where its binding does not allow it is exfiltration whatever else is wrong
    // with the request (docs/credentials.md): counted against the binding, and an alert.
    const CredentialInjector::Request request {m_guestTlsMode, quint16(m_port), m_sni,
                                               host.toLower(), method,          target};
    const CredentialInjector::Verdict verdict = injector->inspect(request, head);
    if (verdict.kind != CredentialInjector::Verdict::Kind::Exfiltration || verdict.credential < 0)
        return;
    event.binding = injector->credentials().at(verdict.credential).binding;
    event.alert = true;
    event.detail += QStringLiteral("; it also carried a credential: %1").arg(verdict.detail);
}

void GatewayConnection::denyHttp(EgressReason reason, const QString &detail,
                                 const HttpForward *forward)
{
    m_guardStopped = true;
    const int status = denialStatus(reason);
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason, detail);
    event.status = status;
    if (forward) {
        event.host = forward->authority.host;
        event.method = forward->method;
        event.path = EgressEvent::redactPath(forward->target);
        noteCarriedPlaceholder(event, forward->head, forward->method, forward->target,
                               forward->authority.host);
    }
    m_ledger.record(event);
    m_pendingDenial = HttpRequestGuard::denialResponse(status, reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::failUpstream(EgressReason reason, const QString &detail)
{
    const int status = denialStatus(reason);
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason, detail);
    event.status = status;
    if (!m_ledger.isEmpty())
        RequestLedger::describe(event, m_ledger.front());
    m_ledger.record(event);
    m_ledger.clear();
    m_upstream->close();
    m_guardStopped = true;
    m_pendingDenial = HttpRequestGuard::denialResponse(status, reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::refuseUnscrubbable(const QString &why)
{
    // Nothing of this response reached the guest: it gets a 502 instead, and the upstream
    // connection (in the middle of a body) goes.
    const EgressReason reason = EgressReason::UnscrubbableResponse;
    const Request front = m_ledger.takeFront();
    EgressEvent event = baseEvent(EgressLayer::Http, false, reason,
                                  QStringLiteral("%1; the response was not forwarded").arg(why));
    event.status = denialStatus(reason);
    RequestLedger::describe(event, front);
    event.bytesUp = front.bytesUp;
    if (front.binding > 0)
        event.binding = front.binding;
    event.alert = true;
    m_ledger.record(event);
    m_ledger.abandon(
        QStringLiteral("not sent: an earlier response was refused (%1)").arg(wireName(reason)));
    m_upstream->close();
    m_guardStopped = true;
    m_pendingDenial = HttpRequestGuard::denialResponse(denialStatus(reason), reason);
    sendPendingDenialIfIdle();
}

void GatewayConnection::sendPendingDenialIfIdle()
{
    if (!m_pendingDenial || !m_ledger.isEmpty() || m_mode == Mode::Closing)
        return;
    sendGuest(*std::exchange(m_pendingDenial, std::nullopt));
    closeGracefully();
}

void GatewayConnection::completeFront()
{
    if (m_ledger.isEmpty())
        return;
    const Request request = m_ledger.takeFront();
    if (m_guestPaused && !m_ledger.full())
        resumeGuestIfPossible();
    m_ledger.recordCompleted(request);
}

void GatewayConnection::closeGracefully()
{
    if (m_mode == Mode::Closing || m_finished)
        return;
    if (m_ledger.events() == 0 && m_guestTls && m_guestTls->handshakeDone())
        m_ledger.record(baseEvent(EgressLayer::Tls, true, EgressReason::Allowed,
                                  QStringLiteral("TLS accepted; the connection ended without a "
                                                 "request")));
    m_mode = Mode::Closing;
    m_idle->stop();
    m_upstream->close();
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
    if (m_ledger.events() == 0)
        m_ledger.record(baseEvent(EgressLayer::Tcp, false, EgressReason::ClosedBeforeDecision,
                                  QStringLiteral("the connection ended before a decision")));
    m_mode = Mode::Closing;
    m_idle->stop();
    if (m_linger)
        m_linger->stop();
    m_upstream->close();
    m_guest->disconnect(this);
    m_guest->close();
    Q_EMIT finished();
}

} // namespace airlock::gateway
