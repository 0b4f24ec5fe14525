#pragma once

#include "core/gateway/dns/addressrange.h"
#include "core/model/error.h"

#include <QHash>
#include <QHostAddress>
#include <QString>

#include <optional>

namespace airlock::gateway {

/// One sandbox's name→address mapping (docs/architecture.md "Egress"; docs/redteam-cases.md
/// principle 1): every allowed name the guest resolves gets a stable synthetic IPv4 address from a
/// pool, so the guest never learns or chooses an upstream address. When the guest connects, the
/// gateway recovers the original destination and maps it back to the name with nameFor(), then
/// dials its own resolution of that name.
///
/// Addresses are handed out in order from the pool's first usable address (network + 1) to
/// the last (broadcast - 1) and are never reused while the mapping lives, so an address always
/// means the same name. Not thread-safe: one gateway event loop owns it.
class DnsNameMapping final
{
public:
    /// A mapping over an IPv4 `pool` of prefix length 8..30 (the pool must not overlap the
    /// sandbox link; the helper allocates it). InvalidParams for IPv6 or other lengths.
    static Result<DnsNameMapping> create(const AddressRange &pool);

    /// The address of canonical `name`, assigning the next free one on first use.
    /// OperationFailed ("mapping_exhausted") when the pool is full.
    Result<QHostAddress> addressFor(const QString &name);
    /// The address already assigned to `name`, without assigning.
    std::optional<QHostAddress> lookup(const QString &name) const;
    /// The name whose synthetic address is `address` (IPv4, or v4-mapped IPv6).
    std::optional<QString> nameFor(const QHostAddress &address) const;

    const AddressRange &pool() const { return m_pool; }
    /// Number of names mapped.
    qsizetype size() const { return m_byName.size(); }
    /// Number of addresses the pool can hand out.
    quint32 capacity() const { return m_last - m_first + 1; }

private:
    explicit DnsNameMapping(const AddressRange &pool);

    AddressRange m_pool;
    quint32 m_first = 0;
    quint32 m_last = 0;
    quint32 m_next = 0;
    QHash<QString, quint32> m_byName;
    QHash<quint32, QString> m_byAddress;
};

} // namespace airlock::gateway
