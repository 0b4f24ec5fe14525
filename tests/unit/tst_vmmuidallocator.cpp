#include "core/daemon/vmmuidallocator.h"
#include "resultcheck.h"

#include <QTest>

#include <sys/wait.h>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::VmmUidAllocator;

namespace {
constexpr uid_t kVmmBase = 0x7ffe0000;
constexpr uid_t kGatewayBase = 0x7ffd0000;
} // namespace

class TestVmmUidAllocator : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void sharedUidWithoutRange();
    void startsAtItsFirstSlot();
    void skipsOwnRunningVmms();
    void skipsSlotsOfOtherProcessesInEitherRange();
    void wrapsAroundTheRange();
    void busyWhenEverySlotIsTaken();
    void gatewayUidIsTheSameSlot();
    void firstSlotDependsOnTheStateDir();
    void uidsInUseHasOurOwn();
};

void TestVmmUidAllocator::sharedUidWithoutRange()
{
    const VmmUidAllocator allocator(1234, 0, 0, 7);
    const auto uid = allocator.allocate({1234, 1234}, {1234});
    QVERIFY_RESULT(uid);
    QCOMPARE(*uid, uid_t(1234));
    QCOMPARE(allocator.gatewayUidFor(1234), uid_t(1234));
}

void TestVmmUidAllocator::startsAtItsFirstSlot()
{
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, 42);
    const auto uid = allocator.allocate({}, {});
    QVERIFY_RESULT(uid);
    QCOMPARE(*uid, kVmmBase + 42);
}

void TestVmmUidAllocator::skipsOwnRunningVmms()
{
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, 42);
    const auto uid = allocator.allocate({kVmmBase + 42, kVmmBase + 43, 0}, {});
    QVERIFY_RESULT(uid);
    QCOMPARE(*uid, kVmmBase + 44);
}

void TestVmmUidAllocator::skipsSlotsOfOtherProcessesInEitherRange()
{
    // Another helper's VMM in slot 10 and its gateway in slot 11: neither slot is handed out.
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, 10);
    const auto uid = allocator.allocate({}, {0, 1000, kVmmBase + 10, kGatewayBase + 11});
    QVERIFY_RESULT(uid);
    QCOMPARE(*uid, kVmmBase + 12);
}

void TestVmmUidAllocator::wrapsAroundTheRange()
{
    const int last = VmmUidAllocator::kSlots - 1;
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, last);
    const auto uid = allocator.allocate({kVmmBase + uid_t(last)}, {});
    QVERIFY_RESULT(uid);
    QCOMPARE(*uid, kVmmBase);
}

void TestVmmUidAllocator::busyWhenEverySlotIsTaken()
{
    std::vector<uid_t> all;
    for (int slot = 0; slot < VmmUidAllocator::kSlots; ++slot)
        all.push_back(kVmmBase + uid_t(slot));
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, 0);
    const auto uid = allocator.allocate(all, {});
    QVERIFY(!uid);
    QCOMPARE(int(uid.error().kind), int(ErrorKind::Busy));
}

void TestVmmUidAllocator::gatewayUidIsTheSameSlot()
{
    const VmmUidAllocator allocator(1, kVmmBase, kGatewayBase, 0);
    QCOMPARE(allocator.gatewayUidFor(kVmmBase + 5), kGatewayBase + 5);
    // Below the range (the shared airlock-vmm user): its own uid.
    QCOMPARE(allocator.gatewayUidFor(999), uid_t(999));
    const VmmUidAllocator noGatewayRange(1, kVmmBase, 0, 0);
    QCOMPARE(noGatewayRange.gatewayUidFor(kVmmBase + 5), kVmmBase + 5);
}

void TestVmmUidAllocator::firstSlotDependsOnTheStateDir()
{
    const int a = VmmUidAllocator::firstSlotFor(QStringLiteral("/var/lib/airlock"));
    QCOMPARE(VmmUidAllocator::firstSlotFor(QStringLiteral("/var/lib/airlock")), a);
    QVERIFY(a >= 0 && a < VmmUidAllocator::kSlots);
    QVERIFY(VmmUidAllocator::firstSlotFor(QStringLiteral("/tmp/other-state")) != a);
}

void TestVmmUidAllocator::uidsInUseHasOurOwn()
{
    const std::vector<uid_t> uids = VmmUidAllocator::uidsInUse();
    QVERIFY(std::find(uids.begin(), uids.end(), ::getuid()) != uids.end());
    if (::geteuid() != 0)
        QSKIP("needs root to run a process with other real, effective and saved uids");
    // A process whose real, effective and saved uids differ: each one counts as in use.
    int ready[2];
    int release[2];
    QVERIFY(::pipe(ready) == 0 && ::pipe(release) == 0);
    const uid_t real = 4100001, effective = 4100002, saved = 4100003;
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(release[1]);
        if (::setresuid(real, effective, saved) != 0)
            ::_exit(1);
        char byte = 'r';
        if (::write(ready[1], &byte, 1) != 1 || ::read(release[0], &byte, 1) < 0)
            ::_exit(2);
        ::_exit(0);
    }
    QVERIFY(child > 0);
    char byte = 0;
    QCOMPARE(::read(ready[0], &byte, 1), ssize_t(1));
    const std::vector<uid_t> withChild = VmmUidAllocator::uidsInUse();
    ::close(release[1]);
    int status = 0;
    ::waitpid(child, &status, 0);
    for (const uid_t uid : {real, effective, saved})
        QVERIFY2(std::find(withChild.begin(), withChild.end(), uid) != withChild.end(),
                 qPrintable(QString::number(uid)));
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (const int fd : {ready[0], ready[1], release[0]})
        ::close(fd);
}

QTEST_GUILESS_MAIN(TestVmmUidAllocator)
#include "tst_vmmuidallocator.moc"
