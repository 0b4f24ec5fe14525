#include "core/gateway/dns/dnsnamemapping.h"

namespace airlock::gateway {

DnsNameMapping::DnsNameMapping(const AddressRange &pool) : m_pool(pool)
{
    const quint32 network = pool.network().toIPv4Address();
    const quint32 size = quint32(1) << (32 - pool.prefixLength());
    m_first = network + 1;
    m_last = network + size - 2;
    m_next = m_first;
}

Result<DnsNameMapping> DnsNameMapping::create(const AddressRange &pool)
{
    if (!pool.isIPv4() || pool.prefixLength() < 8 || pool.prefixLength() > 30)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("mapping pool %1 is not an IPv4 prefix of length 8..30")
                        .arg(pool.toString()));
    return DnsNameMapping(pool);
}

Result<QHostAddress> DnsNameMapping::addressFor(const QString &name)
{
    if (const auto it = m_byName.constFind(name); it != m_byName.constEnd())
        return QHostAddress(*it);
    if (m_next > m_last || m_next < m_first)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("mapping_exhausted: pool %1 has no free address")
                        .arg(m_pool.toString()));
    const quint32 address = m_next++;
    m_byName.insert(name, address);
    m_byAddress.insert(address, name);
    return QHostAddress(address);
}

std::optional<QHostAddress> DnsNameMapping::lookup(const QString &name) const
{
    if (const auto it = m_byName.constFind(name); it != m_byName.constEnd())
        return QHostAddress(*it);
    return std::nullopt;
}

std::optional<QString> DnsNameMapping::nameFor(const QHostAddress &address) const
{
    bool ok = false;
    const quint32 v4 = address.toIPv4Address(&ok);
    if (!ok)
        return std::nullopt;
    if (const auto it = m_byAddress.constFind(v4); it != m_byAddress.constEnd())
        return *it;
    return std::nullopt;
}

} // namespace airlock::gateway
