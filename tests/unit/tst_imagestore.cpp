// ImageStore's reading of image.json (kernel, initrd and the optional qcow2 root disk: plain
// file names inside the image's directory only), RootDisk overlays made with the real qemu-img,
// and the QEMU command line for a root disk (the base as a read-only node, the overlay's
// backing set by node name).

#include "core/vmm/imagestore.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/rootdisk.h"
#include "resultcheck.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <optional>
#include <sys/stat.h>

using namespace airlock;

namespace {

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

/// `qemu-img info --output=json` of a file, or an empty object.
QJsonObject qemuImgInfo(const QString &path)
{
    QProcess process;
    process.start(RootDisk::findQemuImg(),
                  {QStringLiteral("info"), QStringLiteral("--output=json"), path});
    if (!process.waitForFinished(30000) || process.exitCode() != 0)
        return {};
    return QJsonDocument::fromJson(process.readAllStandardOutput()).object();
}

/// RootDisk::createOverlay, waited for (its answer comes from the event loop).
Result<void> createOverlay(const QString &overlay, const QString &base)
{
    QObject context;
    std::optional<Result<void>> answer;
    RootDisk::createOverlay(overlay, base, &context,
                            [&answer](const Result<void> &made) { answer = made; });
    // Bounded by createOverlay's own 30 s deadline; the wait only runs the event loop.
    if (!QTest::qWaitFor([&] { return answer.has_value(); }, 40000))
        return fail(ErrorKind::Timeout, QStringLiteral("createOverlay never answered"));
    return *answer;
}

} // namespace

class TestImageStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (RootDisk::findQemuImg().isEmpty())
            QSKIP("qemu-img is not installed (qemu-utils)");
        // A real (small, empty) qcow2 to stand in for an image's root disk.
        QProcess process;
        process.start(RootDisk::findQemuImg(),
                      {QStringLiteral("create"), QStringLiteral("-q"), QStringLiteral("-f"),
                       QStringLiteral("qcow2"), m_dir.filePath(QStringLiteral("base.qcow2")),
                       QStringLiteral("64M")});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
        QFile base(m_dir.filePath(QStringLiteral("base.qcow2")));
        QVERIFY(base.open(QIODevice::ReadOnly));
        m_qcow2 = base.readAll();
    }

    void diskIsOptionalAndNamedByFileName_data()
    {
        QTest::addColumn<QByteArray>("disk"); // the JSON value, or empty for no field
        QTest::addColumn<bool>("usable");
        QTest::newRow("no disk") << QByteArray() << true;
        QTest::newRow("null") << QByteArray("null") << true;
        QTest::newRow("qcow2 file") << QByteArray("\"rootfs.qcow2\"") << true;
        QTest::newRow("climbs out") << QByteArray("\"../rootfs.qcow2\"") << false;
        QTest::newRow("host path") << QByteArray("\"/etc/passwd\"") << false;
        QTest::newRow("sub directory") << QByteArray("\"sub/rootfs.qcow2\"") << false;
        QTest::newRow("dot dot") << QByteArray("\"..\"") << false;
        QTest::newRow("empty") << QByteArray("\"\"") << false;
        QTest::newRow("not a string") << QByteArray("42") << false;
        QTest::newRow("missing file") << QByteArray("\"absent.qcow2\"") << false;
        QTest::newRow("raw file") << QByteArray("\"raw.img\"") << false;
    }

    void diskIsOptionalAndNamedByFileName()
    {
        QFETCH(QByteArray, disk);
        QFETCH(bool, usable);
        const QString store =
            m_dir.filePath(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
        const QString image = store + QStringLiteral("/img");
        QVERIFY(QDir().mkpath(image + QStringLiteral("/sub")));
        QVERIFY(writeFile(image + QStringLiteral("/vmlinux"), "kernel"));
        QVERIFY(writeFile(image + QStringLiteral("/initrd.img"), "initrd"));
        QVERIFY(writeFile(image + QStringLiteral("/rootfs.qcow2"), m_qcow2));
        QVERIFY(writeFile(image + QStringLiteral("/sub/rootfs.qcow2"), m_qcow2));
        QVERIFY(writeFile(store + QStringLiteral("/rootfs.qcow2"), m_qcow2));
        QVERIFY(writeFile(image + QStringLiteral("/raw.img"), QByteArray(4096, 'x')));
        QByteArray json = R"({"description":"d","kernel":"vmlinux","initrd":"initrd.img",)"
                          R"("createdAt":"2026-12-01T07:51:03.000Z")";
        if (!disk.isEmpty())
            json += ",\"disk\":" + disk;
        json += '}';
        QVERIFY(writeFile(image + QStringLiteral("/image.json"), json));

        const auto found = ImageStore(store).find(QStringLiteral("img"));
        QCOMPARE(bool(found), usable);
        if (!usable) {
            QCOMPARE(found.error().kind, ErrorKind::BackendUnavailable);
            QCOMPARE(ImageStore(store).list().size(), 0);
            return;
        }
        const QJsonObject object = found->toJson();
        if (disk == "\"rootfs.qcow2\"") {
            QCOMPARE(found->diskPath, image + QStringLiteral("/rootfs.qcow2"));
            // The protocol names the file, never the host path.
            QCOMPARE(object.value(QStringLiteral("disk")).toString(),
                     QStringLiteral("rootfs.qcow2"));
            QVERIFY(!QJsonDocument(object).toJson().contains(store.toUtf8()));
            QCOMPARE(found->diskIdentity(),
                     QStringLiteral("img 2026-12-01T07:51:03.000Z %1").arg(m_qcow2.size()));
        } else {
            QVERIFY(found->diskPath.isEmpty());
            QVERIFY(object.value(QStringLiteral("disk")).isNull());
            QVERIFY(found->diskIdentity().isEmpty());
        }
    }

    void vmmsSaysWhichVmmsBootTheImage_data()
    {
        QTest::addColumn<QByteArray>("vmms");
        QTest::addColumn<bool>("withDisk");
        QTest::addColumn<QStringList>("expected"); // empty: the image is refused
        const QStringList qemu {QStringLiteral("qemu")};
        const QStringList both {QStringLiteral("qemu"), QStringLiteral("firecracker")};
        QTest::newRow("absent: qemu only") << QByteArray() << false << qemu;
        QTest::newRow("null: qemu only") << QByteArray("null") << false << qemu;
        QTest::newRow("both") << QByteArray(R"(["qemu","firecracker"])") << false << both;
        QTest::newRow("firecracker only") << QByteArray(R"(["firecracker"])") << false
                                          << QStringList {QStringLiteral("firecracker")};
        QTest::newRow("qemu with a disk") << QByteArray(R"(["qemu"])") << true << qemu;
        QTest::newRow("firecracker with a qcow2 disk")
            << QByteArray(R"(["qemu","firecracker"])") << true << QStringList();
        QTest::newRow("empty") << QByteArray("[]") << false << QStringList();
        QTest::newRow("unknown") << QByteArray(R"(["qemu","xen"])") << false << QStringList();
        QTest::newRow("twice") << QByteArray(R"(["qemu","qemu"])") << false << QStringList();
        QTest::newRow("not strings") << QByteArray("[1]") << false << QStringList();
        QTest::newRow("a string") << QByteArray(R"("qemu")") << false << QStringList();
    }

    void vmmsSaysWhichVmmsBootTheImage()
    {
        QFETCH(QByteArray, vmms);
        QFETCH(bool, withDisk);
        QFETCH(QStringList, expected);
        const QString store =
            m_dir.filePath(QStringLiteral("vmms-")
                           + QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
        const QString image = store + QStringLiteral("/img");
        QVERIFY(QDir().mkpath(image));
        QVERIFY(writeFile(image + QStringLiteral("/vmlinux"), "kernel"));
        QVERIFY(writeFile(image + QStringLiteral("/initrd.img"), "initrd"));
        QVERIFY(writeFile(image + QStringLiteral("/rootfs.qcow2"), m_qcow2));
        QByteArray json = R"({"kernel":"vmlinux","initrd":"initrd.img")";
        if (withDisk)
            json += R"(,"disk":"rootfs.qcow2")";
        if (!vmms.isEmpty())
            json += ",\"vmms\":" + vmms;
        json += '}';
        QVERIFY(writeFile(image + QStringLiteral("/image.json"), json));

        const auto found = ImageStore(store).find(QStringLiteral("img"));
        if (expected.isEmpty()) {
            QVERIFY(!found);
            QCOMPARE(found.error().kind, ErrorKind::BackendUnavailable);
            QVERIFY2(found.error().message.contains(QLatin1String("vmms")),
                     qPrintable(found.error().message));
            return;
        }
        QVERIFY_RESULT(found);
        QStringList names;
        for (const QJsonValue &name : found->toJson().value(QStringLiteral("vmms")).toArray())
            names.append(name.toString());
        QCOMPARE(names, expected);
        QCOMPARE(found->supports(VmmKind::Qemu), expected.contains(QLatin1String("qemu")));
        QCOMPARE(found->supports(VmmKind::Firecracker),
                 expected.contains(QLatin1String("firecracker")));
    }

    void overlayOnTheBase()
    {
        const QString base = m_dir.filePath(QStringLiteral("base.qcow2"));
        const QString overlay = m_dir.filePath(QStringLiteral("overlay.qcow2"));
        QVERIFY(writeFile(overlay, "an earlier overlay"));
        const auto made = createOverlay(overlay, base);
        QVERIFY_RESULT(made);
        const QJsonObject info = qemuImgInfo(overlay);
        QCOMPARE(info.value(QStringLiteral("format")).toString(), QStringLiteral("qcow2"));
        QCOMPARE(info.value(QStringLiteral("backing-filename-format")).toString(),
                 QStringLiteral("qcow2"));
        QCOMPARE(info.value(QStringLiteral("virtual-size")).toInteger(), 64LL * 1024 * 1024);
        struct stat st
        {
        };
        QCOMPARE(::stat(QFile::encodeName(overlay).constData(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0600));

        const auto broken = createOverlay(overlay, m_dir.filePath(QStringLiteral("absent.qcow2")));
        QVERIFY(!broken);
        QCOMPARE(broken.error().kind, ErrorKind::OperationFailed);
        QVERIFY(!QFile::exists(overlay));
    }

    void commandLineForARootDisk()
    {
        VmmLaunchConfig config;
        config.sandboxName = QStringLiteral("box");
        config.kernelPath = QStringLiteral("/img/vmlinux");
        config.initrdPath = QStringLiteral("/img/initrd.img");
        config.runtimeDir = QStringLiteral("/state/run/box");
        config.seedImagePath = QStringLiteral("/state/run/box/seed.tar");
        QStringList args = QemuCommand::arguments(QStringLiteral("qemu"), config, false);
        QVERIFY(!args.join(u' ').contains(QStringLiteral("airlock-root")));
        QVERIFY(!QemuCommand::kernelCommandLine(config).contains(QStringLiteral("airlock.root")));

        config.rootDiskPath = QStringLiteral("/state/disks/box.qcow2");
        config.rootDiskBasePath = QStringLiteral("/img/a,b/rootfs.qcow2");
        args = QemuCommand::arguments(QStringLiteral("qemu"), config, false);
        QVERIFY(QemuCommand::kernelCommandLine(config).contains(
            QStringLiteral(" airlock.root=airlock-root")));
        const QStringList expected {
            // Commas in paths are doubled (QEMU's option syntax).
            QStringLiteral("driver=file,node-name=rootbase-file,filename=/img/a,,b/rootfs.qcow2,"
                           "read-only=on"),
            QStringLiteral("driver=qcow2,node-name=rootbase,file=rootbase-file,read-only=on"),
            QStringLiteral("driver=file,node-name=root-file,filename=/state/disks/box.qcow2"),
            QStringLiteral("driver=qcow2,node-name=root,file=root-file,backing=rootbase"),
        };
        for (const QString &node : expected) {
            const qsizetype at = args.indexOf(node);
            QVERIFY2(at > 0 && args.at(at - 1) == u"-blockdev", qPrintable(node));
        }
        const qsizetype root =
            args.indexOf(QStringLiteral("virtio-blk-device,drive=root,serial=airlock-root"));
        const qsizetype seed =
            args.indexOf(QStringLiteral("virtio-blk-device,drive=seed,serial=airlock-seed"));
        QVERIFY(root > 0 && seed > 0);
        // No -drive for the root disk: nothing is probed or opened by the header's name.
        QCOMPARE(args.count(QStringLiteral("-drive")), 1);

        // The benchmark's raw port only on request, on the agent's bus (no new virtio device).
        QVERIFY(!args.join(u' ').contains(QStringLiteral("org.airlock.bench")));
        config.benchPort = true;
        args = QemuCommand::arguments(QStringLiteral("qemu"), config, false);
        QVERIFY(args.contains(
            QStringLiteral("virtserialport,bus=agentbus.0,chardev=bench,name=org.airlock.bench")));
        QVERIFY(args.contains(
            QStringLiteral("socket,id=bench,path=/state/run/box/bench.sock,server=on,wait=off")));
        QCOMPARE(args.count(QStringLiteral("virtio-serial-device,id=agentbus")), 1);
    }

private:
    QTemporaryDir m_dir;
    QByteArray m_qcow2;
};

QTEST_GUILESS_MAIN(TestImageStore)
#include "tst_imagestore.moc"
