// FirecrackerVmm with a real Firecracker: boots the default image under KVM to its ready line,
// runs a command through the guest agent over vsock, takes a snapshot, restores it into a fresh
// Firecracker, runs a command there too, then stops the guest. Runs only when
// AIRLOCK_FIRECRACKER names a firecracker binary and /dev/kvm can be opened; skipped (with the
// reason) otherwise, never passed.

#include "core/agent/agentclient.h"
#include "core/agent/agentprocess.h"
#include "core/vmm/firecrackervmm.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/seedimage.h"

#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace airlock;

namespace {

/// Runs `line` with /bin/sh -c in the guest through the agent and returns its stdout, or a null
/// QByteArray (with a warning) when the agent never answered.
QByteArray runInGuest(Vmm &vmm, const QByteArray &line)
{
    if (!QTest::qWaitFor([&vmm] { return vmm.agent() != nullptr; },
                         FirecrackerVmm::kAgentConnectTimeoutMs)) {
        qWarning("the agent's vsock connection never came up");
        return {};
    }
    agent::AgentClient *client = vmm.agent()->connection(30000);
    if (!client || !QTest::qWaitFor([client] { return client->isReady(); }, 30000)) {
        qWarning("the agent never greeted");
        return {};
    }
    agentwire::ExecRequest request;
    request.argv = {line.toStdString()};
    request.shell = true;
    request.timeoutMs = 30000;
    agent::AgentProcess *process = client->exec(request);
    QByteArray out;
    QObject::connect(process, &agent::AgentProcess::readyReadStdout, process,
                     [&out, process] { out += process->readStdout(); });
    if (!QTest::qWaitFor([process] { return process->exitStatus().has_value(); }, 40000)) {
        qWarning("the command never finished");
        return {};
    }
    out += process->readStdout();
    const bool ok = !process->exitStatus()->signaled && process->exitStatus()->value == 0;
    process->deleteLater();
    return ok ? out : QByteArray();
}

} // namespace

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
        const QString seed = QDir(dir.path()).filePath(QStringLiteral("seed.tar"));
        QVERIFY(SeedImage::write(seed, {{QStringLiteral("ca.pem"), QByteArrayLiteral("none\n")}}));
        VmmLaunchConfig config;
        config.sandboxName = QStringLiteral("fc-real");
        config.kernelPath = image->kernelPath;
        config.initrdPath = image->initrdPath;
        config.kernelArgs = image->kernelArgs;
        config.seedImagePath = seed;
        config.memoryMib = 256;
        config.memoryPath = QDir(dir.path()).filePath(QStringLiteral("memory"));
        QFile memory(config.memoryPath);
        QVERIFY(memory.open(QIODevice::WriteOnly));
        memory.close();
        config.runtimeDir = QDir(dir.path()).filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(config.runtimeDir));
        config.acceleration = Acceleration::Kvm;
        FirecrackerVmm vmm(binary, QStringLiteral(AIRLOCK_FCCTL), QStringLiteral(AIRLOCK_CONSOLE));
        QByteArray console;
        connect(&vmm, &Vmm::consoleOutput, this,
                [&](const QByteArray &bytes) { console += bytes; });
        std::optional<Result<VmmRuntimeInfo>> started;
        vmm.start(config, [&](const Result<VmmRuntimeInfo> &result) { started = result; });
        QTRY_VERIFY_WITH_TIMEOUT(started.has_value(), 20000);
        QVERIFY2(*started, qPrintable(*started ? QString() : (*started).error().message));
        QVERIFY(!vmm.firecrackerVersion().isEmpty());
        QTRY_VERIFY2_WITH_TIMEOUT(console.contains("airlock-guest ready"), console.constData(),
                                  60000);
        QVERIFY2(!console.contains("airlock-guest: cannot"), console.constData());
        // The agent over vsock, and the seed found without a serial.
        QCOMPARE(runInGuest(vmm, "cat /run/airlock/ca.pem; echo booted-$((40+2))"),
                 QByteArray("none\nbooted-42\n"));

        // A snapshot: paused, device state into a descriptor, memory into the memory file.
        std::optional<Result<void>> paused;
        vmm.pause([&](const Result<void> &result) { paused = result; });
        QTRY_VERIFY_WITH_TIMEOUT(paused.has_value(), 15000);
        QVERIFY2(*paused, qPrintable(*paused ? QString() : (*paused).error().message));
        const int state = ::memfd_create("fc-state", MFD_CLOEXEC);
        QVERIFY(state >= 0);
        const auto closeState = qScopeGuard([state] { ::close(state); });
        std::optional<Result<void>> saved;
        vmm.saveDeviceState(state, [&](const Result<void> &result) { saved = result; });
        QTRY_VERIFY_WITH_TIMEOUT(saved.has_value(), 70000);
        QVERIFY2(*saved, qPrintable(*saved ? QString() : (*saved).error().message));
        QVERIFY(QFileInfo(config.memoryPath).size() >= qint64(config.memoryMib) * 1024 * 1024);
        QSignalSpy killed(&vmm, &Vmm::exited);
        vmm.kill();
        QVERIFY(killed.count() > 0 || killed.wait(15000));

        // The restore: a fresh Firecracker loads it and the guest carries on where it was.
        FirecrackerVmm restored(binary, QStringLiteral(AIRLOCK_FCCTL),
                                QStringLiteral(AIRLOCK_CONSOLE));
        VmmLaunchConfig restoreConfig = config;
        restoreConfig.incomingStateFd = state;
        std::optional<Result<VmmRuntimeInfo>> loaded;
        restored.start(restoreConfig,
                       [&](const Result<VmmRuntimeInfo> &result) { loaded = result; });
        QTRY_VERIFY_WITH_TIMEOUT(loaded.has_value(), 90000);
        QVERIFY2(*loaded, qPrintable(*loaded ? QString() : (*loaded).error().message));
        QCOMPARE(runInGuest(restored, "echo restored-$((40+3))"), QByteArray("restored-43\n"));

        QSignalSpy exited(&restored, &Vmm::exited);
        restored.stop(5000);
        QVERIFY(exited.wait(15000));
    }
};

QTEST_GUILESS_MAIN(TestFirecrackerReal)
#include "tst_firecrackerreal.moc"
