#pragma once

#include "core/gateway/tls/tlsopenssl.h"

#include <QHash>
#include <QString>

#include <ctime>
#include <unordered_map>

namespace airlock::gateway {

using SslSessionPtr = std::unique_ptr<SSL_SESSION, OpenSslDeleter<SSL_SESSION, SSL_SESSION_free>>;

/// The upstream TLS sessions the gateway may resume (docs/tls.md, "Upstream"), one per exact
/// upstream name and port: a session is only ever offered to the name and port whose verified
/// handshake produced it, so one name's session is never offered to another name (a session
/// carries the verification result of its first handshake; resuming it elsewhere would skip
/// that name's verification). Holds the latest session of each key; at most `capacity` keys,
/// the least recently stored dropped first; an expired session (its own lifetime, RFC 8446
/// §4.6.1 / RFC 5077) is dropped when looked up. Not thread-safe; one per TlsUpstreamContext.
class UpstreamSessionCache final
{
public:
    static constexpr qsizetype kCapacity = 256;

    explicit UpstreamSessionCache(qsizetype capacity = kCapacity);

    /// Stores `session` for `name`:`port` (takes its own reference), replacing what the key
    /// held. A session that is not resumable (SSL_SESSION_is_resumable) is not stored.
    void put(const QString &name, quint16 port, SSL_SESSION *session);
    /// The session stored for exactly `name`:`port` (a reference for the caller), or null when
    /// there is none or it expired by `now` (seconds since the epoch; then it is dropped).
    SslSessionPtr find(const QString &name, quint16 port, std::time_t now = std::time(nullptr));
    /// Drops the session of `name`:`port` (its resumption failed).
    void remove(const QString &name, quint16 port);
    qsizetype size() const { return qsizetype(m_entries.size()); }

private:
    struct Key
    {
        QString name;
        quint16 port = 0;
        friend bool operator==(const Key &, const Key &) = default;
    };
    struct KeyHash
    {
        size_t operator()(const Key &key) const noexcept
        {
            return qHashMulti(0, key.name, key.port);
        }
    };
    struct Entry
    {
        SslSessionPtr session;
        quint64 stamp = 0; ///< when it was stored (a counter), for eviction
    };

    qsizetype m_capacity;
    quint64 m_clock = 0;
    std::unordered_map<Key, Entry, KeyHash> m_entries; ///< move-only values: not a QHash
};

} // namespace airlock::gateway
