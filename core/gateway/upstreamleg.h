#pragma once

#include "core/gateway/tls/tlsmemorystream.h"
#include "core/gateway/tls/tlsopenssl.h"
#include "core/model/egressreason.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QString>

#include <memory>

class QTimer;

namespace airlock::gateway {

struct GatewayEnvironment;
class StreamSocket;

/// The upstream side of one guest connection: the only connection the gateway opens for it
/// (docs/gateway.md, "Connection handling"). open() resolves the name with the gateway's own
/// resolver (never the address the guest chose), skips addresses in refused ranges, tries the
/// rest in turn (each within kConnectTimeoutMs), and for a TLS guest connection runs TLS to the
/// upstream with full certificate verification (TlsUpstreamContext) over memory BIOs. Bytes sent
/// before it is ready wait in a queue (they may hold an injected head: wiped once sent). Reads
/// pause on request (backpressure: the guest's write queue is full). Single-threaded, never
/// blocks; reports through its signals, synchronously.
class UpstreamLeg final : public QObject
{
    Q_OBJECT
public:
    static constexpr int kConnectTimeoutMs = 10000;

    /// `environment` (resolver, refused ranges, upstream TLS, limits) outlives the leg.
    explicit UpstreamLeg(const GatewayEnvironment *environment, QObject *parent = nullptr);
    ~UpstreamLeg() override;

    /// Resolves `host` and connects to `port`; with `tls`, TLS for `host` follows. Once only.
    void open(const QString &host, quint16 port, bool tls);
    /// A resolution is under way or a socket exists (a closed leg keeps its closed socket, so
    /// it is not opened again).
    bool started() const { return m_socket || m_resolving; }
    /// Queues or writes plaintext for the upstream (through TLS when it has TLS).
    void send(const QByteArray &bytes);
    /// Bytes waiting for the upstream: queued before it was ready plus the socket's queue.
    qsizetype backlog() const;
    /// Stops reading the upstream (the guest's write queue is full); no-op without a socket.
    void pauseReading();
    /// Reads again after pauseReading(), at once for what waits already.
    void resumeReading();
    bool readingPaused() const { return m_paused; }
    /// Closes the connection at once: the socket (queued bytes dropped), the resolution's answer
    /// and the connect timer are ignored from now on, the queue is wiped. No signal follows.
    void close();

Q_SIGNALS:
    /// Traffic from or to the upstream (the idle timer restarts).
    void activity();
    /// Plaintext from the upstream, in order.
    void received(QByteArrayView bytes);
    /// The upstream's queue shrank (the guest may be read again).
    void drained();
    /// The upstream ended its side (TCP FIN or TLS close_notify).
    void ended();
    /// The connection failed after it was established; `error` says how.
    void broken(const QString &error);
    /// The leg could not be opened: PrivateDestination (every address refused),
    /// UpstreamUnreachable (resolution failed, or no address connected) or UpstreamTlsFailed
    /// (the upstream's TLS or certificate); the detail is English. The leg stays open for
    /// close().
    void failed(EgressReason reason, const QString &detail);

private:
    void onResolved(const QList<QHostAddress> &addresses);
    void connectNextCandidate();
    void onConnected();
    void onError();
    void onReadable();
    void pumpTls();
    void flushPending();
    void onBytesWritten();
    bool ready() const;

    const GatewayEnvironment *m_env;
    QString m_host;
    quint16 m_port = 0;
    bool m_tlsWanted = false;
    bool m_closed = false;
    StreamSocket *m_socket = nullptr;
    QByteArray m_pending;
    bool m_resolving = false;
    QList<QHostAddress> m_candidates;
    qsizetype m_candidateIndex = 0;
    QString m_lastError;
    quint64 m_generation = 0; ///< which socket a queued error belongs to
    SslPtr m_ssl;
    std::unique_ptr<TlsMemoryStream> m_tls;
    bool m_paused = false;
    bool m_tlsFailed = false; ///< no close_notify after a TLS error
    QTimer *m_connectTimer = nullptr;
};

} // namespace airlock::gateway
