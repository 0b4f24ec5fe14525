#include "core/gateway/dns/hostaddresses.h"

#include "core/gateway/dns/addressrange.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>

namespace airlock::gateway {

namespace {

struct IfaddrsDeleter
{
    void operator()(ifaddrs *list) const { freeifaddrs(list); }
};

std::optional<QHostAddress> toAddress(const sockaddr *socketAddress)
{
    if (!socketAddress
        || (socketAddress->sa_family != AF_INET && socketAddress->sa_family != AF_INET6))
        return std::nullopt;
    QHostAddress address(socketAddress);
    address.setScopeId(QString());
    return address;
}

} // namespace

std::optional<QHostAddress> HostAddresses::match(const QHostAddress &address)
{
    ifaddrs *raw = nullptr;
    if (getifaddrs(&raw) != 0)
        return address;
    const std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
    QHostAddress plain = address;
    plain.setScopeId(QString());
    const std::optional<QHostAddress> embedded = RefusedRanges::embeddedIPv4(plain);
    for (const ifaddrs *entry = list.get(); entry; entry = entry->ifa_next) {
        // ifa_broadaddr shares storage with ifa_dstaddr, the peer of a point-to-point link:
        // only a broadcast address reaches this host.
        const sockaddr *broadcast =
            (entry->ifa_flags & IFF_BROADCAST) != 0 ? entry->ifa_broadaddr : nullptr;
        for (const sockaddr *candidate :
             {static_cast<const sockaddr *>(entry->ifa_addr), broadcast}) {
            const auto own = toAddress(candidate);
            if (!own)
                continue;
            if (own->isEqual(plain, QHostAddress::StrictConversion)
                || (embedded && own->isEqual(*embedded, QHostAddress::StrictConversion)))
                return *own;
        }
    }
    return std::nullopt;
}

} // namespace airlock::gateway
