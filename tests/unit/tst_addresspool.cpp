#include "core/net/addresspool.h"
#include "core/net/helperinstance.h"
#include "core/net/tapdevice.h"
#include "resultcheck.h"

#include <QTest>

using airlock::AddressPool;
using airlock::ErrorKind;

/// AddressPool: pool validation, link layout for /30 and /31, deterministic reuse, MACs.
/// Also the tap naming rule (pure string logic, no device).
class TestAddressPool : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void defaultPool();
    void invalidPools_data();
    void invalidPools();
    void links_data();
    void links();
    void lowestFreeIsReused();
    void exhaustion();
    void reserve();
    void indexOf();
    void interfaceNames_data();
    void interfaceNames();
    void instanceTags();
};

void TestAddressPool::defaultPool()
{
    auto pool = AddressPool::create();
    QVERIFY(pool);
    QCOMPARE(pool->cidr(), QStringLiteral("100.96.0.0/16"));
    QCOMPARE(pool->linkPrefix(), 30);
    QCOMPARE(pool->capacity(), 16384u);
    QCOMPARE(pool->allocatedCount(), 0);
}

void TestAddressPool::invalidPools_data()
{
    QTest::addColumn<QString>("cidr");
    QTest::addColumn<int>("linkPrefix");
    QTest::addColumn<QString>("messagePart");
    QTest::newRow("no prefix") << QStringLiteral("100.96.0.0") << 30 << QStringLiteral("IPv4");
    QTest::newRow("IPv6") << QStringLiteral("fd00::/64") << 30 << QStringLiteral("IPv4");
    QTest::newRow("garbage") << QStringLiteral("pool") << 30 << QStringLiteral("IPv4");
    QTest::newRow("host bits") << QStringLiteral("100.96.0.1/16") << 30
                               << QStringLiteral("host bits");
    QTest::newRow("too wide") << QStringLiteral("100.0.0.0/7") << 30
                              << QStringLiteral("prefix length");
    QTest::newRow("narrower than a link")
        << QStringLiteral("100.96.0.0/31") << 30 << QStringLiteral("prefix length");
    QTest::newRow("link /29") << QStringLiteral("100.96.0.0/16") << 29
                              << QStringLiteral("30 or 31");
    QTest::newRow("loopback") << QStringLiteral("127.0.0.0/16") << 30 << QStringLiteral("loopback");
    QTest::newRow("link-local") << QStringLiteral("169.254.0.0/24") << 30
                                << QStringLiteral("169.254");
    QTest::newRow("contains link-local")
        << QStringLiteral("169.0.0.0/8") << 30 << QStringLiteral("169.254");
    QTest::newRow("multicast") << QStringLiteral("239.1.0.0/16") << 30
                               << QStringLiteral("multicast");
    QTest::newRow("metadata address")
        << QStringLiteral("100.100.0.0/16") << 30 << QStringLiteral("metadata");
    QTest::newRow("this network") << QStringLiteral("0.0.0.0/16") << 30
                                  << QStringLiteral("this network");
}

void TestAddressPool::invalidPools()
{
    QFETCH(QString, cidr);
    QFETCH(int, linkPrefix);
    QFETCH(QString, messagePart);
    auto pool = AddressPool::create(cidr, linkPrefix);
    QVERIFY(!pool);
    QCOMPARE(pool.error().kind, ErrorKind::InvalidParams);
    QVERIFY2(pool.error().message.contains(messagePart), qPrintable(pool.error().message));
}

