#include "core/gateway/tls/upstreamsessioncache.h"

namespace airlock::gateway {

UpstreamSessionCache::UpstreamSessionCache(qsizetype capacity)
    : m_capacity(qMax<qsizetype>(1, capacity))
{ }

void UpstreamSessionCache::put(const QString &name, quint16 port, SSL_SESSION *session)
{
    if (!session || SSL_SESSION_is_resumable(session) != 1)
        return;
    Key key {name, port};
    if (!m_entries.contains(key) && qsizetype(m_entries.size()) >= m_capacity) {
        // Full: the key stored longest ago goes (a linear scan, only when full and a new
        // name arrives; the cache is small).
        auto oldest = m_entries.begin();
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
            if (it->second.stamp < oldest->second.stamp)
                oldest = it;
        }
        m_entries.erase(oldest);
    }
    SSL_SESSION_up_ref(session);
    Entry &entry = m_entries[std::move(key)];
    entry.session.reset(session);
    entry.stamp = ++m_clock;
}

SslSessionPtr UpstreamSessionCache::find(const QString &name, quint16 port, std::time_t now)
{
    const auto it = m_entries.find(Key {name, port});
    if (it == m_entries.end())
        return {};
    SSL_SESSION *session = it->second.session.get();
    const std::time_t born = std::time_t(SSL_SESSION_get_time(session));
    const std::time_t lifetime = std::time_t(SSL_SESSION_get_timeout(session));
    if (now < born || now - born >= lifetime) {
        m_entries.erase(it);
        return {};
    }
    SSL_SESSION_up_ref(session);
    return SslSessionPtr(session);
}

void UpstreamSessionCache::remove(const QString &name, quint16 port)
{
    m_entries.erase(Key {name, port});
}

} // namespace airlock::gateway
