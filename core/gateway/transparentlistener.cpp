#include "core/gateway/transparentlistener.h"

#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimer>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::gateway {

Q_LOGGING_CATEGORY(lcListener, "airlock.gateway.listener")

namespace {

constexpr int kBacklog = 512;
constexpr int kBackoffMs = 100;

std::unexpected<Error> failErrno(const QString &what)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(std::strerror(errno))));
}

QHostAddress toAddress(const sockaddr_in &address)
{
    return QHostAddress(ntohl(address.sin_addr.s_addr));
}

} // namespace

TransparentListener::TransparentListener(QObject *parent) : QObject(parent) { }

TransparentListener::~TransparentListener()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<void> TransparentListener::adopt(int fd)
{
    int type = 0;
    socklen_t length = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("fd %1 is not a stream socket").arg(fd));
    return start(fd);
}

Result<void> TransparentListener::bind(const SocketAddress &address)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return failErrno(QStringLiteral("socket"));
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in local {};
    local.sin_family = AF_INET;
    local.sin_port = htons(address.port);
    local.sin_addr.s_addr = htonl(address.address.toIPv4Address());
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0) {
        auto error = failErrno(QStringLiteral("cannot bind %1").arg(address.toString()));
        ::close(fd);
        return error;
    }
    return start(fd);
}

Result<void> TransparentListener::start(int fd)
{
    // listen() on a listening socket only updates the backlog.
    if (::listen(fd, kBacklog) != 0)
        return failErrno(QStringLiteral("listen on fd %1").arg(fd));
    sockaddr_in local {};
    socklen_t length = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &length) != 0
        || local.sin_family != AF_INET)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("fd %1 is not an IPv4 TCP socket").arg(fd));
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    m_fd = fd;
    m_port = ntohs(local.sin_port);
    m_notifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &TransparentListener::onReadable);
    m_backoff = new QTimer(this);
    m_backoff->setSingleShot(true);
    connect(m_backoff, &QTimer::timeout, this, [this] { m_notifier->setEnabled(true); });
    return {};
}

OriginalDestination TransparentListener::originalDestination(int fd)
{
    OriginalDestination destination;
    sockaddr_in address {};
    socklen_t length = sizeof address;
    // Linux netfilter: the destination of the conntrack entry's original direction, i.e.
    // before the nat REDIRECT rule rewrote it (include/uapi/linux/netfilter_ipv4.h).
    if (::getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &address, &length) == 0
        && address.sin_family == AF_INET) {
        destination.address = toAddress(address);
        destination.port = ntohs(address.sin_port);
    }
    sockaddr_in local {};
    socklen_t localLength = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &localLength);
    const QHostAddress localAddress = toAddress(local);
    const quint16 localPort = ntohs(local.sin_port);
    if (destination.address.isNull()) {
        destination.address = localAddress;
        destination.port = localPort;
        destination.redirected = false;
    } else {
        // conntrack without a NAT binding reports the local address itself.
        destination.redirected =
            !(destination.address == localAddress && destination.port == localPort);
    }
    return destination;
}

void TransparentListener::onReadable()
{
    for (int i = 0; i < 64; ++i) {
        const int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            // EMFILE/ENFILE/ENOBUFS: the level-triggered notifier would spin; pause accepting.
            qCWarning(lcListener) << "accept failed:" << std::strerror(errno);
            m_notifier->setEnabled(false);
            m_backoff->start(kBackoffMs);
            return;
        }
        Q_EMIT accepted(fd, originalDestination(fd));
    }
}

} // namespace airlock::gateway
