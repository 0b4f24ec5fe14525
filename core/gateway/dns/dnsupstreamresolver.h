#pragma once

#include "core/gateway/dns/addressrange.h"
#include "core/gateway/dns/dnsdecision.h"

#include <QByteArrayView>
#include <QDeadlineTimer>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>
#include <optional>

class QTcpSocket;
class QTimer;
class QUdpSocket;

namespace airlock::gateway {

/// Where and how the gateway resolves allowed names (the "upstream" resolver).
struct DnsUpstreamConfig
{
    QHostAddress address; ///< the configured resolver (tests: a loopback test server)
    quint16 port = 53;
    int timeoutMs = 2000; ///< per resolution, UDP and TCP fallback together
    RefusedRanges refused = RefusedRanges::defaults(); ///< answers into these are refused (E6)
    int maxPending = 256; ///< resolutions in flight at once; more fail with "overloaded"
    int maxCacheEntries = 4096; ///< the cache is emptied of expired entries, then cleared, above
};

/// How one datagram or TCP message from the upstream was judged (interpretAnswer).
struct DnsUpstreamAnswer
{
    enum class Kind {
        Mismatch, ///< not the answer to our query (id, QR, question): ignored, keep waiting
        Truncated, ///< TC set: retry over TCP (RFC 1035 §4.2.1, RFC 7766)
        Final, ///< `resolution` is the result
    };
    Kind kind = Kind::Mismatch;
    DnsResolution resolution = std::unexpected(DnsFailure {});
    quint32 ttl = 0; ///< seconds, already bounded by boundTtl()
};

/// Resolves allowed names through one configured resolver over UDP, with TCP fallback when
/// the answer is truncated (docs/redteam-cases.md principle 4, E5, E6). Asynchronous on the Qt
/// event loop: the gateway keeps serving while resolutions are in flight.
///
/// Each resolution builds its query with ldns (RD set, type A, class IN), a random 16-bit id
/// from QRandomGenerator::system() and a fresh UDP socket on a kernel-chosen ephemeral port.
/// Only a datagram from exactly the configured address and port, on the socket that sent the
/// query, carrying QR, the same id and the same question (name compared case-insensitively,
/// type A, class IN) is read as the answer; every other datagram is counted in
/// ignoredDatagrams() and the resolver keeps waiting (E5: never learn from a packet that
/// arrived otherwise). An accepted answer is refused as a whole (private_destination) when any
/// A or AAAA record in its answer section points into the refused ranges (E6). Otherwise the A
/// records of the name (following CNAMEs inside the answer, at most 8) are the result, cached
/// for the smallest TTL involved bounded to [kMinTtl, kMaxTtl]. Failures are not cached.
/// Concurrent resolutions of one name share one query. Not thread-safe.
class DnsUpstreamResolver final : public QObject
{
    Q_OBJECT
public:
    static constexpr quint32 kMinTtl = 5; ///< seconds
    static constexpr quint32 kMaxTtl = 300; ///< seconds

    /// Called exactly once per resolve(), possibly before resolve() returns (cache hit).
    using Callback = std::function<void(const DnsResolution &)>;

    explicit DnsUpstreamResolver(DnsUpstreamConfig config, QObject *parent = nullptr);
    ~DnsUpstreamResolver() override;

    /// Resolves canonical `name` (already allowed by the policy; callers must not pass others).
    void resolve(const QString &name, Callback done);
    /// The cached, unexpired addresses of `name` (what the gateway dials), if any.
    std::optional<QList<QHostAddress>> cached(const QString &name) const;
    /// Adds a refused range at run time (the sandbox link prefix).
    void addRefusedRange(const AddressRange &range) { m_config.refused.add(range); }
    const DnsUpstreamConfig &config() const { return m_config; }
    /// Datagrams received on query sockets and not accepted as an answer (wrong source,
    /// id, question or unparseable).
    quint64 ignoredDatagrams() const { return m_ignored; }
    /// Resolutions in flight.
    qsizetype pendingCount() const { return m_pending.size(); }

    /// Clamps a TTL in seconds to [kMinTtl, kMaxTtl].
    static quint32 boundTtl(quint32 ttl);
    /// Builds the wire query for `name` (type A, class IN, RD) with `id`; empty on failure.
    static QByteArray buildQuery(const QString &name, quint16 id);
    /// Judges one message from the upstream as the answer to the query (`id`, `name`); pure.
    static DnsUpstreamAnswer interpretAnswer(QByteArrayView wire, quint16 id, const QString &name,
                                             const RefusedRanges &refused);

private:
    struct Pending;
    struct CacheEntry
    {
        QList<QHostAddress> addresses;
        QDeadlineTimer expiry;
    };

    void onUdpReadyRead(const QString &name);
    void startTcp(const QString &name);
    void onTcpReadyRead(const QString &name);
    void accept(const QString &name, const DnsUpstreamAnswer &answer);
    void complete(const QString &name, const DnsResolution &resolution);

    DnsUpstreamConfig m_config;
    QHash<QString, std::shared_ptr<Pending>> m_pending;
    QHash<QString, CacheEntry> m_cache;
    quint64 m_ignored = 0;
};

} // namespace airlock::gateway
