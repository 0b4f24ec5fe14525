#pragma once

#include "core/model/error.h"

#include <QHostAddress>
#include <QList>
#include <QString>
#include <QStringList>

#include <array>
#include <optional>

namespace airlock::gateway {

/// An IPv4 or IPv6 prefix ("10.0.0.0/8", "fe80::/10"). Immutable value; the host bits of the
/// network address are always zero.
class AddressRange final
{
public:
    /// Parses "a.b.c.d/n" (n 0..32) or an IPv6 address with "/n" (n 0..128). Without "/n" the
    /// range is the single address (/32 or /128). Strict, nothing is repaired: the address must
    /// be what inet_pton(3) accepts (dotted-quad IPv4 without leading zeros, IPv6 without a
    /// zone id), the length decimal without a sign or leading zero, and the host bits zero
    /// ("10.1.0.0/8" is rejected, not rounded). Errors: InvalidParams naming the problem.
    static Result<AddressRange> parse(QStringView text);
    /// The range of `address` (IPv4 or IPv6; any scope id is dropped) with `prefixLength`
    /// bits; the host bits are cleared. InvalidParams for other protocols or a length out of
    /// range.
    static Result<AddressRange> fromAddress(const QHostAddress &address, int prefixLength);

    /// The network address (host bits zero).
    QHostAddress network() const;
    /// 0..32 for IPv4, 0..128 for IPv6.
    int prefixLength() const { return m_prefixLength; }
    bool isIPv4() const { return m_ipv4; }
    /// True when `address` has the same family and its first prefixLength() bits equal the
    /// network's. No translation between families here (see RefusedRanges::match for that):
    /// "::ffff:127.0.0.1" is not in 127.0.0.0/8 by this test.
    bool contains(const QHostAddress &address) const;
    /// "a.b.c.d/n" or "x::/n", the form parse() reads back.
    QString toString() const;

    friend bool operator==(const AddressRange &, const AddressRange &) = default;

private:
    AddressRange() = default;

    std::array<quint8, 16> m_bytes {}; ///< network address; IPv4 uses the first 4 bytes
    int m_prefixLength = 0;
    bool m_ipv4 = true;
};

/// The destination ranges the gateway's DNS refuses to hand out or dial (docs/redteam-cases.md
/// principle 4, E6; F3 for the metadata addresses). Configuration with a safe default (defaults());
/// the sandbox link prefix is added at run time with add(). docs/dns.md lists the default.
class RefusedRanges final
{
public:
    /// The default list: 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16,
    /// 172.16.0.0/12, 192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/4, 240.0.0.0/4,
    /// 255.255.255.255/32 (RFC 6890 special-purpose IPv4), the metadata addresses
    /// 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254, and for IPv6 ::/128,
    /// ::1/128, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 64:ff9b:1::/48 (RFC 8215 local NAT64),
    /// 100::/64 (discard). Addresses that embed an IPv4 address are judged by it (see match()).
    static RefusedRanges defaults();
    /// An empty list: refuses nothing. Use defaults() unless a test needs otherwise.
    static RefusedRanges none() { return RefusedRanges(); }
    /// Parses a configured list of range strings (AddressRange::parse); the error names the
    /// 0-based index: "range N: why".
    static Result<RefusedRanges> fromStrings(const QStringList &ranges);

    /// Adds a range, e.g. the sandbox link prefix once the helper has allocated it.
    void add(const AddressRange &range);
    /// Also refuse the addresses of the namespace's own interfaces (HostAddresses), as the
    /// single-address range of the one matched. Off in a fresh list; the gateway turns it on
    /// unless its configuration says `refuseHostAddresses: false` (tests with loopback
    /// upstreams).
    void setRefuseHostAddresses(bool refuse) { m_refuseHostAddresses = refuse; }
    bool refusesHostAddresses() const { return m_refuseHostAddresses; }
    const QList<AddressRange> &ranges() const { return m_ranges; }

    /// The first range that refuses `address`, or std::nullopt. An IPv6 address that embeds an
    /// IPv4 address is refused when either the IPv6 address itself or the embedded IPv4
    /// address is refused: v4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2), v4-compatible ::/96
    /// (RFC 4291 §2.5.5.1, except :: and ::1 which are matched as themselves), NAT64
    /// 64:ff9b::/96 (RFC 6052) and 6to4 2002::/16 (RFC 3056, bits 16..47). Other protocols
    /// (QHostAddress::Null, Any) are refused with a /0 range of the IPv4 family.
    std::optional<AddressRange> match(const QHostAddress &address) const;
    /// match(address).has_value().
    bool contains(const QHostAddress &address) const { return match(address).has_value(); }

    /// The IPv4 address embedded in an IPv6 address as described for match(), if any.
    static std::optional<QHostAddress> embeddedIPv4(const QHostAddress &address);

private:
    QList<AddressRange> m_ranges;
    bool m_refuseHostAddresses = false;
};

} // namespace airlock::gateway
