#pragma once

#include <QHostAddress>

#include <optional>

namespace airlock::gateway {

/// The addresses of the network namespace the gateway runs in: every address and broadcast
/// address of its interfaces, read with getifaddrs(3) on each call (so a tap or address added
/// a moment ago counts at once). The gateway refuses them as upstream destinations: a name
/// whose DNS answers the host's own address would otherwise reach the host's services, which
/// the sandbox's table keeps from the guest (docs/redteam-cases.md F4 and E6;
/// docs/reviews/2026-12-01-gateway-round3.md#f1).
class HostAddresses final
{
public:
    /// The host address equal to `address`, or to the IPv4 address an IPv6 address embeds
    /// (RefusedRanges::embeddedIPv4); std::nullopt when it is none of them. When getifaddrs(3)
    /// fails the answer is `address` itself: refusing is the safe side.
    static std::optional<QHostAddress> match(const QHostAddress &address);
};

} // namespace airlock::gateway
