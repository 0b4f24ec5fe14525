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
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

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
const QString kBox = QStringLiteral("fc-box");
const QString kFork = QStringLiteral("fc-fork");

qint64 inodeOf(const QString &path)
{
    struct stat st
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? qint64(st.st_ino) : -1;
}

/// The conformance server as one executable file (a zip application with the API description
/// and the real guest agent inside, which answers the vsock port): a jailed Firecracker sees
/// only its binary, never the source tree. Empty on failure.
QString bundleTheFake(const QString &dir)
{
    const QString content = dir + QStringLiteral("/bundle");
    if (!QDir().mkpath(content)
        || !QFile::copy(kFake, content + QStringLiteral("/fake_firecracker.py"))
        || !QFile::copy(QFileInfo(kFake).path() + QStringLiteral("/firecracker-api-v1.yaml"),
                        content + QStringLiteral("/firecracker-api-v1.yaml"))
        || !QFile::copy(QStringLiteral(AIRLOCK_AGENT_BINARY),
                        content + QStringLiteral("/airlock-agent")))
        return {};
    QFile main(content + QStringLiteral("/__main__.py"));
    if (!main.open(QIODevice::WriteOnly)
        || main.write("import sys, fake_firecracker\n"
                      "fake_firecracker.main(['--agent', 'bundled'] + sys.argv[1:])\n")
            < 0)
        return {};
    main.close();
    const QString binary = dir + QStringLiteral("/firecracker");
    if (QProcess::execute(QStringLiteral("python3"),
                          {QStringLiteral("-m"), QStringLiteral("zipapp"), content,
                           QStringLiteral("-o"), binary, QStringLiteral("-p"),
                           QStringLiteral("/usr/bin/python3")})
        != 0)
        return {};
    QFile::setPermissions(binary,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                              | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                              | QFileDevice::ReadOther | QFileDevice::ExeOther);
    return binary;
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

    void sandboxesRunOnTheConformanceServer()
    {
        // airlockd itself drives the conformance server: the sandbox service, network, console
        // hub, snapshot store and fork around a FirecrackerVmm, with every request checked
        // against the API description. The fake needs no KVM; --firecracker-without-kvm lets
        // airlockd offer Firecracker on a host whose probe cannot prove KVM.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString binary = bundleTheFake(dir.path());
        QVERIFY(!binary.isEmpty());
        HelperProcess helper({QStringLiteral("--vmm"), QStringLiteral("firecracker"),
                              QStringLiteral("--firecracker"), binary,
                              QStringLiteral("--firecracker-without-kvm")});
        QVERIFY(!helper.useUnbootableImageStore().isEmpty());
        QVERIFY2(helper.start(), qPrintable(helper.lastError()));
        RpcTestClient client(helper.socketPath());
        QVERIFY(client.hello());
        const auto named = [](const QString &name) {
            return QJsonObject {{QStringLiteral("name"), name}};
        };
        const auto runDir = [&helper](const QString &name) {
            return QDir(helper.stateDir()).filePath(QStringLiteral("run/") + name);
        };
        const auto noViolations = [&runDir](const QString &name) {
            QFile file(QDir(runDir(name)).filePath(QStringLiteral("violations.jsonl")));
            return !file.exists() || (file.open(QIODevice::ReadOnly) && file.readAll().isEmpty());
        };

        const QJsonObject created =
            RpcTestClient::result(client.call(QStringLiteral("sandbox.create"), named(kBox)));
        QCOMPARE(created.value(QStringLiteral("vmm")).toString(), QStringLiteral("firecracker"));
        const QJsonObject started =
            client.call(QStringLiteral("sandbox.start"), named(kBox), 60000);
        QVERIFY2(started.contains(QStringLiteral("result")),
                 QJsonDocument(started).toJson().constData());
        const qint64 pid =
            RpcTestClient::result(started).value(QStringLiteral("vmmPid")).toInteger();
        QVERIFY(pid > 0);

        // The console: Firecracker's serial (its stdio), through the helper's hub both ways.
        const QJsonObject attached =
            RpcTestClient::result(client.call(QStringLiteral("console.attach"), named(kBox)));
        QByteArray console =
            QByteArray::fromBase64(attached.value(QStringLiteral("data")).toString().toLatin1());
        const auto consoleShows = [&](const QByteArray &needle) {
            return console.contains(needle)
                || client.waitForNotification(
                    QStringLiteral("console.output"),
                    [&](const QJsonObject &params) {
                        console += QByteArray::fromBase64(
                            params.value(QStringLiteral("data")).toString().toLatin1());
                        return console.contains(needle);
                    },
                    20000);
        };
        QVERIFY2(consoleShows("Linux version 6.1.0-fake"), console.constData());
        QVERIFY(client
                    .call(QStringLiteral("console.write"),
                          {{QStringLiteral("name"), kBox},
                           {QStringLiteral("data"),
                            QString::fromLatin1(QByteArray("typed-in\n").toBase64())}})
                    .contains(QStringLiteral("result")));
        QVERIFY2(consoleShows("typed-in"), console.constData());

        // Pause and resume (PATCH /vm), a snapshot (PUT /snapshot/create) into the store.
        QVERIFY(client.call(QStringLiteral("vm.pause"), named(kBox))
                    .contains(QStringLiteral("result")));
        QVERIFY(client.call(QStringLiteral("vm.resume"), named(kBox))
                    .contains(QStringLiteral("result")));
        const QJsonObject snapshot = RpcTestClient::result(
            client.call(QStringLiteral("snapshot.create"), named(kBox), 60000));
        QCOMPARE(snapshot.value(QStringLiteral("vmm")).toString(), QStringLiteral("firecracker"));
        const QString id = snapshot.value(QStringLiteral("id")).toString();
        QVERIFY(!id.isEmpty());

        // A fork: a second Firecracker loads the snapshot, and opens the fork's own seed disk.
        const QJsonObject forked =
            client.call(QStringLiteral("snapshot.fork"),
                        {{QStringLiteral("snapshot"), id}, {QStringLiteral("name"), kFork}}, 60000);
        QVERIFY2(forked.contains(QStringLiteral("result")),
                 QJsonDocument(forked).toJson().constData());
        QCOMPARE(RpcTestClient::result(forked).value(QStringLiteral("vmm")).toString(),
                 QStringLiteral("firecracker"));
        // Its guest (the real agent, over the vsock) was told the fork's own identity.
        QCOMPARE(RpcTestClient::result(forked).value(QStringLiteral("identityWarning")).toString(),
                 QString());
        QFile hostname(QDir(runDir(kFork)).filePath(QStringLiteral("agent-sysroot/etc/hostname")));
        QVERIFY(hostname.open(QIODevice::ReadOnly));
        QCOMPARE(hostname.readAll(), kFork.toUtf8() + '\n');
        QFile drivesLog(QDir(runDir(kFork)).filePath(QStringLiteral("fake-drives.log")));
        QVERIFY(drivesLog.open(QIODevice::ReadOnly));
        const QJsonObject opened = QJsonDocument::fromJson(drivesLog.readAll()).object();
        QCOMPARE(opened[QStringLiteral("seed")][QStringLiteral("inode")].toInteger(),
                 inodeOf(QDir(runDir(kFork)).filePath(QStringLiteral("seed.tar"))));

        // A restore of the sandbox's own snapshot replaces its Firecracker with a loaded one.
        const QJsonObject restored =
            client.call(QStringLiteral("snapshot.restore"),
                        {{QStringLiteral("name"), kBox}, {QStringLiteral("snapshot"), id}}, 60000);
        QVERIFY2(restored.contains(QStringLiteral("result")),
                 QJsonDocument(restored).toJson().constData());
        const qint64 restoredPid = RpcTestClient::result(restored)
                                       .value(QStringLiteral("sandbox"))
                                       .toObject()
                                       .value(QStringLiteral("vmmPid"))
                                       .toInteger();
        QVERIFY(restoredPid > 0 && restoredPid != pid);
        QVERIFY(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)));

        // Every request conformed to the description.
        QVERIFY(noViolations(kBox));
        QVERIFY(noViolations(kFork));

        // stop: SendCtrlAltDel, which ends Firecracker; kill: SIGKILL. Nothing is left: the
        // processes are gone (the helper reaped them) and the helper says stopped.
        const qint64 forkPid =
            RpcTestClient::result(forked).value(QStringLiteral("vmmPid")).toInteger();
        QVERIFY(client.call(QStringLiteral("sandbox.stop"), named(kBox))
                    .contains(QStringLiteral("result")));
        QVERIFY(client.call(QStringLiteral("sandbox.kill"), named(kFork))
                    .contains(QStringLiteral("result")));
        for (const qint64 gone : {restoredPid, forkPid})
            QTRY_VERIFY2_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(gone)),
                                      qPrintable(QString::number(gone)), 20000);
        for (const QString &name : {kBox, kFork})
            QTRY_COMPARE_WITH_TIMEOUT(
                RpcTestClient::result(client.call(QStringLiteral("sandbox.get"), named(name)))
                    .value(QStringLiteral("state"))
                    .toString(),
                QStringLiteral("stopped"), 10000);
    }

    void firecrackerTemplatesServeFirecrackerSandboxes()
    {
        // A template of the Firecracker VMM (its own snapshot of a booted guest), and a
        // sandbox started from it: loaded into a fresh Firecracker, told its own identity by the
        // real agent over the vsock.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString binary = bundleTheFake(dir.path());
        QVERIFY(!binary.isEmpty());
        HelperProcess helper({QStringLiteral("--vmm"), QStringLiteral("qemu"),
                              QStringLiteral("--firecracker"), binary,
                              QStringLiteral("--firecracker-without-kvm"),
                              QStringLiteral("--templates"), QStringLiteral("off")});
        QVERIFY(!helper.useUnbootableImageStore().isEmpty());
        QVERIFY2(helper.start(), qPrintable(helper.lastError()));
        RpcTestClient client(helper.socketPath());
        RpcTestClient events(helper.socketPath());
        QVERIFY(client.hello() && events.hello());
        QVERIFY(events.call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
        const QJsonObject firecracker {{QStringLiteral("vmm"), QStringLiteral("firecracker")}};
        const QJsonObject preparing =
            RpcTestClient::result(client.call(QStringLiteral("template.prepare"), firecracker));
        QVERIFY2(preparing.value(QStringLiteral("preparing")).toBool(),
                 QJsonDocument(preparing).toJson().constData());
        // Ready: the template snapshot is announced (it belongs to no sandbox).
        const auto announced = events.waitForNotification(
            QStringLiteral("snapshot.changed"),
            [](const QJsonObject &params) {
                return params.value(QStringLiteral("sandbox")).toString().isEmpty();
            },
            60000);
        QVERIFY(announced.has_value());
        const QJsonObject made =
            RpcTestClient::result(client.call(QStringLiteral("template.prepare"), firecracker));
        const QJsonObject snapshot = made.value(QStringLiteral("template")).toObject();
        QCOMPARE(snapshot.value(QStringLiteral("vmm")).toString(), QStringLiteral("firecracker"));
        QCOMPARE(snapshot.value(QStringLiteral("kind")).toString(), QStringLiteral("template"));
        // The QEMU shape of the same image has none: a template serves its own VMM only.
        QCOMPARE(RpcTestClient::result(client.call(QStringLiteral("template.list")))
                     .value(QStringLiteral("templates"))
                     .toArray()
                     .size(),
                 1);

        QJsonObject spec {{QStringLiteral("name"), kBox}};
        spec.insert(QStringLiteral("vmm"), QStringLiteral("firecracker"));
        QVERIFY(
            client.call(QStringLiteral("sandbox.create"), spec).contains(QStringLiteral("result")));
        const QJsonObject started =
            client.call(QStringLiteral("sandbox.start"), {{QStringLiteral("name"), kBox}}, 60000);
        QVERIFY2(started.contains(QStringLiteral("result")),
                 QJsonDocument(started).toJson().constData());
        const QJsonObject sandbox = RpcTestClient::result(started);
        QCOMPARE(sandbox.value(QStringLiteral("startedFrom")).toString(),
                 QStringLiteral("template"));
        QCOMPARE(sandbox.value(QStringLiteral("identityWarning")).toString(), QString());
        QFile hostname(
            QDir(helper.stateDir())
                .filePath(QStringLiteral("run/%1/agent-sysroot/etc/hostname").arg(kBox)));
        QVERIFY(hostname.open(QIODevice::ReadOnly));
        QCOMPARE(hostname.readAll(), kBox.toUtf8() + '\n');
        QFile violations(
            QDir(helper.stateDir()).filePath(QStringLiteral("run/%1/violations.jsonl").arg(kBox)));
        QVERIFY(!violations.exists()
                || (violations.open(QIODevice::ReadOnly) && violations.readAll().isEmpty()));
        const qint64 pid = sandbox.value(QStringLiteral("vmmPid")).toInteger();
        QVERIFY(client.call(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), kBox}})
                    .contains(QStringLiteral("result")));
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)), 20000);
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
