// The upstream TLS session cache (docs/tls.md, "Session resumption"): a session is found only
// under the exact name and port it was stored for, the latest one wins, sessions that cannot be
// resumed or have expired are never handed out, and the number of keys is bounded.
#include "core/gateway/tls/upstreamsessioncache.h"

#include <QTest>

using airlock::gateway::SslSessionPtr;
using airlock::gateway::UpstreamSessionCache;

namespace {

constexpr std::time_t kBorn = 1'800'000'000;

/// A resumable session (it has an ID) made at kBorn, valid for `lifetime` seconds.
SslSessionPtr session(unsigned char id, long lifetime = 300)
{
    SslSessionPtr s(SSL_SESSION_new());
    const unsigned char bytes[4] = {id, 1, 2, 3};
    SSL_SESSION_set1_id(s.get(), bytes, sizeof bytes);
    SSL_SESSION_set_time(s.get(), long(kBorn));
    SSL_SESSION_set_timeout(s.get(), lifetime);
    return s;
}

} // namespace

class TestUpstreamSessionCache : public QObject
{
    Q_OBJECT
private slots:
    void keyedByExactNameAndPort();
    void latestSessionWins();
    void unresumableIsNotStored();
    void expiredIsDropped();
    void leastRecentlyStoredIsEvicted();
    void removeForgets();
};

void TestUpstreamSessionCache::keyedByExactNameAndPort()
{
    UpstreamSessionCache cache;
    const SslSessionPtr a = session(1);
    cache.put(QStringLiteral("a.test"), 443, a.get());
    QCOMPARE(cache.find(QStringLiteral("a.test"), 443, kBorn).get(), a.get());
    // Another name, a name that contains it, one it contains, another port: nothing.
    QVERIFY(!cache.find(QStringLiteral("b.test"), 443, kBorn));
    QVERIFY(!cache.find(QStringLiteral("x.a.test"), 443, kBorn));
    QVERIFY(!cache.find(QStringLiteral("a.tes"), 443, kBorn));
    QVERIFY(!cache.find(QStringLiteral("a.test."), 443, kBorn));
    QVERIFY(!cache.find(QStringLiteral("a.test"), 8443, kBorn));
    QVERIFY(!cache.find(QString(), 443, kBorn));

    // A second name gets its own session; neither sees the other's.
    const SslSessionPtr b = session(2);
    cache.put(QStringLiteral("b.test"), 443, b.get());
    QCOMPARE(cache.find(QStringLiteral("a.test"), 443, kBorn).get(), a.get());
    QCOMPARE(cache.find(QStringLiteral("b.test"), 443, kBorn).get(), b.get());
    QCOMPARE(cache.size(), 2);
}

void TestUpstreamSessionCache::latestSessionWins()
{
    UpstreamSessionCache cache;
    const SslSessionPtr first = session(1);
    const SslSessionPtr second = session(2);
    cache.put(QStringLiteral("a.test"), 443, first.get());
    cache.put(QStringLiteral("a.test"), 443, second.get());
    QCOMPARE(cache.size(), 1);
    QCOMPARE(cache.find(QStringLiteral("a.test"), 443, kBorn).get(), second.get());
}

void TestUpstreamSessionCache::unresumableIsNotStored()
{
    UpstreamSessionCache cache;
    const SslSessionPtr blank(SSL_SESSION_new()); // neither an ID nor a ticket
    cache.put(QStringLiteral("a.test"), 443, blank.get());
    cache.put(QStringLiteral("a.test"), 443, nullptr);
    QCOMPARE(cache.size(), 0);
    QVERIFY(!cache.find(QStringLiteral("a.test"), 443, kBorn));
}

void TestUpstreamSessionCache::expiredIsDropped()
{
    UpstreamSessionCache cache;
    const SslSessionPtr s = session(1, 10);
    cache.put(QStringLiteral("a.test"), 443, s.get());
    QVERIFY(cache.find(QStringLiteral("a.test"), 443, kBorn + 9));
    QVERIFY(!cache.find(QStringLiteral("a.test"), 443, kBorn - 1)); // the clock went back
    QCOMPARE(cache.size(), 0);
    cache.put(QStringLiteral("a.test"), 443, s.get());
    QVERIFY(!cache.find(QStringLiteral("a.test"), 443, kBorn + 10));
    QCOMPARE(cache.size(), 0);
}

void TestUpstreamSessionCache::leastRecentlyStoredIsEvicted()
{
    UpstreamSessionCache cache(2);
    const SslSessionPtr a = session(1), b = session(2), c = session(3), d = session(4);
    cache.put(QStringLiteral("a.test"), 443, a.get());
    cache.put(QStringLiteral("b.test"), 443, b.get());
    cache.put(QStringLiteral("c.test"), 443, c.get());
    QCOMPARE(cache.size(), 2);
    QVERIFY(!cache.find(QStringLiteral("a.test"), 443, kBorn));
    QVERIFY(cache.find(QStringLiteral("b.test"), 443, kBorn));
    // b stored again is the most recent: c goes next.
    cache.put(QStringLiteral("b.test"), 443, b.get());
    cache.put(QStringLiteral("d.test"), 443, d.get());
    QVERIFY(!cache.find(QStringLiteral("c.test"), 443, kBorn));
    QVERIFY(cache.find(QStringLiteral("b.test"), 443, kBorn));
    QVERIFY(cache.find(QStringLiteral("d.test"), 443, kBorn));
}

void TestUpstreamSessionCache::removeForgets()
{
    UpstreamSessionCache cache;
    const SslSessionPtr s = session(1);
    cache.put(QStringLiteral("a.test"), 443, s.get());
    cache.put(QStringLiteral("a.test"), 8443, s.get());
    cache.remove(QStringLiteral("a.test"), 443);
    QVERIFY(!cache.find(QStringLiteral("a.test"), 443, kBorn));
    QVERIFY(cache.find(QStringLiteral("a.test"), 8443, kBorn));
}

QTEST_APPLESS_MAIN(TestUpstreamSessionCache)
#include "tst_upstreamsessioncache.moc"
