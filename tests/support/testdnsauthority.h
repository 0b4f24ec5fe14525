#pragma once

#include <QHash>
#include <QHostAddress>
#include <QString>
#include <QStringList>

#include <atomic>
#include <mutex>
#include <thread>

namespace airlock::test {

/// The test's authoritative DNS server for *.test (ldns wire format), listening on UDP and TCP
/// inside a network namespace: the gateway's `upstreamDns` in the red-team topology. A hostile
/// authority on purpose: every record of a name is put in the answer section whatever type
/// was asked (so an A question may come back with AAAA ::1, docs/redteam-cases.md E6). Names
/// without records get NXDOMAIN. Every question is logged (docs/redteam-cases.md E1: "the test DNS
/// server for evil.test receives nothing").
class TestDnsAuthority final
{
public:
    /// One logged question.
    struct Query
    {
        QString name; ///< as it arrived, lower-cased, without the trailing dot
        quint16 type = 0;
        bool tcp = false;
        QHostAddress from;
        quint16 fromPort = 0;
        quint16 id = 0;
    };

    explicit TestDnsAuthority(int nsFd);
    ~TestDnsAuthority();
    TestDnsAuthority(const TestDnsAuthority &) = delete;
    TestDnsAuthority &operator=(const TestDnsAuthority &) = delete;

    /// Records for `name` (lower case, no trailing dot; "*.suffix" for a wildcard that answers
    /// every name below suffix), each an RR in presentation form without the owner, e.g.
    /// "A 192.0.2.1" or "AAAA ::1". Replaces earlier records of the name.
    void setRecords(const QString &name, const QStringList &records);
    /// Delays the answers for `name` by `ms` milliseconds (E5: keep a query outstanding).
    void setDelay(const QString &name, int ms);

    /// Binds UDP and TCP on address:port inside the namespace and starts the server thread.
    /// `barrierFromNsFd`: the namespace settle() asks from (where the gateway's queries come
    /// from, so the barrier travels their path); -1: no settle().
    bool start(const QHostAddress &address, quint16 port, int barrierFromNsFd = -1);
    void stop();

    /// The barrier for "nothing arrived": a UDP question for kBarrierName from the barrier
    /// namespace, which the server answers (without logging it) only after it has answered
    /// every TCP connection waiting in its accept queue; the UDP questions queued before it
    /// were read first (one socket, in order). So once settle() returns true, every question
    /// that reached the server's sockets before the barrier's is in queries(). False on
    /// timeout or without a barrier namespace.
    bool settle(int timeoutMs = 3000);
    static inline const QString kBarrierName = QStringLiteral("barrier.airlock-test.invalid");

    /// Questions received since the last clear().
    QList<Query> queries() const;
    /// The names of queries(), in order.
    QStringList queryNames() const;
    void clear();

private:
    void run();
    void serveTcpConnection();
    QByteArray answer(const QByteArray &query, bool tcp, const QHostAddress &from, quint16 fromPort,
                      int *delayMs);

    int m_nsFd;
    int m_barrierFromNsFd = -1;
    QHostAddress m_address;
    quint16 m_port = 0;
    int m_udp = -1;
    int m_tcp = -1;
    int m_wakeFd = -1;
    std::atomic<bool> m_stopping = false;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    QHash<QString, QStringList> m_records;
    QHash<QString, int> m_delays;
    QList<Query> m_queries;
};

} // namespace airlock::test
