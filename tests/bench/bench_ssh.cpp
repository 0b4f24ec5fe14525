// SSH transport benchmark: JSON-RPC round trips and console throughput through HelperClient
// over the SSH transport (a real sshd on loopback, direct-streamlocal channel) versus the local
// socket, in one run, against one airlockd. Console throughput is measured on scrollback:
// the guest prints ~1 MiB into its console, then `console.attach` fetches the whole scrollback
// repeatedly (base64 in one JSON line each time), so the guest's speed does not enter.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/ssh/sshtransport.h"
#include "core/vmm/imagestore.h"
#include "helperprocess.h"
#include "sshserver.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QThread>

#include <algorithm>
#include <cstdio>

using namespace airlock;

namespace {

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? 0 : values[values.size() / 2];
}

/// Microseconds per `sandbox.list` round trip, one per sample.
QList<double> roundTrips(HelperClient &client, int count)
{
    QList<double> samples;
    for (int i = 0; i < count; ++i) {
        QElapsedTimer timer;
        timer.start();
        if (!client.callSync(QStringLiteral("sandbox.list"), {}))
            return {};
        samples.append(double(timer.nsecsElapsed()) / 1e3);
    }
    return samples;
}

/// MiB/s of console scrollback fetched by console.attach (+ detach), one per sample.
QList<double> scrollbackRates(HelperClient &client, const QString &name, int count, qint64 *bytes)
{
    QList<double> samples;
    const QJsonObject params {{QStringLiteral("name"), name}};
    for (int i = 0; i < count; ++i) {
        QElapsedTimer timer;
        timer.start();
        const auto attached = client.callSync(QStringLiteral("console.attach"), params);
        if (!attached)
            return {};
        const qint64 size = attached->toObject().value(QStringLiteral("data")).toString().size();
        client.callSync(QStringLiteral("console.detach"), params);
        *bytes = size;
        samples.append(double(size) / (1 << 20) / (double(timer.nsecsElapsed()) / 1e9));
    }
    return samples;
}

bool waitForConsole(HelperClient &client, const QString &name, const QByteArray &needle,
                    int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        const auto attached =
            client.callSync(QStringLiteral("console.attach"), {{QStringLiteral("name"), name}});
        if (attached
            && QByteArray::fromBase64(
                   attached->toObject().value(QStringLiteral("data")).toString().toLatin1())
                   .contains(needle))
            return true;
        client.callSync(QStringLiteral("console.detach"), {{QStringLiteral("name"), name}});
        QThread::msleep(500);
    }
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("RPC latency and console throughput over "
                                                    "SSH vs the local socket"));
    parser.addHelpOption();
    const QCommandLineOption callsOption(QStringLiteral("calls"),
                                         QStringLiteral("Round trips per transport (1000)."),
                                         QStringLiteral("N"), QStringLiteral("1000"));
    parser.addOption(callsOption);
    parser.process(app);
    const int calls = std::max(10, parser.value(callsOption).toInt());

    if (qEnvironmentVariableIsEmpty("AIRLOCK_AIRLOCKD"))
        qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_AIRLOCKD_PATH);
    const ImageStore store(QStringLiteral(AIRLOCK_TEST_IMAGE_STORE));
    if (!store.find(QStringLiteral("default"))) {
        std::fprintf(stderr,
                     "bench_ssh: no default image (installers/guest/build-image.sh "
                     "--output %s/default)\n",
                     AIRLOCK_TEST_IMAGE_STORE);
        return 1;
    }
    test::HelperProcess helper;
    test::SshServer sshd;
    if (!helper.start() || !sshd.start()) {
        std::fprintf(stderr, "bench_ssh: %s%s\n", qPrintable(helper.lastError()),
                     qPrintable(sshd.lastError()));
        return 1;
    }
    SshEndpoint endpoint;
    endpoint.user = QStringLiteral("root");
    endpoint.host = QStringLiteral("127.0.0.1");
    endpoint.port = sshd.port();
    endpoint.socketPath = helper.socketPath();
    endpoint.identityFile = sshd.clientKeyPath();
    endpoint.knownHostsFile = sshd.knownHostsPath();
    endpoint.configFile = QStringLiteral("none");
    QFile knownHosts(endpoint.knownHostsFile);
    if (!knownHosts.open(QIODevice::WriteOnly))
        return 1;
    knownHosts.write(sshd.knownHostsLine().toUtf8() + '\n');
    knownHosts.close();

    HelperClient local(std::make_unique<LocalSocketTransport>(helper.socketPath()),
                       QStringLiteral("bench_ssh"));
    HelperClient remote(std::make_unique<SshTransport>(endpoint), QStringLiteral("bench_ssh"));
    if (!local.connectSync() || !remote.connectSync(20000)) {
        std::fprintf(stderr, "bench_ssh: cannot connect\n");
        return 1;
    }

    // A guest that fills its scrollback.
    const QString name = QStringLiteral("bench-ssh");
    const QJsonObject named {{QStringLiteral("name"), name}};
    if (!local.callSync(QStringLiteral("sandbox.create"), named)
        || !local.callSync(QStringLiteral("sandbox.start"), named, 120000)
        || !waitForConsole(local, name, "airlock-guest ready", 180000)) {
        std::fprintf(stderr, "bench_ssh: the guest did not boot\n");
        local.callSync(QStringLiteral("sandbox.kill"), named);
        return 1;
    }
    const QByteArray command =
        "i=0; while [ $i -lt 12000 ]; do echo \"$i 0123456789abcdefghijklmnopqrstuvwxyz"
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\"; i=$((i+1)); done; echo bench-fill-done\n";
    local.callSync(QStringLiteral("console.attach"), named);
    local.callSync(QStringLiteral("console.write"),
                   {{QStringLiteral("name"), name},
                    {QStringLiteral("data"), QString::fromLatin1(command.toBase64())}});
    local.callSync(QStringLiteral("console.detach"), named);
    const bool filled = waitForConsole(local, name, "\nbench-fill-done", 600000);

    QList<double> localRtt;
    QList<double> sshRtt;
    for (int round = 0; round < 5; ++round) { // interleaved against load changes
        localRtt += roundTrips(local, calls / 5);
        sshRtt += roundTrips(remote, calls / 5);
    }
    qint64 scrollback = 0;
    QList<double> localRate;
    QList<double> sshRate;
    for (int round = 0; round < 5; ++round) {
        localRate += scrollbackRates(local, name, 4, &scrollback);
        sshRate += scrollbackRates(remote, name, 4, &scrollback);
    }
    local.callSync(QStringLiteral("sandbox.kill"), named);
    if (localRtt.isEmpty() || sshRtt.isEmpty() || localRate.isEmpty() || sshRate.isEmpty()) {
        std::fprintf(stderr, "bench_ssh: a call failed\n");
        return 1;
    }
    std::printf("RPC round trip (sandbox.list), %d calls each, microseconds\n", calls);
    std::printf("  local socket   median %8.1f\n", median(localRtt));
    std::printf("  ssh            median %8.1f\n", median(sshRtt));
    std::printf("  ratio ssh/local       %8.2f\n", median(sshRtt) / median(localRtt));
    std::printf("console scrollback via console.attach, %.2f MiB base64%s, MiB/s\n",
                double(scrollback) / (1 << 20), filled ? "" : " (guest did not finish filling)");
    std::printf("  local socket   median %8.1f\n", median(localRate));
    std::printf("  ssh            median %8.1f\n", median(sshRate));
    std::printf("  ratio ssh/local       %8.2f\n", median(sshRate) / median(localRate));
    return 0;
}
