// FirecrackerVmm with a real Firecracker: boots the default image's kernel and initrd under KVM
// and waits for the kernel's banner on the serial console, then stops the guest. Runs only when
// AIRLOCK_FIRECRACKER names a firecracker binary and /dev/kvm can be opened; skipped (with the
// reason) otherwise, never passed.

#include "core/vmm/firecrackervmm.h"
#include "core/vmm/imagestore.h"

#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

using namespace airlock;

class TestFirecrackerReal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bootsTheDefaultKernel()
    {
        const QString binary = qEnvironmentVariable("AIRLOCK_FIRECRACKER");
        if (binary.isEmpty())
            QSKIP("AIRLOCK_FIRECRACKER does not name a firecracker binary");
        if (!QFileInfo(binary).isExecutable())
            QSKIP(
                qPrintable(QStringLiteral("AIRLOCK_FIRECRACKER=%1 is not executable").arg(binary)));
        const int kvm = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
        if (kvm < 0)
            QSKIP("/dev/kvm cannot be opened: Firecracker needs KVM");
        ::close(kvm);
        ImageStore images(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
        const auto image = images.find(QStringLiteral("default"));
        if (!image)
            QSKIP(qPrintable(QStringLiteral("no default image in %1 (the guest_image fixture "
                                            "builds it)")
                                 .arg(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE))));

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        VmmLaunchConfig config;
        config.sandboxName = QStringLiteral("fc-real");
        config.kernelPath = image->kernelPath;
        config.initrdPath = image->initrdPath;
        config.runtimeDir = dir.path();
        config.acceleration = Acceleration::Kvm;
        FirecrackerVmm vmm(binary, QStringLiteral(AIRLOCK_FCCTL));
        QByteArray console;
        connect(&vmm, &Vmm::consoleOutput, this,
                [&](const QByteArray &bytes) { console += bytes; });
        std::optional<Result<VmmRuntimeInfo>> started;
        vmm.start(config, [&](const Result<VmmRuntimeInfo> &result) { started = result; });
        QTRY_VERIFY_WITH_TIMEOUT(started.has_value(), 20000);
        QVERIFY2(*started, qPrintable(*started ? QString() : (*started).error().message));
        QVERIFY(!vmm.firecrackerVersion().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(console.contains("Linux version"), 30000);
        QSignalSpy exited(&vmm, &Vmm::exited);
        vmm.stop(5000);
        QVERIFY(exited.wait(15000));
    }
};

QTEST_GUILESS_MAIN(TestFirecrackerReal)
#include "tst_firecrackerreal.moc"
