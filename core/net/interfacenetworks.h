#pragma once

#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QString>

namespace airlock {

/// One IPv4 network assigned to an interface of this network namespace.
struct InterfaceNetwork
{
    QString interface; ///< e.g. "eth0", "al-3f2a…"
    QHostAddress address; ///< the interface's own address
    int prefixLength = 32;
    bool up = false; ///< IFF_UP: a tap being configured is still down
};

/// The IPv4 networks of this namespace's interfaces, read with getifaddrs(3) on each call, so
/// that airlockd never hands a sandbox a link another helper (or the host's own network)
/// already uses: two helpers on one host with the default pool would otherwise both give their
/// first sandbox 100.96.0.0/30 and the second fails to bind its gateway (issue 16, section 4).
class InterfaceNetworks final
{
public:
    /// Every IPv4 address with its prefix; empty when getifaddrs(3) fails.
    static QList<InterfaceNetwork> ipv4();
    /// The first network of `networks` that overlaps `network`/`prefixLength`, or nullptr.
    static const InterfaceNetwork *overlapping(const QList<InterfaceNetwork> &networks,
                                               const QHostAddress &network, int prefixLength);
};

} // namespace airlock
