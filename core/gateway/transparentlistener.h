#pragma once

#include "core/gateway/gatewayconfig.h"
#include "core/model/error.h"

#include <QHostAddress>
#include <QObject>

class QSocketNotifier;
class QTimer;

namespace airlock::gateway {

/// Where the guest meant to connect: the destination before nftables redirected the
/// connection to the gateway's listener.
struct OriginalDestination
{
    QHostAddress address;
    quint16 port = 0;
    /// True when read with getsockopt(SOL_IP, SO_ORIGINAL_DST) (a NAT-redirected connection).
    /// False when the connection was not redirected (conntrack knows no NAT for it): then the
    /// listener's own local address and port stand in (docs/gateway.md, "Original
    /// destination"), as if the guest had dialed the gateway itself.
    bool redirected = false;
};

/// The gateway's transparent TCP listener (IPv4): every guest TCP connection arrives here,
/// redirected by the sandbox's nftables table. Accepts without blocking on the Qt event loop and
/// hands each connection over as a non-blocking fd with its original destination.
class TransparentListener final : public QObject
{
    Q_OBJECT
public:
    explicit TransparentListener(QObject *parent = nullptr);
    ~TransparentListener() override;

    /// Serves an inherited, bound stream socket (listen() is called on it if needed).
    Result<void> adopt(int fd);
    /// Binds and listens on `address` itself (tests, no airlockd).
    Result<void> bind(const SocketAddress &address);
    /// The bound port, 0 before adopt()/bind().
    quint16 port() const { return m_port; }

    /// The original destination of accepted socket `fd` (see OriginalDestination).
    static OriginalDestination originalDestination(int fd);

Q_SIGNALS:
    /// A new connection; the receiver owns `fd` (non-blocking, close-on-exec).
    void accepted(int fd, const airlock::gateway::OriginalDestination &destination);

private:
    Result<void> start(int fd);
    void onReadable();

    int m_fd = -1;
    quint16 m_port = 0;
    QSocketNotifier *m_notifier = nullptr;
    QTimer *m_backoff = nullptr;
};

} // namespace airlock::gateway