void TestAddressPool::links_data()
{
    QTest::addColumn<QString>("cidr");
    QTest::addColumn<int>("linkPrefix");
    QTest::addColumn<quint32>("index");
    QTest::addColumn<QString>("network");
    QTest::addColumn<QString>("gateway");
    QTest::addColumn<QString>("guest");
    QTest::addColumn<QString>("netmask");
    QTest::addColumn<QString>("mac");
    QTest::newRow("/30 first") << QStringLiteral("100.96.0.0/16") << 30 << 0u
                               << QStringLiteral("100.96.0.0") << QStringLiteral("100.96.0.1")
                               << QStringLiteral("100.96.0.2") << QStringLiteral("255.255.255.252")
                               << QStringLiteral("02:61:6c:00:00:00");
    QTest::newRow("/30 second") << QStringLiteral("100.96.0.0/16") << 30 << 1u
                                << QStringLiteral("100.96.0.4") << QStringLiteral("100.96.0.5")
                                << QStringLiteral("100.96.0.6") << QStringLiteral("255.255.255.252")
                                << QStringLiteral("02:61:6c:00:00:01");
    QTest::newRow("/30 crosses an octet")
        << QStringLiteral("100.96.0.0/16") << 30 << 64u << QStringLiteral("100.96.1.0")
        << QStringLiteral("100.96.1.1") << QStringLiteral("100.96.1.2")
        << QStringLiteral("255.255.255.252") << QStringLiteral("02:61:6c:00:00:40");
    QTest::newRow("/30 last") << QStringLiteral("100.96.0.0/16") << 30 << 16383u
                              << QStringLiteral("100.96.255.252")
                              << QStringLiteral("100.96.255.253")
                              << QStringLiteral("100.96.255.254")
                              << QStringLiteral("255.255.255.252")
                              << QStringLiteral("02:61:6c:00:3f:ff");
    QTest::newRow("/31 first (RFC 3021)")
        << QStringLiteral("10.200.0.0/24") << 31 << 0u << QStringLiteral("10.200.0.0")
        << QStringLiteral("10.200.0.0") << QStringLiteral("10.200.0.1")
        << QStringLiteral("255.255.255.254") << QStringLiteral("02:61:6c:00:00:00");
    QTest::newRow("/31 third") << QStringLiteral("10.200.0.0/24") << 31 << 2u
                               << QStringLiteral("10.200.0.4") << QStringLiteral("10.200.0.4")
                               << QStringLiteral("10.200.0.5") << QStringLiteral("255.255.255.254")
                               << QStringLiteral("02:61:6c:00:00:02");
    QTest::newRow("/8 pool, high index")
        << QStringLiteral("10.0.0.0/8") << 31 << 0x7fffffu << QStringLiteral("10.255.255.254")
        << QStringLiteral("10.255.255.254") << QStringLiteral("10.255.255.255")
        << QStringLiteral("255.255.255.254") << QStringLiteral("02:61:6c:7f:ff:ff");
}

void TestAddressPool::links()
{
    QFETCH(QString, cidr);
    QFETCH(int, linkPrefix);
    QFETCH(quint32, index);
    auto pool = AddressPool::create(cidr, linkPrefix);
    QVERIFY_RESULT(pool);
    QVERIFY(index < pool->capacity());
    const auto link = pool->linkAt(index);
    QCOMPARE(link.index, index);
    QCOMPARE(link.prefixLength, linkPrefix);
    QTEST(link.network.toString(), "network");
    QTEST(link.gateway.toString(), "gateway");
    QTEST(link.guest.toString(), "guest");
    QTEST(link.netmask().toString(), "netmask");
    QTEST(link.macText(), "mac");
    // Locally administered (bit 1) unicast (bit 0 clear), IEEE 802.
    QCOMPARE(link.mac[0] & 0x03, 0x02);
}

void TestAddressPool::lowestFreeIsReused()
{
    auto pool = AddressPool::create();
    QVERIFY(pool);
    for (quint32 i = 0; i < 5; ++i) {
        auto link = pool->allocate();
        QVERIFY(link);
        QCOMPARE(link->index, i);
    }
    pool->release(3);
    pool->release(1);
    QCOMPARE(pool->allocatedCount(), 3);
    QCOMPARE(pool->allocate()->index, 1u);
    QCOMPARE(pool->allocate()->index, 3u);
    QCOMPARE(pool->allocate()->index, 5u);
    pool->release(99); // free index: nothing happens
    pool->release(1u << 30); // outside the pool: nothing happens
    QCOMPARE(pool->allocatedCount(), 6);
    // Same index, same addresses and MAC after release and reallocation.
    const auto before = pool->linkAt(2);
    pool->release(2);
    const auto after = pool->allocate();
    QVERIFY(after);
    QCOMPARE(after->guest, before.guest);
    QCOMPARE(after->macText(), before.macText());
}

void TestAddressPool::exhaustion()
{
    auto pool = AddressPool::create(u"100.96.0.0/28", 30);
    QVERIFY(pool);
    QCOMPARE(pool->capacity(), 4u);
    for (int i = 0; i < 4; ++i)
        QVERIFY(pool->allocate());
    auto full = pool->allocate();
    QVERIFY(!full);
    QCOMPARE(full.error().kind, ErrorKind::Busy);
    pool->release(2);
    QCOMPARE(pool->allocate()->index, 2u);
}

