#include "core/net/addresspool.h"

#include <QStringList>

namespace airlock {

namespace {

/// The guest MAC prefix: locally administered (bit 1 of the first octet), unicast (bit 0
/// clear), then "al" (0x61 0x6c) so the addresses are recognisable in captures.
constexpr std::array<quint8, 3> MacPrefix {0x02, 0x61, 0x6c};

struct Range
{
    quint32 first;
    int prefix;
    const char16_t *why;
};

/// Ranges a pool may not touch (RFC 6890 special-purpose blocks a link must never use, and
/// the metadata address of docs/redteam-cases.md F3).
constexpr Range Forbidden[] = {
    {0x00000000u, 8, u"0.0.0.0/8 (this network, RFC 6890)"},
    {0x7f000000u, 8, u"127.0.0.0/8 (loopback)"},
    {0xa9fe0000u, 16, u"169.254.0.0/16 (link-local and metadata, RFC 3927)"},
    {0xe0000000u, 3, u"224.0.0.0/3 (multicast and reserved)"},
    {0x646464c8u, 32, u"100.100.100.200 (a cloud metadata address)"},
};

quint32 maskOf(int prefix)
{
    return prefix == 0 ? 0u : ~quint32(0) << (32 - prefix);
}

bool overlaps(quint32 a, int aPrefix, quint32 b, int bPrefix)
{
    const quint32 mask = maskOf(std::min(aPrefix, bPrefix));
    return (a & mask) == (b & mask);
}

} // namespace

QString LinkAllocation::macText() const
{
    QStringList parts;
    for (quint8 byte : mac)
        parts << QStringLiteral("%1").arg(byte, 2, 16, QLatin1Char('0'));
    return parts.join(u':');
}

QHostAddress LinkAllocation::netmask() const
{
    return QHostAddress(maskOf(prefixLength));
}

AddressPool::AddressPool(quint32 base, int prefix, int linkPrefix)
    : m_base(base)
    , m_prefix(prefix)
    , m_linkPrefix(linkPrefix)
    , m_capacity(quint32(1) << (linkPrefix - prefix))
{ }

Result<AddressPool> AddressPool::create(QStringView cidr, int linkPrefix)
{
    if (linkPrefix != 30 && linkPrefix != 31)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("link prefix must be 30 or 31, not %1").arg(linkPrefix));
    const auto [address, prefix] = QHostAddress::parseSubnet(cidr.toString());
    if (address.protocol() != QAbstractSocket::IPv4Protocol || prefix < 0 || !cidr.contains(u'/'))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("pool %1 is not an IPv4 a.b.c.d/len").arg(cidr));
    if (prefix < 8 || prefix > linkPrefix)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("pool %1: prefix length must be from 8 to %2")
                        .arg(cidr)
                        .arg(linkPrefix));
    // parseSubnet() masks the host bits itself; insist that the caller wrote the network.
    const QString written = cidr.left(cidr.indexOf(u'/')).toString();
    if (QHostAddress(written) != address)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("pool %1 has host bits set (network is %2/%3)")
                        .arg(cidr, address.toString())
                        .arg(prefix));
    const quint32 base = address.toIPv4Address();
    for (const Range &range : Forbidden) {
        if (overlaps(base, prefix, range.first, range.prefix))
            return fail(
                ErrorKind::InvalidParams,
                QStringLiteral("pool %1 overlaps %2").arg(cidr, QString::fromUtf16(range.why)));
    }
    return AddressPool(base, prefix, linkPrefix);
}

LinkAllocation AddressPool::linkAt(quint32 index) const
{
    Q_ASSERT(index < m_capacity);
    LinkAllocation link;
    link.index = index;
    link.prefixLength = m_linkPrefix;
    const quint32 network = m_base + (index << (32 - m_linkPrefix));
    link.network = QHostAddress(network);
    if (m_linkPrefix == 31) {
        link.gateway = QHostAddress(network);
        link.guest = QHostAddress(network + 1);
    } else {
        link.gateway = QHostAddress(network + 1);
        link.guest = QHostAddress(network + 2);
    }
    link.mac = {MacPrefix[0],        MacPrefix[1],       MacPrefix[2],
                quint8(index >> 16), quint8(index >> 8), quint8(index)};
    return link;
}

Result<LinkAllocation> AddressPool::allocate()
{
    quint32 index = 0;
    for (quint32 taken : m_allocated) {
        if (taken != index)
            break;
        ++index;
    }
    if (index >= m_capacity)
        return fail(
            ErrorKind::Busy,
            QStringLiteral("address pool %1 is exhausted (%2 links)").arg(cidr()).arg(m_capacity));
    m_allocated.insert(index);
    return linkAt(index);
}

Result<LinkAllocation> AddressPool::reserve(quint32 index)
{
    if (index >= m_capacity)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("link %1 is outside pool %2").arg(index).arg(cidr()));
    if (!m_allocated.insert(index).second)
        return fail(
            ErrorKind::AlreadyExists,
            QStringLiteral("link %1 of pool %2 is already allocated").arg(index).arg(cidr()));
    return linkAt(index);
}

void AddressPool::release(quint32 index)
{
    m_allocated.erase(index);
}

std::optional<quint32> AddressPool::indexOf(const QHostAddress &address) const
{
    bool ok = false;
    const quint32 value = address.toIPv4Address(&ok);
    if (!ok || !overlaps(value, m_prefix, m_base, m_prefix))
        return std::nullopt;
    return (value - m_base) >> (32 - m_linkPrefix);
}

QString AddressPool::cidr() const
{
    return QStringLiteral("%1/%2").arg(QHostAddress(m_base).toString()).arg(m_prefix);
}

} // namespace airlock
