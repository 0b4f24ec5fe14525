// The default image's guest under the device layout Firecracker gives it, emulated with QEMU
// microvm (Firecracker itself cannot run on these machines, docs/vmm.md): the virtio-mmio
// devices described in ACPI tables (Firecracker 1.8 and later), the seed disk read-only and
// without the `airlock-seed` serial (Firecracker's drives report an id made of the file's device
// and inode), no virtio-serial port, and FirecrackerVmm's kernel command line. The guest must
// reach its ready line with the seed extracted, as it does under QEMU's own layout, and leave
// through a reset when powered off (the only way out of Firecracker on x86).

#include "core/vmm/firecrackervmm.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/seedimage.h"

#include <QDir>
#include <QLocalSocket>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace airlock;

namespace {

constexpr int kBootTimeoutMs = 120000;
const QByteArray kCaMarker = QByteArrayLiteral("AIRLOCK-FIRECRACKER-LAYOUT-CA");

/// QEMU's arguments for `config` with the devices Firecracker does not have removed or changed:
/// the seed's serial, and the agent's virtio-serial bus with its port and chardev.
QStringList firecrackerLayout(QStringList args, const VmmLaunchConfig &config)
{
    QStringList out;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &arg = args[i];
        const QString value = i + 1 < args.size() ? args[i + 1] : QString();
        if ((arg == QLatin1String("-device") || arg == QLatin1String("-chardev"))
            && (value.startsWith(QLatin1String("virtio-serial-device"))
                || value.startsWith(QLatin1String("virtserialport"))
                || value.startsWith(QLatin1String("socket,id=agent")))) {
            ++i;
            continue;
        }
        if (arg == QLatin1String("-append")) {
            out << arg << FirecrackerVmm::kernelCommandLine(config);
            ++i;
            continue;
        }
        QString changed = arg;
        if (arg.startsWith(QLatin1String("virtio-blk-device,drive=seed")))
            changed.remove(QStringLiteral(",serial=") + QLatin1StringView(SeedImage::kSerial));
        out << changed;
    }
    return out;
}

} // namespace

class TestFirecrackerGuest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultImageBootsWithFirecrackersDevices()
    {
        if (QemuCommand::findQemu().isEmpty())
            QSKIP("qemu-system-x86_64 is not installed");
        ImageStore images(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
        const auto image = images.find(QStringLiteral("default"));
        QVERIFY2(image, qPrintable(image ? QString() : image.error().message));
        // The image says it boots in Firecracker; this test is what backs that claim.
        QVERIFY(image->supports(VmmKind::Firecracker));

        QTemporaryDir run;
        QVERIFY(run.isValid());
        const QString seed = QDir(run.path()).filePath(QStringLiteral("seed.tar"));
        QVERIFY(SeedImage::write(
            seed,
            {{QStringLiteral("ca.pem"),
              "-----BEGIN CERTIFICATE-----\n" + kCaMarker + "\n-----END CERTIFICATE-----\n"}}));
        VmmLaunchConfig config;
        config.sandboxName = QStringLiteral("fc-layout");
        config.kernelPath = image->kernelPath;
        config.initrdPath = image->initrdPath;
        config.kernelArgs = image->kernelArgs;
        config.seedImagePath = seed;
        config.runtimeDir = run.path();
        config.acceleration = Acceleration::Tcg;
        const QStringList qemuArgs = QemuCommand::arguments(QemuCommand::findQemu(), config, false);
        QStringList args = firecrackerLayout(qemuArgs, config);
        QVERIFY(!args.join(u' ').contains(QLatin1String("airlock-seed")));
        QVERIFY(!args.join(u' ').contains(QLatin1String("virtserialport")));
        QVERIFY(args.join(u' ').contains(QLatin1String("acpi=on")));
        QVERIFY(args.join(u' ').contains(QLatin1String("readonly=on")));
        const QString program = args.takeFirst();

        QProcess qemu;
        qemu.setProcessChannelMode(QProcess::MergedChannels);
        qemu.start(program, args);
        QVERIFY2(qemu.waitForStarted(), qPrintable(qemu.errorString()));
        const auto stopQemu = qScopeGuard([&qemu] {
            qemu.kill();
            qemu.waitForFinished(5000);
        });
        QLocalSocket console;
        const QString consolePath =
            QDir(run.path()).filePath(QemuCommand::kConsoleSocket.toString());
        // The socket exists once QEMU listens on it.
        QTRY_VERIFY_WITH_TIMEOUT(
            QFileInfo::exists(consolePath) || qemu.state() == QProcess::NotRunning, 10000);
        console.connectToServer(consolePath);
        QVERIFY2(console.waitForConnected(5000),
                 qPrintable(console.errorString() + u' ' + QString::fromLocal8Bit(qemu.readAll())));
        QByteArray seen;
        connect(&console, &QLocalSocket::readyRead, this, [&] { seen += console.readAll(); });
        QTRY_VERIFY2_WITH_TIMEOUT(seen.contains("airlock-guest ready"), seen.constData(),
                                  kBootTimeoutMs);
        QVERIFY2(!seen.contains("airlock-guest: cannot"), seen.constData());

        // The seed was found without its serial: the CA is in /run/airlock and in the bundle.
        // The end marker is computed by the shell, so the typed line's echo never matches it.
        console.write("grep -c " + kCaMarker
                      + " /run/airlock/ca.pem /etc/ssl/certs/ca-certificates.crt;"
                        " echo seed-check-$((40+2))\n");
        QTRY_VERIFY2_WITH_TIMEOUT(seen.contains("seed-check-42"), seen.constData(), 30000);
        QVERIFY2(seen.contains("/run/airlock/ca.pem:1"), seen.constData());
        QVERIFY2(seen.contains("/etc/ssl/certs/ca-certificates.crt:1"), seen.constData());
        // Firecracker's only disk here is the seed, and it is read-only to the guest.
        console.write("cat /sys/block/vda/ro /sys/block/vda/serial; echo ro-check-$((40+3))\n");
        QTRY_VERIFY2_WITH_TIMEOUT(seen.contains("ro-check-43"), seen.constData(), 30000);
        const QByteArray answer = seen.mid(seen.lastIndexOf("echo ro-check"));
        QVERIFY2(answer.contains("\n1\r\n") || answer.contains("\n1\n"), answer.constData());

        // Firecracker has no ACPI power off: told its VMM, the guest leaves through a reset
        // (reboot=k), which ends Firecracker, as -no-reboot ends QEMU here. QEMU's own layout
        // powers off instead ("reboot: Power down").
        console.write("poweroff\n");
        QTRY_VERIFY2_WITH_TIMEOUT(qemu.state() == QProcess::NotRunning, seen.constData(), 60000);
        QVERIFY2(seen.contains("reboot: Restarting system"), seen.constData());
        QVERIFY2(!seen.contains("reboot: Power down"), seen.constData());
    }
};

QTEST_GUILESS_MAIN(TestFirecrackerGuest)
#include "tst_firecrackerguest.moc"
