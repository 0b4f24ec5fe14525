#include "core/gateway/dns/addressrange.h"

#include "core/gateway/dns/hostaddresses.h"

#include <arpa/inet.h>

#include <cstring>

namespace airlock::gateway {

namespace {

bool isDecimal(QStringView text)
{
    if (text.isEmpty() || text.size() > 3)
        return false;
    for (QChar c : text) {
        if (c < u'0' || c > u'9')
            return false;
    }
    return text.size() == 1 || text.front() != u'0';
}

bool hostBitsZero(const std::array<quint8, 16> &bytes, int totalBits, int prefixLength)
{
    for (int bit = prefixLength; bit < totalBits; ++bit) {
        if (bytes[bit / 8] & (0x80 >> (bit % 8)))
            return false;
    }
    return true;
}

void clearHostBits(std::array<quint8, 16> &bytes, int totalBits, int prefixLength)
{
    for (int bit = prefixLength; bit < totalBits; ++bit)
        bytes[bit / 8] &= quint8(~(0x80 >> (bit % 8)));
}

bool prefixEquals(const std::array<quint8, 16> &a, const std::array<quint8, 16> &b,
                  int prefixLength)
{
    const int whole = prefixLength / 8;
    if (std::memcmp(a.data(), b.data(), whole) != 0)
        return false;
    const int rest = prefixLength % 8;
    if (rest == 0)
        return true;
    const quint8 mask = quint8(0xff << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

// Bytes of an IPv4 or IPv6 QHostAddress; false for other protocols.
bool addressBytes(const QHostAddress &address, std::array<quint8, 16> &bytes, bool &ipv4)
{
    bytes.fill(0);
    if (address.protocol() == QAbstractSocket::IPv4Protocol) {
        const quint32 v4 = address.toIPv4Address();
        bytes[0] = quint8(v4 >> 24);
        bytes[1] = quint8(v4 >> 16);
        bytes[2] = quint8(v4 >> 8);
        bytes[3] = quint8(v4);
        ipv4 = true;
        return true;
    }
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        const Q_IPV6ADDR v6 = address.toIPv6Address();
        std::memcpy(bytes.data(), v6.c, 16);
        ipv4 = false;
        return true;
    }
    return false;
}

AddressRange must(Result<AddressRange> range)
{
    Q_ASSERT(range.has_value());
    return *range;
}

} // namespace

Result<AddressRange> AddressRange::parse(QStringView text)
{
    const qsizetype slash = text.indexOf(u'/');
    const QStringView addressText = slash < 0 ? text : text.first(slash);
    if (addressText.isEmpty() || addressText.size() > 45)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("'%1' is not an IP address").arg(addressText));
    for (QChar c : addressText) {
        if (c.unicode() > 0x7e || c.unicode() < 0x21)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("'%1' is not an IP address").arg(addressText));
    }
    const QByteArray latin = addressText.toLatin1();
    AddressRange range;
    if (inet_pton(AF_INET, latin.constData(), range.m_bytes.data()) == 1) {
        range.m_ipv4 = true;
    } else if (inet_pton(AF_INET6, latin.constData(), range.m_bytes.data()) == 1) {
        range.m_ipv4 = false;
    } else {
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("'%1' is not an IP address").arg(addressText));
    }
    const int totalBits = range.m_ipv4 ? 32 : 128;
    range.m_prefixLength = totalBits;
    if (slash >= 0) {
        const QStringView lengthText = text.sliced(slash + 1);
        if (!isDecimal(lengthText) || lengthText.toInt() > totalBits)
            return fail(
                ErrorKind::InvalidParams,
                QStringLiteral("prefix length '%1' is not 0..%2").arg(lengthText).arg(totalBits));
        range.m_prefixLength = lengthText.toInt();
    }
    if (!hostBitsZero(range.m_bytes, totalBits, range.m_prefixLength))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("'%1' has bits set after the prefix length").arg(text));
    return range;
}

Result<AddressRange> AddressRange::fromAddress(const QHostAddress &address, int prefixLength)
{
    AddressRange range;
    if (!addressBytes(address, range.m_bytes, range.m_ipv4))
        return fail(ErrorKind::InvalidParams, QStringLiteral("not an IPv4 or IPv6 address"));
    const int totalBits = range.m_ipv4 ? 32 : 128;
    if (prefixLength < 0 || prefixLength > totalBits)
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("prefix length %1 is not 0..%2").arg(prefixLength).arg(totalBits));
    range.m_prefixLength = prefixLength;
    clearHostBits(range.m_bytes, totalBits, prefixLength);
    return range;
}