void TestAddressPool::reserve()
{
    auto pool = AddressPool::create();
    QVERIFY(pool);
    // A helper restart: the caller re-reserves what it stored.
    QVERIFY(pool->reserve(0));
    QVERIFY(pool->reserve(2));
    auto again = pool->reserve(2);
    QVERIFY(!again);
    QCOMPARE(again.error().kind, ErrorKind::AlreadyExists);
    auto outside = pool->reserve(pool->capacity());
    QVERIFY(!outside);
    QCOMPARE(outside.error().kind, ErrorKind::InvalidParams);
    QCOMPARE(pool->allocate()->index, 1u);
    QCOMPARE(pool->allocate()->index, 3u);
    QVERIFY(pool->isAllocated(2));
}

void TestAddressPool::indexOf()
{
    auto pool = AddressPool::create();
    QVERIFY(pool);
    QCOMPARE(pool->indexOf(QHostAddress(QStringLiteral("100.96.0.6"))), std::optional(1u));
    QCOMPARE(pool->indexOf(QHostAddress(QStringLiteral("100.96.1.1"))), std::optional(64u));
    QCOMPARE(pool->indexOf(QHostAddress(QStringLiteral("100.97.0.1"))), std::nullopt);
    QCOMPARE(pool->indexOf(QHostAddress(QStringLiteral("::1"))), std::nullopt);
}

void TestAddressPool::interfaceNames_data()
{
    QTest::addColumn<QString>("sandbox");
    QTest::addColumn<QString>("instance");
    QTest::addColumn<QString>("ifname");
    QTest::newRow("short") << QStringLiteral("demo") << QString() << QStringLiteral("al-demo");
    QTest::newRow("12 characters")
        << QStringLiteral("abcdefghijkl") << QString() << QStringLiteral("al-abcdefghijkl");
    // "al_" + the first 12 hex digits of SHA-256("abcdefghijklm") (48 bits; 16 before L1).
    QTest::newRow("13 characters")
        << QStringLiteral("abcdefghijklm") << QString() << QStringLiteral("al_ff10304f1af2");
    // A helper's own tag (HelperInstance) keeps its taps apart from another helper's.
    QTest::newRow("tagged short") << QStringLiteral("demo") << QStringLiteral("3f2a9")
                                  << QStringLiteral("al3f2a9-demo");
    QTest::newRow("tagged 7 characters") << QStringLiteral("abcdefg") << QStringLiteral("3f2a9")
                                         << QStringLiteral("al3f2a9-abcdefg");
    QTest::newRow("tagged 8 characters: 7 hex digits (28 bits)")
        << QStringLiteral("abcdefghijklm") << QStringLiteral("3f2a9")
        << QStringLiteral("al3f2a9_ff10304");
}

void TestAddressPool::interfaceNames()
{
    QFETCH(QString, sandbox);
    QFETCH(QString, instance);
    QFETCH(QString, ifname);
    QCOMPARE(airlock::TapDevice::interfaceName(sandbox, instance), ifname);
    QVERIFY(ifname.size() <= 15);
    QVERIFY(airlock::TapDevice::isValidInterfaceName(ifname));
    QVERIFY(airlock::TapDevice::belongsTo(ifname, instance));
    QVERIFY(!airlock::TapDevice::belongsTo(ifname, QStringLiteral("00000")));
    if (!instance.isEmpty())
        QVERIFY(!airlock::TapDevice::belongsTo(ifname, QString()));
    else
        QVERIFY(!airlock::TapDevice::belongsTo(ifname, QStringLiteral("3f2a9")));
    QVERIFY(!airlock::TapDevice::isValidInterfaceName(u"al-"));
    QVERIFY(!airlock::TapDevice::isValidInterfaceName(u"eth0"));
    QVERIFY(!airlock::TapDevice::isValidInterfaceName(u"al-abcdefghijklm"));
    QVERIFY(!airlock::TapDevice::isValidInterfaceName(u"al-Demo"));
}

void TestAddressPool::instanceTags()
{
    using airlock::HelperInstance;
    const QString tag = HelperInstance::tagFor(QStringLiteral("/var/lib/airlock"));
    QCOMPARE(tag.size(), HelperInstance::kTagLength);
    QCOMPARE(HelperInstance::tagFor(QStringLiteral("/var/lib/airlock")), tag);
    QVERIFY(HelperInstance::tagFor(QStringLiteral("/tmp/airlock-test-x/state")) != tag);
    QVERIFY(HelperInstance::tagFor(QString()).isEmpty());
}

QTEST_APPLESS_MAIN(TestAddressPool)
#include "tst_addresspool.moc"
