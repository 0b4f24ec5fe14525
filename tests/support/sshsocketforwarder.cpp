#include "sshsocketforwarder.h"

#include "core/ssh/sshtransport.h"

#include <QLocalServer>
#include <QLocalSocket>
#include <QMetaObject>

#include <memory>

namespace airlock::test {

SshSocketForwarder::SshSocketForwarder(SshEndpoint endpoint) : m_endpoint(std::move(endpoint))
{
    m_thread.setObjectName(QStringLiteral("ssh-forwarder"));
    m_thread.start();
}

SshSocketForwarder::~SshSocketForwarder()
{
    m_thread.quit();
    m_thread.wait();
}

bool SshSocketForwarder::listen(const QString &path)
{
    bool listening = false;
    const SshEndpoint endpoint = m_endpoint;
    QObject context;
    context.moveToThread(&m_thread);
    QMetaObject::invokeMethod(
        &context,
        [&] {
            // Lives on the forwarder thread until the thread's event loop ends.
            auto *server = new QLocalServer;
            QObject::connect(&m_thread, &QThread::finished, server, &QObject::deleteLater);
            QLocalServer::removeServer(path);
            listening = server->listen(path);
            QObject::connect(server, &QLocalServer::newConnection, server, [server, endpoint] {
                while (QLocalSocket *socket = server->nextPendingConnection()) {
                    auto *transport = new SshTransport(endpoint, nullptr, socket);
                    auto early = std::make_shared<QByteArray>();
                    QObject::connect(socket, &QLocalSocket::readyRead, transport,
                                     [socket, transport, early] {
                                         const QByteArray bytes = socket->readAll();
                                         if (transport->isOpen())
                                             transport->write(bytes);
                                         else
                                             *early += bytes;
                                     });
                    QObject::connect(transport, &Transport::connected, transport,
                                     [transport, early] {
                                         transport->write(*early);
                                         early->clear();
                                     });
                    QObject::connect(transport, &Transport::bytesReceived, socket,
                                     [socket](const QByteArray &bytes) { socket->write(bytes); });
                    QObject::connect(transport, &Transport::disconnected, socket,
                                     [socket] { socket->disconnectFromServer(); });
                    QObject::connect(socket, &QLocalSocket::disconnected, socket,
                                     [socket, transport] {
                                         transport->close();
                                         socket->deleteLater();
                                     });
                    transport->open();
                }
            });
        },
        Qt::BlockingQueuedConnection);
    if (listening)
        m_path = path;
    return listening;
}

} // namespace airlock::test
