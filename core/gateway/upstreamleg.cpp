#include "core/gateway/upstreamleg.h"

#include "core/gateway/credentials/wipe.h"
#include "core/gateway/dns/dnsupstreamresolver.h"
#include "core/gateway/gatewayconnection.h"
#include "core/gateway/readbuffer.h"
#include "core/gateway/streamsocket.h"
#include "core/gateway/tls/tlsupstreamcontext.h"

#include <QPointer>
#include <QTimer>

namespace airlock::gateway {

UpstreamLeg::UpstreamLeg(const GatewayEnvironment *environment, QObject *parent)
    : QObject(parent), m_env(environment)
{ }

UpstreamLeg::~UpstreamLeg()
{
    // The SSL is referenced by its stream; free the stream first.
    m_tls.reset();
}

void UpstreamLeg::open(const QString &host, quint16 port, bool tls)
{
    m_host = host;
    m_port = port;
    m_tlsWanted = tls;
    m_resolving = true;
    QPointer<UpstreamLeg> self(this);
    m_env->resolver->resolve(m_host, [self](const DnsResolution &resolution) {
        if (!self || self->m_closed)
            return;
        self->m_resolving = false;
        if (!resolution) {
            const bool refused = resolution.error().reason == EgressReason::PrivateDestination;
            Q_EMIT self->failed(refused ? EgressReason::PrivateDestination
                                        : EgressReason::UpstreamUnreachable,
                                resolution.error().detail);
            return;
        }
        self->onResolved(*resolution);
    });
}

void UpstreamLeg::onResolved(const QList<QHostAddress> &addresses)
{
    // The resolver refuses answers into refused ranges already; checked again at the dial.
    m_candidates.clear();
    for (const QHostAddress &address : addresses) {
        if (!m_env->refused.contains(address))
            m_candidates.append(address);
    }
    if (m_candidates.isEmpty()) {
        Q_EMIT failed(EgressReason::PrivateDestination,
                      QStringLiteral("every address of %1 is in a refused range").arg(m_host));
        return;
    }
    m_candidateIndex = 0;
    connectNextCandidate();
}

void UpstreamLeg::connectNextCandidate()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->deleteLater();
        m_socket = nullptr;
        ++m_generation;
    }
    if (m_candidateIndex >= m_candidates.size()) {
        Q_EMIT failed(EgressReason::UpstreamUnreachable,
                      QStringLiteral("cannot connect to %1 port %2: %3")
                          .arg(m_host)
                          .arg(m_port)
                          .arg(m_lastError));
        return;
    }
    const QHostAddress address = m_candidates.at(m_candidateIndex++);
    QString error;
    m_socket = StreamSocket::connectTo(address, m_port, this, &error);
    if (!m_socket) {
        m_lastError = error;
        QMetaObject::invokeMethod(this, &UpstreamLeg::connectNextCandidate, Qt::QueuedConnection);
        return;
    }
    connect(m_socket, &StreamSocket::connected, this, &UpstreamLeg::onConnected);
    connect(m_socket, &StreamSocket::readyRead, this, &UpstreamLeg::onReadable);
    connect(m_socket, &StreamSocket::bytesWritten, this, &UpstreamLeg::onBytesWritten);
    // Queued (the error may surface inside a write); a stale error of a socket already given
    // up for the next candidate must not touch its successor.
    const quint64 generation = ++m_generation;
    connect(
        m_socket, &StreamSocket::errorOccurred, this,
        [this, generation] {
            if (generation == m_generation)
                onError();
        },
        Qt::QueuedConnection);
    if (!m_connectTimer) {
        m_connectTimer = new QTimer(this);
        m_connectTimer->setSingleShot(true);
        connect(m_connectTimer, &QTimer::timeout, this, [this] {
            m_lastError = QStringLiteral("connect timed out");
            connectNextCandidate();
        });
    }
    m_connectTimer->start(qMin(kConnectTimeoutMs, m_env->limits.idleTimeoutMs));
}

void UpstreamLeg::onConnected()
{
    m_connectTimer->stop();
    Q_EMIT activity();
    if (!m_tlsWanted) {
        flushPending();
        return;
    }
    auto ssl = m_env->tlsUpstream->newConnection(m_host, m_port);
    if (!ssl) {
        Q_EMIT failed(EgressReason::UpstreamTlsFailed, ssl.error().message);
        return;
    }
    m_ssl = std::move(*ssl);
    m_tls = std::make_unique<TlsMemoryStream>(m_ssl.get(), false);
    pumpTls();
}

void UpstreamLeg::onError()
{
    if (!m_socket || m_closed)
        return;
    m_lastError = m_socket->errorString();
    if (!m_socket->isConnected()) {
        connectNextCandidate();
        return;
    }
    Q_EMIT broken(m_lastError);
}

