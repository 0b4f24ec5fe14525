#include "core/gateway/controlchannel.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::gateway {

ControlChannel::ControlChannel(int fd, QObject *parent) : QObject(parent), m_fd(fd)
{
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(m_fd, F_SETFD, FD_CLOEXEC);
    m_readNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    m_writeNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &ControlChannel::onReadable);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &ControlChannel::onWritable);
}

ControlChannel::~ControlChannel()
{
    ::close(m_fd);
}

bool ControlChannel::send(const QJsonObject &message)
{
    const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    if (m_out.size() - m_outOffset + line.size() > kMaxQueuedBytes) {
        ++m_dropped;
        return false;
    }
    m_out += line;
    flush();
    return true;
}

void ControlChannel::flush()
{
    while (m_outOffset < m_out.size() && !m_failed) {
        const ssize_t n = ::send(m_fd, m_out.constData() + m_outOffset,
                                 size_t(m_out.size() - m_outOffset), MSG_NOSIGNAL);
        if (n > 0) {
            m_outOffset += n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        m_failed = true; // the peer is gone; EOF on the read side follows
    }
    if (m_outOffset == m_out.size() || m_failed) {
        m_out.clear();
        m_outOffset = 0;
    } else if (m_outOffset > 1024 * 1024) {
        m_out.remove(0, m_outOffset);
        m_outOffset = 0;
    }
    m_writeNotifier->setEnabled(!m_out.isEmpty());
}

void ControlChannel::onWritable()
{
    flush();
}

void ControlChannel::flushBlocking(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!m_out.isEmpty() && !m_failed && !deadline.hasExpired()) {
        pollfd p {m_fd, POLLOUT, 0};
        ::poll(&p, 1, int(qMax<qint64>(1, deadline.remainingTime())));
        flush();
    }
}

void ControlChannel::onReadable()
{
    char buffer[64 * 1024];
    ssize_t n;
    do {
        n = ::read(m_fd, buffer, sizeof buffer);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        m_readNotifier->setEnabled(false);
        Q_EMIT closed();
        return;
    }
    m_framer.append(QByteArray(buffer, n));
    while (auto line = m_framer.next()) {
        if (!*line) {
            m_readNotifier->setEnabled(false);
            Q_EMIT protocolError(
                QStringLiteral("a control line exceeds %1 bytes").arg(kMaxLineBytes));
            return;
        }
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(**line, &error);
        if (error.error != QJsonParseError::NoError || !document.isObject()) {
            m_readNotifier->setEnabled(false);
            Q_EMIT protocolError(error.error != QJsonParseError::NoError
                                     ? QStringLiteral("a control line is not JSON: %1 at offset %2")
                                           .arg(error.errorString())
                                           .arg(error.offset)
                                     : QStringLiteral("a control line is not a JSON object"));
            return;
        }
        Q_EMIT messageReceived(document.object());
    }
}

} // namespace airlock::gateway
