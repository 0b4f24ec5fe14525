#include "core/gateway/dnsserver.h"

#include "core/gateway/dnsresponder.h"
#include "core/gateway/dnsupstreamresolver.h"

#include <QNetworkDatagram>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUdpSocket>
#include <QtEndian>

namespace airlock::gateway {

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

void DnsServer::onNewTcpConnection()
{
    while (QTcpSocket *socket = m_tcp->nextPendingConnection()) {
        if (m_tcpBuffers.size() >= kMaxTcpConnections) {
            socket->abort();
            socket->deleteLater();
            continue;
        }
        m_tcpBuffers.insert(socket, {});
        auto idle = new QTimer(socket);
        idle->setSingleShot(true);
        idle->setObjectName(QStringLiteral("idle"));
        connect(idle, &QTimer::timeout, socket, &QTcpSocket::abort);
        idle->start(kTcpIdleMs);
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onTcpReadyRead(socket); });
        connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
            m_tcpBuffers.remove(socket);
            socket->deleteLater();
        });
    }
}

void DnsServer::onTcpReadyRead(QTcpSocket *socket)
{
    auto it = m_tcpBuffers.find(socket);
    if (it == m_tcpBuffers.end())
        return;
    it->append(socket->readAll());
    QPointer<QTcpSocket> guard(socket);
    while (it->size() >= 2) {
        const quint16 length = qFromBigEndian<quint16>(it->constData());
        if (length < 12 || length > DnsResponder::kMaxQueryBytes) {
            socket->abort();
            return;
        }
        if (it->size() < 2 + length)
            break;
        const QByteArray message = it->mid(2, length);
        it->remove(0, 2 + length);
        if (auto idle = socket->findChild<QTimer *>(QStringLiteral("idle")))
            idle->start(kTcpIdleMs);
        handle(message, [guard](const QByteArray &response) {
            if (!guard || response.size() > 0xffff)
                return;
            QByteArray frame(2, Qt::Uninitialized);
            qToBigEndian<quint16>(quint16(response.size()), frame.data());
            guard->write(frame + response);
        });
        if (!guard)
            return;
        it = m_tcpBuffers.find(socket);
        if (it == m_tcpBuffers.end())
            return;
    }
}

} // namespace airlock::gateway
