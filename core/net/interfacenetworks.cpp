#include "core/net/interfacenetworks.h"

#include <bit>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <memory>

namespace airlock {

namespace {

struct IfaddrsDeleter
{
    void operator()(ifaddrs *list) const { freeifaddrs(list); }
};

int prefixOf(const sockaddr *netmask)
{
    if (!netmask || netmask->sa_family != AF_INET)
        return 32;
    const quint32 mask = ntohl(reinterpret_cast<const sockaddr_in *>(netmask)->sin_addr.s_addr);
    return std::popcount(mask);
}

} // namespace

QList<InterfaceNetwork> InterfaceNetworks::ipv4()
{
    ifaddrs *raw = nullptr;
    if (getifaddrs(&raw) != 0)
        return {};
    const std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
    QList<InterfaceNetwork> networks;
    for (const ifaddrs *entry = list.get(); entry; entry = entry->ifa_next) {
        if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET)
            continue;
        networks.append({QString::fromLocal8Bit(entry->ifa_name), QHostAddress(entry->ifa_addr),
                         prefixOf(entry->ifa_netmask), (entry->ifa_flags & IFF_UP) != 0});
    }
    return networks;
}

const InterfaceNetwork *InterfaceNetworks::overlapping(const QList<InterfaceNetwork> &networks,
                                                       const QHostAddress &network,
                                                       int prefixLength)
{
    for (const InterfaceNetwork &candidate : networks) {
        // Two prefixes overlap when the shorter one contains the other's address.
        const int shorter = qMin(prefixLength, candidate.prefixLength);
        if (candidate.address.isInSubnet(network, shorter))
            return &candidate;
    }
    return nullptr;
}

} // namespace airlock
