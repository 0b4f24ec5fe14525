// KvmProbe's diagnosis without booting anything: which group a VMM needs for /dev/kvm, when a
// VMM's identity may not open it, and why the device is missing (from CPU flags). The probe
// boot itself is tested against real QEMU in tests/integration/tst_qemumicrovm.cpp.
#include "core/vmm/kvmprobe.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using airlock::Acceleration;
using airlock::KvmProbe;

class TestKvmProbe : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void deviceGroupNeedsGroupReadWrite();
    void accessProblemFollowsOwnerGroupOther();
    void missingDeviceSaysWhy_data();
    void missingDeviceSaysWhy();
    void probeReportsPermissionOfTheVmmUser();

private:
    QString device(mode_t mode, gid_t gid);
    QString cpuinfo(const QByteArray &flags);
    QTemporaryDir m_tmp;
    int m_files = 0;
};

QString TestKvmProbe::device(mode_t mode, gid_t gid)
{
    const QString path = m_tmp.filePath(QStringLiteral("kvm%1").arg(++m_files));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.close();
    const QByteArray name = QFile::encodeName(path);
    if (::chmod(name.constData(), mode) != 0)
        return {};
    // Only root may give a file to another group; others keep their own (the tests adapt).
    if (::chown(name.constData(), uid_t(-1), gid) != 0 && gid != ::getegid())
        return {};
    return path;
}

QString TestKvmProbe::cpuinfo(const QByteArray &flags)
{
    const QString path = m_tmp.filePath(QStringLiteral("cpuinfo%1").arg(++m_files));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme " + flags
               + " sse2\nbugs\t\t: \n");
    return path;
}

void TestKvmProbe::deviceGroupNeedsGroupReadWrite()
{
    const gid_t group = ::getegid() == 0 ? gid_t(4242) : ::getegid();
    if (group == 0)
        QSKIP("needs a group other than root's");
    const QString kvm = device(0660, group);
    QVERIFY(!kvm.isEmpty());
    QCOMPARE(KvmProbe::deviceGroup(kvm), std::optional<gid_t>(group));
    // Group may only read: giving it to VMMs would not help.
    QCOMPARE(KvmProbe::deviceGroup(device(0640, group)), std::nullopt);
    QCOMPARE(KvmProbe::deviceGroup(m_tmp.filePath(QStringLiteral("absent"))), std::nullopt);
    if (::geteuid() == 0) // root's group is never handed out, even when it may read and write
        QCOMPARE(KvmProbe::deviceGroup(device(0660, 0)), std::nullopt);
}

void TestKvmProbe::accessProblemFollowsOwnerGroupOther()
{
    const gid_t group = ::getegid() == 0 ? gid_t(4242) : ::getegid();
    const uid_t stranger = ::geteuid() + 12345;
    const QString kvm = device(0660, group);
    QVERIFY(!kvm.isEmpty());
    // Neither owner nor in the group: refused, naming the device, its mode and the fix.
    const QString refused = KvmProbe::accessProblem(kvm, stranger, {gid_t(group + 1)});
    QVERIFY2(refused.startsWith(QStringLiteral("permission:")), qPrintable(refused));
    QVERIFY2(refused.contains(kvm), qPrintable(refused));
    QVERIFY2(refused.contains(QStringLiteral("mode 0660")), qPrintable(refused));
    QVERIFY2(refused.contains(QStringLiteral("chmod 0660")), qPrintable(refused));
    // In the device's group (what deviceGroup() adds to every VMM): allowed.
    QCOMPARE(KvmProbe::accessProblem(kvm, stranger, {gid_t(group + 1), group}), QString());
    // Others may read and write (e.g. 0666): allowed to anyone.
    QCOMPARE(KvmProbe::accessProblem(device(0666, group), stranger, {}), QString());
    // Root, i.e. "keep the caller's identity": never a problem.
    QCOMPARE(KvmProbe::accessProblem(kvm, 0, {}), QString());
}

void TestKvmProbe::missingDeviceSaysWhy_data()
{
    QTest::addColumn<QByteArray>("flags");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("nested virtualisation off") << QByteArray("hypervisor") << u"nested"_s;
    QTest::newRow("bare metal, off in firmware") << QByteArray("pae") << u"firmware"_s;
    QTest::newRow("module not loaded") << QByteArray("vmx hypervisor") << u"modprobe"_s;
    QTest::newRow("AMD, module not loaded") << QByteArray("svm") << u"modprobe"_s;
}

void TestKvmProbe::missingDeviceSaysWhy()
{
    QFETCH(QByteArray, flags);
    QFETCH(QString, mentions);
    const QString why = KvmProbe::missingDeviceReason(u"/dev/kvm"_s, cpuinfo(flags));
    QVERIFY2(why.startsWith(u"/dev/kvm is missing: "_s), qPrintable(why));
    QVERIFY2(why.contains(mentions), qPrintable(why));
    QVERIFY2(why.contains(u"restart airlockd"_s), qPrintable(why));
}

void TestKvmProbe::probeReportsPermissionOfTheVmmUser()
{
    // The helper (root) opens the device fine; the VMM user must be able to, too.
    if (::geteuid() != 0)
        QSKIP("needs root: the probe opens the device as the caller first");
    KvmProbe::Config config;
    config.kvmDevice = device(0600, 0);
    QVERIFY(!config.kvmDevice.isEmpty());
    config.vmmUid = 4243;
    config.vmmGid = 4243;
    config.vmmGroups = {4243};
    const airlock::KvmProbeResult result = KvmProbe::run(config);
    QCOMPARE(int(result.acceleration), int(Acceleration::Tcg));
    QVERIFY2(result.warning.startsWith(u"permission: "_s), qPrintable(result.warning));
    QVERIFY2(result.warning.contains(u"software emulation (TCG)"_s), qPrintable(result.warning));
}

QTEST_GUILESS_MAIN(TestKvmProbe)
#include "tst_kvmprobe.moc"
