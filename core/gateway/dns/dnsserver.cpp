#include "core/gateway/dns/dnsserver.h"

#include "core/gateway/dns/dnsresponder.h"
#include "core/gateway/dns/dnsupstreamresolver.h"

#include <QNetworkDatagram>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUdpSocket>
#include <QtEndian>

#include <linux/sockios.h>
#include <sys/ioctl.h>

namespace airlock::gateway {

namespace {

/// Answers written and not yet taken by the peer: Qt's write buffer plus the kernel's send queue
/// (SIOCOUTQ, tcp(7): sent and unacknowledged or not yet sent; a peer that does not read closes
/// its window, so the queue grows).
qint64 unreadAnswerBytes(QTcpSocket *socket)
{
    int queued = 0;
    if (::ioctl(int(socket->socketDescriptor()), SIOCOUTQ, &queued) != 0)
        queued = 0;
    return socket->bytesToWrite() + queued;
}

} // namespace

DnsServer::DnsServer(DnsResponder *responder, DnsUpstreamResolver *resolver, QObject *parent)
    : QObject(parent), m_responder(responder), m_resolver(resolver)
{ }

DnsServer::~DnsServer() = default;

Result<void> DnsServer::listen(const QHostAddress &address, quint16 port)
{
    auto udp = new QUdpSocket(this);
    if (!udp->bind(address, port)) {
        const QString why = udp->errorString();
        delete udp;
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot bind UDP %1 port %2: %3")
                        .arg(address.toString())
                        .arg(port)
                        .arg(why));
    }
    auto tcp = new QTcpServer(this);
    if (!tcp->listen(address, udp->localPort())) {
        const QString why = tcp->errorString();
        delete udp;
        delete tcp;
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot listen on TCP %1 port %2: %3")
                        .arg(address.toString())
                        .arg(port)
                        .arg(why));
    }
    delete m_udp;
    delete m_tcp;
    m_udp = udp;
    m_tcp = tcp;
    connect(m_udp, &QUdpSocket::readyRead, this, &DnsServer::onUdpReadyRead);
    connect(m_tcp, &QTcpServer::newConnection, this, &DnsServer::onNewTcpConnection);
    return {};
}

Result<void> DnsServer::adoptUdpSocket(qintptr fd)
{
    auto udp = new QUdpSocket(this);
    if (!udp->setSocketDescriptor(fd, QAbstractSocket::BoundState)) {
        const QString why = udp->errorString();
        delete udp;
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot use UDP socket %1: %2").arg(fd).arg(why));
    }
    delete m_udp;
    m_udp = udp;
    connect(m_udp, &QUdpSocket::readyRead, this, &DnsServer::onUdpReadyRead);
    return {};
}

Result<void> DnsServer::adoptTcpSocket(qintptr fd)
{
    auto tcp = new QTcpServer(this);
    if (!tcp->setSocketDescriptor(fd)) {
        const QString why = tcp->errorString();
        delete tcp;
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot use TCP socket %1: %2").arg(fd).arg(why));
    }
    delete m_tcp;
    m_tcp = tcp;
    connect(m_tcp, &QTcpServer::newConnection, this, &DnsServer::onNewTcpConnection);
    return {};
}

quint16 DnsServer::udpPort() const
{
    return m_udp ? m_udp->localPort() : 0;
}

quint16 DnsServer::tcpPort() const
{
    return m_tcp ? m_tcp->serverPort() : 0;
}

int DnsServer::tcpConnectionCount() const
{
    return int(m_tcpBuffers.size());
}

int DnsServer::tcpIdleTimeout() const
{
    return m_tcpIdleMs;
}

void DnsServer::setTcpIdleTimeout(int ms)
{
    m_tcpIdleMs = ms;
}

void DnsServer::handle(const QByteArray &query, Reply reply)
{
    const DnsDecision decision = m_responder->decide(query);
    if (decision.final()) {
        deliver(decision, reply);
        return;
    }
    QPointer<DnsServer> self(this);
    m_resolver->resolve(decision.name,
                        [self, decision, reply = std::move(reply)](const DnsResolution &result) {
                            if (!self)
                                return;
                            self->deliver(self->m_responder->finish(decision, result), reply);
                        });
}

void DnsServer::deliver(const DnsDecision &decision, const Reply &reply)
{
    if (!decision.response.isEmpty())
        reply(decision.response);
    Q_EMIT decided(DnsEvent {decision.name, decision.type, decision.verdict, decision.reason,
                             decision.detail});
}

