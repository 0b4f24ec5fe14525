// airlockd's Firecracker options end to end: --vmm, --firecracker, the per-sandbox `vmm` of
// sandbox.create, `hello`'s report, and what a host that cannot run Firecracker answers. The
// helper runs with an image store whose kernel cannot boot, so its KVM probe cannot prove KVM
// and Firecracker is unavailable on every host: the answers are the same everywhere. Booting a
// Firecracker guest through airlockd needs KVM (tst_firecrackerreal boots one directly).

#include "helperprocess.h"
#include "rpctestclient.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {
const QString kFake = QStringLiteral(AIRLOCK_SOURCE_DIR "/tests/firecracker/fake-firecracker.py");

QString messageOf(const QJsonObject &response)
{
    return response.value(QStringLiteral("error"))
        .toObject()
        .value(QStringLiteral("message"))
        .toString();
}
} // namespace

class TestFirecrackerHelper : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void autoFallsBackToQemuWithTheReason()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString script = dir.filePath(QStringLiteral("firecracker"));
        {
            QFile file(script);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("#!/bin/sh\nexec python3 '" + kFake.toUtf8()
                       + "' --violations /dev/null \"$@\"\n");
            file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                | QFileDevice::ExeOwner);
        }
        HelperProcess helper({QStringLiteral("--vmm"), QStringLiteral("auto"),
                              QStringLiteral("--firecracker"), script});
        const QString store = helper.useUnbootableImageStore();
        QVERIFY(!store.isEmpty());
        // An image built before image.json named its VMMs: QEMU's only.
        QVERIFY(QDir().mkpath(store + QStringLiteral("/older")));
        for (const QString &file : {QStringLiteral("vmlinux"), QStringLiteral("initrd.img")})
            QVERIFY(QFile::copy(store + QStringLiteral("/default/") + file,
                                store + QStringLiteral("/older/") + file));
        {
            QFile json(store + QStringLiteral("/older/image.json"));
            QVERIFY(json.open(QIODevice::WriteOnly));
            json.write(R"({"kernel":"vmlinux","initrd":"initrd.img"})");
        }
        QVERIFY2(helper.start(), qPrintable(helper.lastError()));
        RpcTestClient client(helper.socketPath());
        const QJsonObject hello = RpcTestClient::result(client.call(
            QStringLiteral("hello"),
            {{QStringLiteral("protocol"), 1}, {QStringLiteral("client"), QStringLiteral("test")}}));
        QCOMPARE(hello.value(QStringLiteral("acceleration")).toString(), QStringLiteral("tcg"));
        // auto: Firecracker cannot run without KVM, so sandboxes default to QEMU.
        QCOMPARE(hello.value(QStringLiteral("vmm")).toString(), QStringLiteral("qemu"));
        const QJsonObject firecracker = hello.value(QStringLiteral("vmms"))
                                            .toObject()
                                            .value(QStringLiteral("firecracker"))
                                            .toObject();
        QCOMPARE(firecracker.value(QStringLiteral("available")).toBool(true), false);
        QVERIFY2(
            firecracker.value(QStringLiteral("reason")).toString().contains(QStringLiteral("KVM")),
            QJsonDocument(hello).toJson().constData());
        QCOMPARE(firecracker.value(QStringLiteral("binary")).toString(), script);

        // A Firecracker sandbox is refused with that reason; nothing is created.
        const QJsonObject refused =
            client.call(QStringLiteral("sandbox.create"),
                        {{QStringLiteral("name"), QStringLiteral("fc")},
                         {QStringLiteral("vmm"), QStringLiteral("firecracker")}});
        QCOMPARE(RpcTestClient::errorKind(refused), QStringLiteral("backend_unavailable"));
        QVERIFY2(messageOf(refused).contains(QStringLiteral("needs KVM")),
                 qPrintable(messageOf(refused)));
        QCOMPARE(
            RpcTestClient::errorKind(client.call(QStringLiteral("sandbox.get"),
                                                 {{QStringLiteral("name"), QStringLiteral("fc")}})),
            QStringLiteral("not_found"));

        // image.list says which VMMs boot each image; a VMM the image does not name is refused
        // for the image's sake, whatever the host offers.
        const QJsonArray images =
            RpcTestClient::result(client.call(QStringLiteral("image.list"), {}))
                .value(QStringLiteral("images"))
                .toArray();
        QMap<QString, QJsonArray> vmms;
        for (const QJsonValue &image : images)
            vmms.insert(image[QStringLiteral("id")].toString(),
                        image[QStringLiteral("vmms")].toArray());
        QCOMPARE(vmms.value(QStringLiteral("default")),
                 (QJsonArray {QStringLiteral("qemu"), QStringLiteral("firecracker")}));
        QCOMPARE(vmms.value(QStringLiteral("older")), QJsonArray {QStringLiteral("qemu")});
        const QJsonObject unsupported =
            client.call(QStringLiteral("sandbox.create"),
                        {{QStringLiteral("name"), QStringLiteral("fc-older")},
                         {QStringLiteral("image"), QStringLiteral("older")},
                         {QStringLiteral("vmm"), QStringLiteral("firecracker")}});
        QCOMPARE(RpcTestClient::errorKind(unsupported), QStringLiteral("backend_unavailable"));
        QVERIFY2(messageOf(unsupported)
                     .contains(QStringLiteral("image 'older' cannot boot in firecracker")),
                 qPrintable(messageOf(unsupported)));
        QCOMPARE(RpcTestClient::errorKind(
                     client.call(QStringLiteral("sandbox.get"),
                                 {{QStringLiteral("name"), QStringLiteral("fc-older")}})),
                 QStringLiteral("not_found"));

        // The default is stored with each sandbox and survives a helper restart.
        const QJsonObject created = RpcTestClient::result(client.call(
            QStringLiteral("sandbox.create"), {{QStringLiteral("name"), QStringLiteral("plain")}}));
        QCOMPARE(created.value(QStringLiteral("vmm")).toString(), QStringLiteral("qemu"));
        QVERIFY(helper.restart());
        RpcTestClient again(helper.socketPath());
        const QJsonObject listed = RpcTestClient::result(again.call(
            QStringLiteral("sandbox.get"), {{QStringLiteral("name"), QStringLiteral("plain")}}));
        QCOMPARE(listed.value(QStringLiteral("vmm")).toString(), QStringLiteral("qemu"));
    }

    void firecrackerThatCannotRunStopsTheHelper_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("no binary")
            << QStringList {QStringLiteral("--vmm"), QStringLiteral("firecracker"),
                            QStringLiteral("--firecracker"),
                            QStringLiteral("/nonexistent/firecracker")}
            << QStringLiteral("--vmm firecracker: /nonexistent/firecracker is not an executable "
                              "file");
        QTest::newRow("unknown backend")
            << QStringList {QStringLiteral("--vmm"), QStringLiteral("xen")}
            << QStringLiteral("--vmm must be qemu, firecracker or auto");
    }

    void firecrackerThatCannotRunStopsTheHelper()
    {
        // --vmm firecracker is a promise airlockd cannot keep here: it refuses to serve
        // rather than quietly run QEMU.
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        HelperProcess helper(arguments);
        QVERIFY(!helper.useUnbootableImageStore().isEmpty());
        const QString output = helper.tempPath() + QStringLiteral("/airlockd.out");
        helper.setOutputFile(output);
        QVERIFY(!helper.start(10000));
        QVERIFY2(helper.lastError().contains(QStringLiteral("exited with status")),
                 qPrintable(helper.lastError()));
        QFile said(output);
        QVERIFY(said.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(said.readAll());
        QVERIFY2(text.contains(message), qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(TestFirecrackerHelper)
#include "tst_firecrackerhelper.moc"
