// The E2B-compatible endpoint's cost (docs/e2b.md): the same two steps through the e2b SDK and
// airlock-e2b, and through airlockctl, in one run against one airlockd and TCG guests of the
// default image:
//
//   - create to first result: Sandbox.create() + commands.run('true'), against
//     `airlockctl create` + `start` + `exec -- true` (retried while the agent is still booting,
//     as airlock-e2b waits for it too);
//   - the round trip of commands.run('true') on a running sandbox, against
//     `airlockctl exec NAME -- true` (a new process and helper connection each time).
//
// Prints every figure, the medians and the ratios. Root (airlock-e2b runs as a test user).
//
//     build/tests/bench/bench_e2b [--creates 3] [--runs 50]

#include "e2bendpoint.h"
#include "helperprocess.h"
#include "testuser.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <algorithm>
#include <cstdio>

using namespace airlock::test;

namespace {

constexpr int kCallTimeoutMs = 240000;
// What airlockctl exec returns when the command could not run (the agent still boots).
constexpr int kExitUnavailable = 125;

double median(QList<double> values)
{
    if (values.isEmpty())
        return 0;
    std::ranges::sort(values);
    return values[values.size() / 2];
}

int airlockctl(const QString &socket, const QStringList &arguments)
{
    QProcess ctl;
    ctl.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    ctl.start(QStringLiteral(AIRLOCK_AIRLOCKCTL_PATH),
              QStringList {QStringLiteral("--socket"), socket} + arguments);
    if (!ctl.waitForFinished(kCallTimeoutMs))
        return -1;
    ctl.readAllStandardOutput();
    return ctl.exitCode();
}

void print(const char *what, const QList<double> &values)
{
    std::printf("%-44s median %8.1f ms  (", what, median(values));
    for (double value : values.mid(0, 10))
        std::printf(" %.1f", value);
    std::printf("%s )\n", values.size() > 10 ? " ..." : "");
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption creates(QStringLiteral("creates"),
                                     QStringLiteral("Sandboxes to create each way."),
                                     QStringLiteral("N"), QStringLiteral("3"));
    const QCommandLineOption runs(QStringLiteral("runs"), QStringLiteral("Round trips each way."),
                                  QStringLiteral("N"), QStringLiteral("50"));
    parser.addHelpOption();
    parser.addOptions({creates, runs});
    parser.process(app);
    qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_AIRLOCKD_PATH);
    qputenv("AIRLOCK_E2B", AIRLOCK_E2B_PATH);
    if (qEnvironmentVariableIsEmpty("AIRLOCK_GATEWAY"))
        qputenv("AIRLOCK_GATEWAY", AIRLOCK_GATEWAY_PATH);

    HelperProcess helper;
    helper.setImageStore(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
    if (!helper.start()) {
        std::fprintf(stderr, "bench_e2b: %s\n", qPrintable(helper.lastError()));
        return 1;
    }
    TestUser user;
    if (!user.isValid()) {
        std::fprintf(stderr, "bench_e2b: %s\n", qPrintable(user.lastError()));
        return 1;
    }
    E2bEndpoint e2b(helper, user);
    if (!e2b.start()) {
        std::fprintf(stderr, "bench_e2b: %s\n", qPrintable(e2b.lastError()));
        return 1;
    }

    // The SDK half.
    QProcess node;
    QProcessEnvironment env = e2b.clientEnvironment();
    env.insert(QStringLiteral("BENCH_CREATES"), parser.value(creates));
    env.insert(QStringLiteral("BENCH_RUNS"), parser.value(runs));
    node.setProcessEnvironment(env);
    node.setWorkingDirectory(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
    node.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    node.start(QStringLiteral("node"), {QStringLiteral("bench.mjs")});
    if (!node.waitForFinished(-1) || node.exitCode() != 0) {
        std::fprintf(stderr,
                     "bench_e2b: the SDK half failed (is the SDK installed? ctest -R "
                     "e2b_sdk_install)\n");
        return 1;
    }
    const QJsonObject sdk =
        QJsonDocument::fromJson(node.readAllStandardOutput().trimmed()).object();
    QList<double> sdkCreate;
    QList<double> sdkRun;
    for (const QJsonValue &value : sdk.value(QStringLiteral("createMs")).toArray())
        sdkCreate.append(value.toDouble());
    for (const QJsonValue &value : sdk.value(QStringLiteral("runMs")).toArray())
        sdkRun.append(value.toDouble());

    // The airlockctl half.
    const QString socket = helper.socketPath();
    QList<double> ctlCreate;
    QList<double> ctlRun;
    const int createCount = parser.value(creates).toInt();
    for (int i = 0; i < createCount; ++i) {
        const QString name = QStringLiteral("bench-ctl-%1").arg(i);
        QElapsedTimer timer;
        timer.start();
        if (airlockctl(socket, {QStringLiteral("create"), name}) != 0
            || airlockctl(socket, {QStringLiteral("start"), name}) != 0) {
            std::fprintf(stderr, "bench_e2b: airlockctl create/start failed\n");
            return 1;
        }
        int code = kExitUnavailable;
        while (code == kExitUnavailable)
            code = airlockctl(
                socket,
                {QStringLiteral("exec"), name, QStringLiteral("--"), QStringLiteral("true")});
        if (code != 0) {
            std::fprintf(stderr, "bench_e2b: airlockctl exec failed (%d)\n", code);
            return 1;
        }
        ctlCreate.append(double(timer.nsecsElapsed()) / 1e6);
        if (i == createCount - 1) {
            for (int j = 0; j < parser.value(runs).toInt(); ++j) {
                QElapsedTimer round;
                round.start();
                airlockctl(
                    socket,
                    {QStringLiteral("exec"), name, QStringLiteral("--"), QStringLiteral("true")});
                ctlRun.append(double(round.nsecsElapsed()) / 1e6);
            }
        }
        airlockctl(socket, {QStringLiteral("kill"), name});
        airlockctl(socket, {QStringLiteral("rm"), name});
    }

    print("SDK: Sandbox.create() + commands.run", sdkCreate);
    print("airlockctl: create + start + exec", ctlCreate);
    print("SDK: commands.run('true')", sdkRun);
    print("airlockctl: exec NAME -- true", ctlRun);
    std::printf("ratio SDK / airlockctl: create to first result %.2f, round trip %.2f\n",
                median(sdkCreate) / std::max(median(ctlCreate), 0.001),
                median(sdkRun) / std::max(median(ctlRun), 0.001));
    return 0;
}