QHostAddress AddressRange::network() const
{
    if (m_ipv4)
        return QHostAddress(quint32(m_bytes[0]) << 24 | quint32(m_bytes[1]) << 16
                            | quint32(m_bytes[2]) << 8 | quint32(m_bytes[3]));
    return QHostAddress(m_bytes.data());
}

bool AddressRange::contains(const QHostAddress &address) const
{
    std::array<quint8, 16> bytes;
    bool ipv4 = false;
    if (!addressBytes(address, bytes, ipv4) || ipv4 != m_ipv4)
        return false;
    return prefixEquals(bytes, m_bytes, m_prefixLength);
}

QString AddressRange::toString() const
{
    return network().toString() + u'/' + QString::number(m_prefixLength);
}

RefusedRanges RefusedRanges::defaults()
{
    static const char *const kDefaults[] = {
        // IPv4 special-purpose (RFC 6890 and successors).
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "255.255.255.255/32",
        // Cloud metadata endpoints (docs/redteam-cases.md F3); the link-local ones are also in
        // 169.254/16.
        "169.254.169.254/32",
        "169.254.170.2/32",
        "100.100.100.200/32",
        "fd00:ec2::254/128",
        // IPv6 special-purpose (RFC 6890, RFC 4291).
        "::/128",
        "::1/128",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
        "64:ff9b:1::/48",
        "100::/64",
    };
    RefusedRanges ranges;
    for (const char *text : kDefaults)
        ranges.add(must(AddressRange::parse(QString::fromLatin1(text))));
    return ranges;
}

Result<RefusedRanges> RefusedRanges::fromStrings(const QStringList &texts)
{
    RefusedRanges ranges;
    for (qsizetype i = 0; i < texts.size(); ++i) {
        auto range = AddressRange::parse(texts.at(i));
        if (!range)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("range %1: %2").arg(i).arg(range.error().message));
        ranges.add(*range);
    }
    return ranges;
}

void RefusedRanges::add(const AddressRange &range)
{
    if (!m_ranges.contains(range))
        m_ranges.append(range);
}

std::optional<QHostAddress> RefusedRanges::embeddedIPv4(const QHostAddress &address)
{
    if (address.protocol() != QAbstractSocket::IPv6Protocol)
        return std::nullopt;
    const Q_IPV6ADDR v6 = address.toIPv6Address();
    const auto word = [&](int at) {
        return quint32(v6.c[at]) << 24 | quint32(v6.c[at + 1]) << 16 | quint32(v6.c[at + 2]) << 8
            | quint32(v6.c[at + 3]);
    };
    const auto zero = [&](int from, int to) {
        for (int i = from; i < to; ++i) {
            if (v6.c[i] != 0)
                return false;
        }
        return true;
    };
    // v4-mapped ::ffff:a.b.c.d
    if (zero(0, 10) && v6.c[10] == 0xff && v6.c[11] == 0xff)
        return QHostAddress(word(12));
    // v4-compatible ::a.b.c.d (deprecated); :: and ::1 are themselves, not IPv4.
    if (zero(0, 12) && word(12) > 1)
        return QHostAddress(word(12));
    // NAT64 well-known prefix 64:ff9b::/96
    if (v6.c[0] == 0x00 && v6.c[1] == 0x64 && v6.c[2] == 0xff && v6.c[3] == 0x9b && zero(4, 12))
        return QHostAddress(word(12));
    // 6to4 2002:AABB:CCDD::/48
    if (v6.c[0] == 0x20 && v6.c[1] == 0x02)
        return QHostAddress(word(2));
    return std::nullopt;
}

std::optional<AddressRange> RefusedRanges::match(const QHostAddress &address) const
{
    if (address.protocol() != QAbstractSocket::IPv4Protocol
        && address.protocol() != QAbstractSocket::IPv6Protocol)
        return must(AddressRange::parse(QStringLiteral("0.0.0.0/0")));
    for (const AddressRange &range : m_ranges) {
        if (range.contains(address))
            return range;
    }
    if (const auto v4 = embeddedIPv4(address)) {
        for (const AddressRange &range : m_ranges) {
            if (range.contains(*v4))
                return range;
        }
    }
    if (m_refuseHostAddresses) {
        if (const auto own = HostAddresses::match(address))
            return AddressRange::fromAddress(
                       *own, own->protocol() == QAbstractSocket::IPv4Protocol ? 32 : 128)
                .value_or(must(AddressRange::parse(QStringLiteral("0.0.0.0/0"))));
    }
    return std::nullopt;
}

} // namespace airlock::gateway