void UpstreamLeg::onReadable()
{
    const ReadBufferLease buffer;
    for (int round = 0; round < 16 && m_socket && !m_closed; ++round) {
        if (m_paused)
            return;
        qsizetype got = 0;
        const auto result = m_socket->read(buffer.data(), buffer.size(), &got);
        if (result == StreamSocket::ReadResult::WouldBlock)
            return;
        if (result == StreamSocket::ReadResult::Error) {
            onError();
            return;
        }
        if (result == StreamSocket::ReadResult::Eof) {
            Q_EMIT ended();
            return;
        }
        Q_EMIT activity();
        if (m_tls) {
            m_tls->feed(QByteArrayView(buffer.data(), got));
            pumpTls();
        } else {
            Q_EMIT received(QByteArrayView(buffer.data(), got));
            // Plain HTTP may reflect an injected secret too (scrubbed on its way to the guest);
            // the pooled buffer outlives this read.
            wipe(buffer.data(), size_t(got));
        }
        // A short read emptied the socket; the level-triggered notifier brings us back.
        if (got < buffer.size())
            return;
    }
}

void UpstreamLeg::pumpTls()
{
    if (!m_tls->handshakeDone()) {
        const auto status = m_tls->handshake();
        const QByteArray out = m_tls->takeOutput();
        if (!out.isEmpty())
            m_socket->write(out);
        if (status == TlsMemoryStream::Status::WantMore)
            return;
        if (status != TlsMemoryStream::Status::Ok) {
            m_tlsFailed = true;
            // A session the server no longer takes is not offered again.
            m_env->tlsUpstream->forgetSession(m_host, m_port);
            const QString verify = upstreamVerifyResult(m_ssl.get());
            Q_EMIT failed(EgressReason::UpstreamTlsFailed,
                          verify != u"ok" ? verify : m_tls->errorText());
            return;
        }
        flushPending();
    }
    const ReadBufferLease buffer;
    while (m_tls && !m_closed) {
        // Records (16 KiB at most) are gathered up to the buffer's size before they go on: the
        // guest side then encrypts and sends one piece, not one per record.
        qsizetype filled = 0;
        auto status = TlsMemoryStream::Status::Ok;
        while (filled < buffer.size() && status == TlsMemoryStream::Status::Ok) {
            qsizetype got = 0;
            status = m_tls->read(buffer.data() + filled, buffer.size() - filled, &got);
            filled += got;
        }
        const QByteArray out = m_tls->takeOutput();
        if (!out.isEmpty() && m_socket)
            m_socket->write(out);
        if (filled > 0) {
            Q_EMIT received(QByteArrayView(buffer.data(), filled));
            // It may hold a secret the upstream reflected (scrubbed on its way to the guest).
            wipe(buffer.data(), size_t(filled));
        }
        if (status == TlsMemoryStream::Status::Ok)
            continue;
        if (status == TlsMemoryStream::Status::Closed)
            Q_EMIT ended();
        else if (status == TlsMemoryStream::Status::Failed) {
            m_tlsFailed = true;
            onError();
        }
        return;
    }
}

qsizetype UpstreamLeg::backlog() const
{
    return m_pending.size() + (m_socket ? m_socket->bytesToWrite() : 0);
}

bool UpstreamLeg::ready() const
{
    return m_socket && m_socket->isConnected()
        && (!m_tlsWanted || (m_tls && m_tls->handshakeDone()));
}

void UpstreamLeg::send(const QByteArray &bytes)
{
    if (!ready()) {
        // It may hold an injected head: shared while it is the only piece, else grown without
        // leaving the old buffer unwiped.
        if (m_pending.isEmpty())
            m_pending = bytes;
        else
            appendWiping(m_pending, bytes);
        return;
    }
    if (m_tls) {
        m_tls->write(bytes);
        m_socket->write(m_tls->takeOutput());
    } else {
        m_socket->write(bytes);
    }
}

void UpstreamLeg::flushPending()
{
    if (!m_pending.isEmpty()) {
        // It may hold an injected head: wiped once TLS has taken it.
        QByteArray pending = std::exchange(m_pending, {});
        send(pending);
        wipe(pending);
    }
    onBytesWritten();
}

void UpstreamLeg::onBytesWritten()
{
    Q_EMIT drained();
}

void UpstreamLeg::pauseReading()
{
    if (!m_socket || m_paused)
        return;
    m_paused = true;
    m_socket->setReadEnabled(false);
}

void UpstreamLeg::resumeReading()
{
    if (!m_paused || !m_socket)
        return;
    m_paused = false;
    m_socket->setReadEnabled(true);
    QMetaObject::invokeMethod(this, &UpstreamLeg::onReadable, Qt::QueuedConnection);
}

void UpstreamLeg::close()
{
    const bool wasClosed = std::exchange(m_closed, true);
    wipe(m_pending);
    if (m_connectTimer)
        m_connectTimer->stop();
    if (!wasClosed && m_tls && m_tls->handshakeDone() && !m_tlsFailed && m_socket
        && !m_socket->isClosed()) {
        // close_notify (RFC 8446 §6.1): an SSL freed without it has its session marked not
        // resumable by OpenSSL, and the next connection to this name would handshake in full.
        m_tls->shutdown();
        const QByteArray out = m_tls->takeOutput();
        if (!out.isEmpty())
            m_socket->write(out);
    }
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->close();
    }
}

} // namespace airlock::gateway
