#pragma once

#include "core/gateway/dns/dnsdecision.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QObject>

#include <functional>

class QTcpServer;
class QTcpSocket;
class QUdpSocket;

namespace airlock::gateway {

class DnsResponder;
class DnsUpstreamResolver;

/// The gateway's DNS listener for one sandbox: UDP, and TCP with the 2-byte length framing of
/// RFC 1035 §4.2.2 / RFC 7766, on the gateway's address. Every message goes through
/// DnsResponder::decide; allowed A queries are resolved with DnsUpstreamResolver and completed
/// with DnsResponder::finish; nothing the guest sends is ever forwarded (docs/redteam-cases.md E1).
/// Each final decision (not Resolve) is emitted as decided() for the gateway's egress events.
///
/// Limits (RFC 7766 §6.2.3 lets a server close idle or slow connections): at most
/// kMaxTcpConnections TCP connections (more are closed at once), each closed after
/// tcpIdleTimeout() ms without reading a complete message while the peer has fewer than
/// kMaxTcpPendingBytes of answers unread (in Qt's buffer or the kernel's send queue), or on a
/// frame length under 12 or over DnsResponder::kMaxQueryBytes. While more than kMaxTcpPendingBytes
/// of answers wait to be written, the connection is not read: the guest's input stays in the kernel
/// (TCP flow control stalls its send), and a peer that never reads is idle and closed. Every
/// refusal is emitted as decided() too. TCP answers may come out of order (RFC 7766 §7).
class DnsServer final : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxTcpConnections = 32;
    static constexpr int kTcpIdleMs = 10000;
    /// Bytes of answers a TCP connection may have waiting in user space before it is not read.
    static constexpr qint64 kMaxTcpPendingBytes = 64 * 1024;
    /// Bytes of a TCP connection's input Qt reads ahead of the server (QAbstractSocket's read
    /// buffer; its default, 0, would read all the kernel holds).
    static constexpr qint64 kTcpReadBufferBytes = 16 * 1024;

    /// `responder` and `resolver` must outlive the server.
    DnsServer(DnsResponder *responder, DnsUpstreamResolver *resolver, QObject *parent = nullptr);
    ~DnsServer() override;

    /// Binds UDP and TCP on `address`:`port` (port 0: the kernel picks the UDP port, TCP takes
    /// the same). OperationFailed naming the socket error when either bind fails.
    Result<void> listen(const QHostAddress &address, quint16 port);
    /// Serves UDP on an already bound datagram socket `fd` (bound by airlockd and inherited).
    Result<void> adoptUdpSocket(qintptr fd);
    /// Serves TCP on an already bound and listening stream socket `fd`.
    Result<void> adoptTcpSocket(qintptr fd);

    /// The bound UDP port, 0 when not listening.
    quint16 udpPort() const;
    /// The bound TCP port, 0 when not listening.
    quint16 tcpPort() const;
    /// The open TCP connections (at most kMaxTcpConnections).
    int tcpConnectionCount() const;

    /// Idle time in ms after which a TCP connection is closed; kTcpIdleMs unless set. Applies to
    /// connections accepted afterwards.
    int tcpIdleTimeout() const;
    void setTcpIdleTimeout(int ms);

Q_SIGNALS:
    /// One per final decision: name (canonical, or escaped as received), type, verdict, reason.
    void decided(const airlock::gateway::DnsEvent &event);

private:
    using Reply = std::function<void(const QByteArray &)>;

    void handle(const QByteArray &query, Reply reply);
    void deliver(const DnsDecision &decision, const Reply &reply);
    void onUdpReadyRead();
    void onNewTcpConnection();
    void onTcpReadyRead(QTcpSocket *socket);
    /// Emits decided() for a refusal of the transport (no question was read).
    void refuse(EgressReason reason, const QString &detail);

    DnsResponder *m_responder;
    DnsUpstreamResolver *m_resolver;
    QUdpSocket *m_udp = nullptr;
    QTcpServer *m_tcp = nullptr;
    /// Per TCP connection: input read from the socket and not yet framed (under one frame plus
    /// kTcpReadBufferBytes).
    QHash<QTcpSocket *, QByteArray> m_tcpBuffers;
    int m_tcpIdleMs = kTcpIdleMs;
};

} // namespace airlock::gateway
