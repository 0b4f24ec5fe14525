#include "core/gateway/streamsocket.h"

#include <QSocketNotifier>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::gateway {

namespace {

void makeNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    const int one = 1;
    // Requests and small responses are written in pieces; Nagle would add a delayed-ACK wait.
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

} // namespace

StreamSocket::StreamSocket(int fd, QObject *parent) : StreamSocket(fd, false, parent) { }

StreamSocket::StreamSocket(int fd, bool connecting, QObject *parent)
    : QObject(parent), m_fd(fd), m_connected(!connecting)
{
    makeNonBlocking(m_fd);
    m_readNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    m_writeNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Write, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &StreamSocket::readyRead);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &StreamSocket::onWritable);
    m_readNotifier->setEnabled(m_connected);
    m_writeNotifier->setEnabled(connecting);
}

StreamSocket *StreamSocket::connectTo(const QHostAddress &address, quint16 port, QObject *parent,
                                      QString *error)
{
    bool ok = false;
    const quint32 ipv4 = address.toIPv4Address(&ok);
    if (!ok) {
        *error = QStringLiteral("only IPv4 upstreams are supported (%1)").arg(address.toString());
        return nullptr;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = QString::fromLocal8Bit(std::strerror(errno));
        return nullptr;
    }
    sockaddr_in target {};
    target.sin_family = AF_INET;
    target.sin_port = htons(port);
    target.sin_addr.s_addr = htonl(ipv4);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&target), sizeof target) != 0
        && errno != EINPROGRESS) {
        *error = QString::fromLocal8Bit(std::strerror(errno));
        ::close(fd);
        return nullptr;
    }
    return new StreamSocket(fd, true, parent);
}

StreamSocket::~StreamSocket()
{
    close();
}

void StreamSocket::setReadEnabled(bool enabled)
{
    m_readEnabled = enabled;
    if (m_readNotifier)
        m_readNotifier->setEnabled(enabled && m_connected && m_fd >= 0);
}

StreamSocket::ReadResult StreamSocket::read(char *buffer, qsizetype capacity, qsizetype *got)
{
    *got = 0;
    if (m_fd < 0)
        return ReadResult::Error;
    ssize_t n;
    do {
        n = ::recv(m_fd, buffer, size_t(capacity), 0);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        *got = qsizetype(n);
        return ReadResult::Data;
    }
    if (n == 0) {
        m_readNotifier->setEnabled(false); // level-triggered: EOF would fire forever
        return ReadResult::Eof;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return ReadResult::WouldBlock;
    m_error = QString::fromLocal8Bit(std::strerror(errno));
    m_readNotifier->setEnabled(false);
    return ReadResult::Error;
}

void StreamSocket::write(QByteArrayView bytes)
{
    if (bytes.isEmpty() || m_fd < 0)
        return;
    if (m_connected && m_queue.isEmpty()) {
        // The common case: the kernel takes it all now; queue (copy) only what it does not.
        ssize_t n;
        do {
            n = ::send(m_fd, bytes.data(), size_t(bytes.size()), MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            fail(errno);
            return;
        }
        bytes = bytes.sliced(qMax<ssize_t>(n, 0));
        if (bytes.isEmpty()) {
            if (m_shutdownPending)
                flush();
            return;
        }
    }
    m_queue.append(bytes.toByteArray());
    m_queued += bytes.size();
    if (m_connected)
        flush();
}

void StreamSocket::flush()
{
    while (!m_queue.isEmpty() && m_fd >= 0) {
        const QByteArray &head = m_queue.first();
        const ssize_t n = ::send(m_fd, head.constData() + m_headOffset,
                                 size_t(head.size() - m_headOffset), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            fail(errno);
            return;
        }
        m_headOffset += n;
        m_queued -= n;
        if (m_headOffset == head.size()) {
            m_queue.removeFirst();
            m_headOffset = 0;
        }
        if (n == 0)
            break;
    }
    if (m_fd < 0)
        return;
    m_writeNotifier->setEnabled(!m_queue.isEmpty());
    if (m_queue.isEmpty() && m_shutdownPending) {
        m_shutdownPending = false;
        ::shutdown(m_fd, SHUT_WR);
    }
}

void StreamSocket::onWritable()
{
    if (!m_connected) {
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) {
            fail(error);
            return;
        }
        m_connected = true;
        m_readNotifier->setEnabled(m_readEnabled);
        m_writeNotifier->setEnabled(!m_queue.isEmpty());
        Q_EMIT connected();
        if (m_fd >= 0)
            flush();
        return;
    }
    const qsizetype before = m_queued;
    flush();
    if (m_queued < before)
        Q_EMIT bytesWritten();
}

void StreamSocket::shutdownWriteWhenFlushed()
{
    if (m_fd < 0)
        return;
    m_shutdownPending = true;
    if (m_connected)
        flush();
}

void StreamSocket::fail(int error)
{
    m_error = QString::fromLocal8Bit(std::strerror(error));
    m_readNotifier->setEnabled(false);
    m_writeNotifier->setEnabled(false);
    Q_EMIT errorOccurred();
}

void StreamSocket::close()
{
    if (m_fd < 0)
        return;
    delete m_readNotifier;
    delete m_writeNotifier;
    m_readNotifier = nullptr;
    m_writeNotifier = nullptr;
    ::close(m_fd);
    m_fd = -1;
    m_queue.clear();
    m_queued = 0;
}

} // namespace airlock::gateway
