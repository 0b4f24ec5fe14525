#include "core/gateway/controlchannel.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSocketNotifier>

#include <openssl/crypto.h>

#include <cmath>

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

bool ControlChannel::send(const QJsonObject &message, bool essential)
{
    const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    const qsizetype bound = kMaxQueuedBytes + (essential ? kReservedBytes : 0);
    if (m_out.size() - m_outOffset + line.size() > bound) {
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
    if (m_readFailed)
        return;
    if (m_awaiting) {
        // The rest of a payload goes straight into its locked buffer.
        const qsizetype wanted = m_payload.size() - m_payloadFilled;
        ssize_t n;
        do {
            n = ::read(m_fd, m_payload.writableBytes() + m_payloadFilled, size_t(wanted));
        } while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            m_readNotifier->setEnabled(false);
            m_awaiting.reset();
            m_payload = SecretValue();
            Q_EMIT closed();
            return;
        }
        m_payloadFilled += n;
        if (m_payloadFilled < m_payload.size())
            return;
        deliver(*std::exchange(m_awaiting, std::nullopt));
        processLines();
        return;
    }
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
    // Without a copy of our own (fromRawData): the bytes may hold the start of a payload, and
    // the stack buffer is wiped below; the framer wipes what takeRaw() moves out.
    m_framer.append(QByteArray::fromRawData(buffer, qsizetype(n)));
    OPENSSL_cleanse(buffer, size_t(n));
    processLines();
}

void ControlChannel::processLines()
{
    while (!m_awaiting && !m_readFailed) {
        auto line = m_framer.next();
        if (!line)
            return;
        if (!*line)
            return failProtocol(
                QStringLiteral("a control line exceeds %1 bytes").arg(kMaxLineBytes));
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(**line, &error);
        if (error.error != QJsonParseError::NoError || !document.isObject())
            return failProtocol(error.error != QJsonParseError::NoError
                                    ? QStringLiteral("a control line is not JSON: %1 at offset %2")
                                          .arg(error.errorString())
                                          .arg(error.offset)
                                    : QStringLiteral("a control line is not a JSON object"));
        const QJsonObject message = document.object();
        const QJsonValue announced = message.value(QStringLiteral("payloadBytes"));
        if (announced.isUndefined()) {
            deliver(message);
            continue;
        }
        const double bytes = announced.toDouble(-1);
        if (!announced.isDouble() || bytes != std::trunc(bytes) || bytes < 1
            || bytes > double(kMaxPayloadBytes))
            return failProtocol(
                QStringLiteral("'payloadBytes' must be an integer 1..%1").arg(kMaxPayloadBytes));
        m_payload = SecretValue::allocate(qsizetype(bytes));
        m_payloadFilled = m_framer.takeRaw(m_payload.writableBytes(), m_payload.size());
        if (m_payloadFilled < m_payload.size()) {
            m_awaiting = message;
            return;
        }
        deliver(message);
    }
}

void ControlChannel::deliver(const QJsonObject &message)
{
    Q_EMIT messageReceived(message);
    // Not taken by the slot: wiped now, not when the next payload arrives.
    m_payload = SecretValue();
    m_payloadFilled = 0;
}

void ControlChannel::failProtocol(const QString &error)
{
    m_readFailed = true;
    m_readNotifier->setEnabled(false);
    m_payload = SecretValue();
    Q_EMIT protocolError(error);
}

} // namespace airlock::gateway