void DnsServer::onUdpReadyRead()
{
    while (m_udp && m_udp->hasPendingDatagrams()) {
        const QNetworkDatagram datagram = m_udp->receiveDatagram(DnsResponder::kMaxQueryBytes + 1);
        if (!datagram.isValid())
            continue;
        QPointer<QUdpSocket> socket(m_udp);
        const QHostAddress sender = datagram.senderAddress();
        const quint16 senderPort = quint16(datagram.senderPort());
        handle(datagram.data(), [socket, sender, senderPort](const QByteArray &response) {
            if (socket)
                socket->writeDatagram(response, sender, senderPort);
        });
    }
}

void DnsServer::refuse(EgressReason reason, const QString &detail)
{
    Q_EMIT decided(DnsEvent {QString(), 0, DnsVerdict::Drop, reason, detail});
}

void DnsServer::onNewTcpConnection()
{
    while (QTcpSocket *socket = m_tcp->nextPendingConnection()) {
        if (m_tcpBuffers.size() >= kMaxTcpConnections) {
            socket->abort();
            socket->deleteLater();
            refuse(
                EgressReason::TooManyConnections,
                QStringLiteral("%1 DNS TCP connections are open already").arg(kMaxTcpConnections));
            continue;
        }
        m_tcpBuffers.insert(socket, {});
        // Bounded, so that input the server does not read yet stays in the kernel's receive
        // buffer and TCP flow control stalls the guest instead of our memory growing.
        socket->setReadBufferSize(kTcpReadBufferBytes);
        auto idle = new QTimer(socket);
        idle->setSingleShot(true);
        idle->setObjectName(QStringLiteral("idle"));
        connect(idle, &QTimer::timeout, socket, &QTcpSocket::abort);
        idle->start(m_tcpIdleMs);
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onTcpReadyRead(socket); });
        // Answers drained: read on where the write bound stopped (the input may be waiting in
        // Qt's buffer already, which makes no new readyRead).
        connect(socket, &QTcpSocket::bytesWritten, this,
                [this, socket] { onTcpReadyRead(socket); });
        connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
            m_tcpBuffers.remove(socket);
            socket->deleteLater();
        });
    }
}

void DnsServer::onTcpReadyRead(QTcpSocket *socket)
{
    QPointer<QTcpSocket> guard(socket);
    while (guard && guard->state() == QAbstractSocket::ConnectedState) {
        // A peer that does not read its answers is not read either (RFC 7766 §6.2.3): it gets
        // no further answers queued, and with no complete message read its idle timer runs out.
        if (socket->bytesToWrite() >= kMaxTcpPendingBytes)
            return;
        auto it = m_tcpBuffers.find(socket);
        if (it == m_tcpBuffers.end())
            return;
        if (it->size() < 2 + DnsResponder::kMaxQueryBytes) {
            // readAll ends with a read of the empty buffer, which lets Qt read the kernel again
            // after a full read buffer; it returns at most kTcpReadBufferBytes.
            it->append(socket->readAll());
        }
        if (it->size() < 2)
            return;
        const quint16 length = qFromBigEndian<quint16>(it->constData());
        if (length < 12 || length > DnsResponder::kMaxQueryBytes) {
            socket->abort();
            refuse(
                length < 12 ? EgressReason::NotAQuery : EgressReason::MalformedQuery,
                length < 12
                    ? QStringLiteral("TCP frame of %1 bytes: shorter than a DNS header").arg(length)
                    : QStringLiteral("TCP frame of %1 bytes: longer than %2")
                          .arg(length)
                          .arg(DnsResponder::kMaxQueryBytes));
            return;
        }
        if (it->size() < 2 + length)
            return;
        const QByteArray message = it->mid(2, length);
        it->remove(0, 2 + length);
        // A message is progress only from a peer that takes its answers; one that does not stops
        // refreshing the timer long before the write bound is reached.
        if (auto idle = socket->findChild<QTimer *>(QStringLiteral("idle"));
            idle && unreadAnswerBytes(socket) < kMaxTcpPendingBytes)
            idle->start(m_tcpIdleMs);
        handle(message, [guard](const QByteArray &response) {
            if (!guard || response.size() > 0xffff)
                return;
            QByteArray frame(2, Qt::Uninitialized);
            qToBigEndian<quint16>(quint16(response.size()), frame.data());
            guard->write(frame + response);
        });
    }
}

} // namespace airlock::gateway
