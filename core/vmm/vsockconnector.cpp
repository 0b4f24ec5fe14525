#include "core/vmm/vsockconnector.h"

#include "core/model/printabletext.h"
#include "core/vmm/pinnedsocket.h"

#include <QLocalSocket>
#include <QRegularExpression>
#include <QTimer>

namespace airlock {

VsockConnector::VsockConnector(QString udsPath, quint32 port, int timeoutMs, Connected connected,
                               QObject *parent)
    : QObject(parent)
    , m_udsPath(std::move(udsPath))
    , m_port(port)
    , m_deadline(qMax(0, timeoutMs))
    , m_connected(std::move(connected))
{
    QTimer::singleShot(0, this, &VsockConnector::attempt);
}

VsockConnector::~VsockConnector()
{
    m_connected = nullptr;
    delete m_socket;
}

void VsockConnector::attempt()
{
    if (!m_connected)
        return;
    auto pinned = PinnedSocket::open(m_udsPath);
    if (!pinned) {
        if (pinned.error().kind == ErrorKind::NotFound)
            return retry(pinned.error().message);
        return finish(std::unexpected(pinned.error()));
    }
    m_socket = new QLocalSocket();
    // Only the answer line is read here; the bound keeps a VMM from making us buffer more.
    m_socket->setReadBufferSize(4096);
    m_socket->connectToServer((*pinned)->path());
    if (m_socket->state() != QLocalSocket::ConnectedState) {
        const QString why = m_socket->errorString();
        delete std::exchange(m_socket, nullptr);
        return retry(why);
    }
    const int generation = ++m_generation;
    connect(m_socket, &QLocalSocket::readyRead, this, &VsockConnector::onReadyRead);
    connect(m_socket, &QLocalSocket::disconnected, this, [this, generation] {
        if (generation != m_generation || !m_socket)
            return;
        m_socket->disconnect(this);
        m_socket->deleteLater();
        m_socket = nullptr;
        // Firecracker closes it when nothing in the guest listens on the port (yet).
        retry(QStringLiteral("nothing in the guest accepted vsock port %1").arg(m_port));
    });
    m_socket->write(QByteArray("CONNECT ") + QByteArray::number(m_port) + '\n');
}

void VsockConnector::onReadyRead()
{
    if (!m_socket || !m_connected)
        return;
    if (!m_socket->canReadLine()) {
        if (m_socket->bytesAvailable() > kMaxAnswerBytes)
            return finish(fail(ErrorKind::OperationFailed,
                               QStringLiteral("the VMM's vsock answer is longer than %1 bytes")
                                   .arg(kMaxAnswerBytes)));
        return;
    }
    const QByteArray line = m_socket->readLine(kMaxAnswerBytes + 1);
    static const QRegularExpression ok(QStringLiteral("^OK [0-9]{1,10}\n$"));
    if (!ok.match(QString::fromLatin1(line)).hasMatch())
        return finish(fail(ErrorKind::OperationFailed,
                           QStringLiteral("the VMM answered CONNECT %1 with '%2'")
                               .arg(m_port)
                               .arg(printableText(QString::fromLatin1(line.trimmed()), true))));
    QLocalSocket *socket = std::exchange(m_socket, nullptr);
    socket->disconnect(this);
    socket->setReadBufferSize(0);
    finish(socket);
}

void VsockConnector::retry(const QString &why)
{
    m_lastFailure = why;
    if (m_deadline.hasExpired())
        return finish(fail(ErrorKind::Timeout,
                           QStringLiteral("no vsock connection to guest port %1: %2")
                               .arg(m_port)
                               .arg(m_lastFailure)));
    QTimer::singleShot(kRetryMs, this, &VsockConnector::attempt);
}

void VsockConnector::finish(const Result<QLocalSocket *> &result)
{
    if (!m_connected)
        return;
    ++m_generation;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
        m_socket = nullptr;
    }
    Connected connected = std::exchange(m_connected, {});
    connected(result);
}

} // namespace airlock
