// Boot benchmark: time from `sandbox.start` to the guest's "airlock-guest ready" line through a
// real airlockd, against the same QEMU command line started bare, in one run. Prints each run,
// the medians and the ratio (target: at most 1.15). Not a ctest test: run it by hand after a
// build, as root, with the guest image built (README.md, "Benchmarks").
//
//     build/tests/bench/bench_startup [--runs N]

#include "core/vmm/imagestore.h"
#include "core/vmm/qemucommand.h"
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cstdio>

using namespace airlock;

namespace {

constexpr int kBootTimeoutMs = 120000;
const QByteArray kReadyLine = QByteArrayLiteral("airlock-guest ready");

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    if (n == 0)
        return 0;
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Boots the image with QemuCommand's arguments as a plain child process and returns the
/// milliseconds until the ready line appears on its console socket, or -1.
double bareBoot(const GuestImage &image)
{
    QTemporaryDir run;
    VmmLaunchConfig config;
    config.sandboxName = QStringLiteral("bench-bare");
    config.kernelPath = image.kernelPath;
    config.initrdPath = image.initrdPath;
    config.kernelArgs = image.kernelArgs;
    config.runtimeDir = run.path();
    config.acceleration = Acceleration::Tcg;
    QStringList args = QemuCommand::arguments(QemuCommand::findQemu(), config, false);
    const QString program = args.takeFirst();

    QElapsedTimer timer;
    QProcess qemu;
    qemu.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    timer.start();
    qemu.start(program, args);
    QLocalSocket console;
    const QString consolePath = QDir(run.path()).filePath(QemuCommand::kConsoleSocket.toString());
    while (console.state() != QLocalSocket::ConnectedState && timer.elapsed() < kBootTimeoutMs) {
        console.connectToServer(consolePath);
        if (!console.waitForConnected(50))
            QThread::msleep(2);
    }
    QByteArray seen;
    double result = -1;
    while (timer.elapsed() < kBootTimeoutMs && console.state() == QLocalSocket::ConnectedState) {
        if (console.waitForReadyRead(100))
            seen += console.readAll();
        if (seen.contains(kReadyLine)) {
            result = double(timer.nsecsElapsed()) / 1e6;
            break;
        }
    }
    qemu.kill();
    qemu.waitForFinished(5000);
    return result;
}

/// Starts the sandbox through the helper and returns the milliseconds from sending
/// `sandbox.start` to the ready line in `console.output`, or -1. Kills it afterwards.
double helperBoot(test::RpcTestClient &client, const QString &name)
{
    client.takeNotifications();
    QElapsedTimer timer;
    timer.start();
    const QJsonObject started = client.call(QStringLiteral("sandbox.start"),
                                            {{QStringLiteral("name"), name}}, kBootTimeoutMs);
    if (!started.contains(QStringLiteral("result"))) {
        std::fprintf(stderr, "sandbox.start failed: %s\n",
                     qPrintable(test::RpcTestClient::errorKind(started)));
        return -1;
    }
    QByteArray seen;
    double result = -1;
    const auto ready = client.waitForNotification(
        QStringLiteral("console.output"),
        [&](const QJsonObject &params) {
            seen +=
                QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1());
            return seen.contains(kReadyLine);
        },
        kBootTimeoutMs);
    if (ready)
        result = double(timer.nsecsElapsed()) / 1e6;
    client.call(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), name}});
    client.waitForNotification(
        QStringLiteral("sandbox.changed"),
        [&](const QJsonObject &params) {
            const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
            return sandbox.value(QStringLiteral("name")).toString() == name
                && sandbox.value(QStringLiteral("state")).toString() == QLatin1String("stopped");
        },
        20000);
    return result;
}

void printRow(const char *what, const QList<double> &values)
{
    std::printf("%-22s", what);
    for (double value : values)
        std::printf(" %8.1f", value);
    std::printf("   median %8.1f ms\n", median(values));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Boot time through airlockd vs bare QEMU"));
    parser.addHelpOption();
    const QCommandLineOption runsOption(QStringLiteral("runs"),
                                        QStringLiteral("Boots per variant (default 5)."),
                                        QStringLiteral("N"), QStringLiteral("5"));
    parser.addOption(runsOption);
    parser.process(app);
    const int runs = std::max(1, parser.value(runsOption).toInt());

    if (qEnvironmentVariableIsEmpty("AIRLOCK_AIRLOCKD"))
        qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_AIRLOCKD_PATH);
    const ImageStore store(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
    const auto image = store.find(QStringLiteral("default"));
    if (!image) {
        std::fprintf(stderr,
                     "bench_startup: %s (build it: installers/guest/build-image.sh "
                     "--output %s/default)\n",
                     qPrintable(image.error().message), AIRLOCK_TEST_IMAGE_STORE);
        return 1;
    }

    test::HelperProcess helper;
    if (!helper.start()) {
        std::fprintf(stderr, "bench_startup: %s\n", qPrintable(helper.lastError()));
        return 1;
    }
    test::RpcTestClient client(helper.socketPath());
    const QString name = QStringLiteral("bench");
    if (!client.hello()
        || !client.call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), name}})
                .contains(QStringLiteral("result"))
        || !client.call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result"))
        || !client.call(QStringLiteral("console.attach"), {{QStringLiteral("name"), name}})
                .contains(QStringLiteral("result"))) {
        std::fprintf(stderr, "bench_startup: could not prepare the sandbox\n");
        return 1;
    }

    QList<double> bare;
    QList<double> through;
    // Interleaved, so a change in machine load hits both variants alike.
    for (int i = 0; i < runs; ++i) {
        bare << bareBoot(*image);
        through << helperBoot(client, name);
    }
    if (bare.contains(-1) || through.contains(-1)) {
        std::fprintf(stderr, "bench_startup: a boot did not reach the ready line\n");
        return 1;
    }
    std::printf(
        "boot to 'airlock-guest ready', %d runs each, milliseconds (TCG unless KVM works)\n", runs);
    printRow("bare qemu", bare);
    printRow("through airlockd", through);
    std::printf("ratio (airlockd / bare) %.3f  (target <= 1.15)\n", median(through) / median(bare));
    return 0;
}
