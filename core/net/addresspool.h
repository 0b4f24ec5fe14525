#pragma once

#include "core/model/error.h"

#include <QHostAddress>
#include <QString>

#include <array>
#include <cstdint>
#include <optional>
#include <set>

namespace airlock {

/// One sandbox's point-to-point link: a /30 (RFC 1878 style: network, gateway, guest,
/// broadcast) or a /31 (RFC 3021: two addresses, no network or broadcast) cut from the pool,
/// and the guest's MAC address.
struct LinkAllocation
{
    /// Position of the link in the pool, from 0; what the caller stores to reserve() it again.
    quint32 index = 0;
    /// First address of the link (the /30 or /31 network).
    QHostAddress network;
    /// 30 or 31.
    int prefixLength = 30;
    /// Host side of the link: assigned to the tap device; the gateway listens here.
    QHostAddress gateway;
    /// The guest's only allowed source address.
    QHostAddress guest;
    /// Locally administered unicast MAC (IEEE 802: first octet 0x02) for the guest's virtio-net.
    std::array<quint8, 6> mac {};

    /// The MAC as "02:61:6c:xx:xx:xx" (lower-case hex, colon separated).
    QString macText() const;
    /// The gateway's netmask, e.g. 255.255.255.252 for a /30.
    QHostAddress netmask() const;
};

/// Hands out one IPv4 link per sandbox from a configured pool. The default pool is
/// 100.96.0.0/16, inside the shared address space 100.64.0.0/10 (RFC 6598): it is not used by
/// home or office LANs (RFC 1918) and only by carrier-grade NAT between an ISP and a customer
/// router, which a host rarely routes to itself; see docs/network.md.
///
/// Allocation is deterministic: allocate() always returns the lowest free index, and a
/// released index is the next one handed out. The pool stores nothing on disk; the caller
/// records LinkAllocation::index with the sandbox and calls reserve() for each stored
/// allocation when it starts. The guest MAC is 02:61:6c ("al") followed by the 24-bit index.
class AddressPool
{
public:
    /// The default pool (RFC 6598 shared address space, first /16 above 100.96.0.0).
    static constexpr QStringView DefaultPool = u"100.96.0.0/16";

    /// A pool from "a.b.c.d/len". The address must be the network address (host bits zero);
    /// len from 8 to linkPrefix; linkPrefix 30 or 31. The pool must not overlap 0.0.0.0/8,
    /// 127.0.0.0/8, 169.254.0.0/16 (RFC 3927), 224.0.0.0/3 or the metadata address
    /// 100.100.100.200. Errors: InvalidParams naming the problem.
    static Result<AddressPool> create(QStringView cidr = DefaultPool, int linkPrefix = 30);

    /// The lowest free link, now marked allocated. Errors: Busy when the pool is exhausted.
    Result<LinkAllocation> allocate();
    /// Marks a stored allocation as taken again (helper start). Errors: InvalidParams for an
    /// index outside the pool, AlreadyExists if it is already allocated.
    Result<LinkAllocation> reserve(quint32 index);
    /// Frees a link; freeing a free or out-of-range index does nothing.
    void release(quint32 index);

    /// The link at index without allocating it. Precondition: index < capacity().
    LinkAllocation linkAt(quint32 index) const;
    /// Index of the link containing `address`; std::nullopt outside the pool.
    std::optional<quint32> indexOf(const QHostAddress &address) const;
    /// Number of links the pool holds: 2^(linkPrefix - pool prefix).
    quint32 capacity() const { return m_capacity; }
    /// Number of links currently allocated.
    qsizetype allocatedCount() const { return qsizetype(m_allocated.size()); }
    /// True if index is allocated.
    bool isAllocated(quint32 index) const { return m_allocated.contains(index); }
    /// The pool as "a.b.c.d/len".
    QString cidr() const;
    /// 30 or 31.
    int linkPrefix() const { return m_linkPrefix; }

private:
    AddressPool(quint32 base, int prefix, int linkPrefix);

    quint32 m_base = 0;
    int m_prefix = 16;
    int m_linkPrefix = 30;
    quint32 m_capacity = 0;
    std::set<quint32> m_allocated;
};

} // namespace airlock
