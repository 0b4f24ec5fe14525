// Guest agent benchmark through a real airlockd and a TCG guest (docs/agent-protocol.md,
// docs/protocol.md "Exec and files"), against raw baselines measured in the same run over the
// same virtio-serial device: airlockd runs with --bench-port, which gives the guest a second
// port (org.airlock.bench, on the agent's bus) whose host end RUNDIR/bench.sock this program
// reads itself, while a plain guest program (`cat` as an echo, `head` as a source or sink) serves
// the guest end. Measured:
//
//   - exec round trip of `true` (exec.start to exec.exit) through HelperClient, and a whole
//     `airlockctl exec NAME -- true`, against a raw echo round trip of 64 bytes;
//   - stdout throughput (the guest writes N MiB to its stdout), files.write and files.read
//     throughput of N MiB (512 KiB per call, and `airlockctl cp` both ways), against the raw
//     port's throughput in each direction;
//   - airlockd's RSS growth while the guest writes N MiB to a client that reads slowly.
//
// Prints the figures and ratios with the targets: exec `true` < 30 ms median and at most
// 3x the raw echo; file throughput at least 0.5 of the raw port; RSS growth < 16 MiB.
//
//     build/tests/bench/bench_agent [--runs 200] [--mib 64] [--image debian] [--only PHASES]
//                                [--image-store DIR]

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "guestconsole.h"
#include "helperprocess.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <map>

using namespace airlock;

namespace {

constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kChunkBytes = 512 * 1024; // files.read / files.write per call (the helper's)
constexpr int kCallTimeoutMs = 120000;
const QString kName = QStringLiteral("bench-agent");

/// The guest's device node of the bench port, into $d (a shell prefix).
const QString kFindPort = QStringLiteral(
    "d=; for p in /sys/class/virtio-ports/*; do [ \"$(cat $p/name)\" = org.airlock.bench ] && "
    "d=/dev/${p##*/}; done; [ -n \"$d\" ] || exit 99; ");

double percentile(QList<double> values, double fraction)
{
    if (values.isEmpty())
        return 0;
    std::sort(values.begin(), values.end());
    const qsizetype at =
        std::min(values.size() - 1, qsizetype(fraction * double(values.size() - 1) + 0.5));
    return values[at];
}

double mibPerSecond(qint64 bytes, qint64 nanoseconds)
{
    return double(bytes) / double(kMiB) / (double(nanoseconds) / 1e9);
}

/// Resident set size of process `pid` in bytes (VmRSS), or -1.
qint64 residentBytes(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong() * 1024;
    }
    return -1;
}

/// What the notifications said about each process this connection started.
struct ExecTracker
{
    std::map<qint64, qint64> outputBytes; ///< by pid
    std::map<qint64, QJsonObject> exits; ///< by pid
};

class Bench
{
public:
    Bench(HelperClient &client, test::HelperProcess &helper) : m_client(client), m_helper(helper)
    {
        QObject::connect(&m_client, &HelperClient::notificationReceived,
                         [this](const QString &method, const QJsonObject &params) {
                             const qint64 pid = params.value(QStringLiteral("pid")).toInteger();
                             if (method == u"exec.output")
                                 m_tracker.outputBytes[pid] +=
                                     QByteArray::fromBase64(
                                         params.value(QStringLiteral("data")).toString().toLatin1())
                                         .size();
                             else if (method == u"exec.exit")
                                 m_tracker.exits[pid] = params;
                             if (m_loop.isRunning())
                                 m_loop.quit();
                         });
    }

    /// exec.start of `params`; the pid, or 0 (printed why).
    qint64 start(QJsonObject params)
    {
        params.insert(QStringLiteral("name"), kName);
        const auto answer = m_client.callSync(QStringLiteral("exec.start"), params, kCallTimeoutMs);
        if (!answer) {
            std::fprintf(stderr, "bench_agent: exec.start: %s\n",
                         qPrintable(answer.error().message));
            return 0;
        }
        return answer->toObject().value(QStringLiteral("pid")).toInteger();
    }
    /// Runs the event loop until process `pid` exited; its exec.exit params (empty on timeout).
    QJsonObject waitForExit(qint64 pid, int timeoutMs = kCallTimeoutMs)
    {
        QElapsedTimer timer;
        timer.start();
        while (!m_tracker.exits.contains(pid) && timer.elapsed() < timeoutMs) {
            QTimer::singleShot(1000, &m_loop, &QEventLoop::quit);
            m_loop.exec();
        }
        return m_tracker.exits.contains(pid) ? m_tracker.exits.at(pid) : QJsonObject();
    }
    /// A shell line to its end; its stdout byte count, or -1 when it failed.
    qint64 shell(const QString &command, qint64 *pidOut = nullptr)
    {
        const qint64 pid = start({{QStringLiteral("command"), command}});
        if (pidOut)
            *pidOut = pid;
        if (pid == 0)
            return -1;
        const QJsonObject exit = waitForExit(pid);
        if (exit.value(QStringLiteral("exitCode")).toInt(-1) != 0) {
            std::fprintf(stderr, "bench_agent: '%s' ended %s\n", qPrintable(command),
                         QJsonDocument(exit).toJson(QJsonDocument::Compact).constData());
            return -1;
        }
        return m_tracker.outputBytes[pid];
    }
    Result<QJsonValue> call(const QString &method, QJsonObject params)
    {
        params.insert(QStringLiteral("name"), kName);
        return m_client.callSync(method, params, kCallTimeoutMs);
    }
    QString benchSocket() const
    {
        return QDir(m_helper.stateDir()).filePath(QStringLiteral("run/%1/bench.sock").arg(kName));
    }

    HelperClient &m_client;
    test::HelperProcess &m_helper;
    ExecTracker m_tracker;
    QEventLoop m_loop;
};

/// Microseconds per exec of `true` (exec.start to exec.exit), one per sample.
/// `startedPart` gets the part up to exec.start's answer (the guest's Started).
QList<double> execRoundTrips(Bench &bench, int runs, QList<double> *startedPart)
{
    QList<double> samples;
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer timer;
        timer.start();
        const qint64 pid =
            bench.start({{QStringLiteral("argv"), QJsonArray {QStringLiteral("true")}}});
        startedPart->append(double(timer.nsecsElapsed()) / 1e3);
        if (pid == 0 || bench.waitForExit(pid).value(QStringLiteral("exitCode")).toInt(-1) != 0)
            return {};
        samples.append(double(timer.nsecsElapsed()) / 1e3);
    }
    return samples;
}

/// Microseconds per `airlockctl exec NAME -- true` process, one per sample.
QList<double> ctlRoundTrips(const QString &socket, int runs)
{
    QList<double> samples;
    for (int i = 0; i < runs; ++i) {
        QProcess ctl;
        QElapsedTimer timer;
        timer.start();
        ctl.start(QStringLiteral(AIRLOCK_AIRLOCKCTL_PATH),
                  {QStringLiteral("--socket"), socket, QStringLiteral("exec"), kName,
                   QStringLiteral("--"), QStringLiteral("true")});
        if (!ctl.waitForFinished(kCallTimeoutMs) || ctl.exitCode() != 0) {
            std::fprintf(stderr, "bench_agent: airlockctl exec: %s\n",
                         ctl.readAllStandardError().constData());
            return {};
        }
        samples.append(double(timer.nsecsElapsed()) / 1e3);
    }
    return samples;
}

/// Microseconds per round trip of `message` over the bench port: the guest program answers
/// each with as many bytes (`cat`: the same bytes; the spawn loop: a line per line).
QList<double> portRoundTrips(QLocalSocket &port, int runs, const QByteArray &message)
{
    QList<double> samples;
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer timer;
        timer.start();
        port.write(message);
        port.flush();
        qint64 got = 0;
        while (got < message.size()) {
            if (port.bytesAvailable() == 0 && !port.waitForReadyRead(10000))
                return {};
            got += port.read(message.size() - got).size();
        }
        samples.append(double(timer.nsecsElapsed()) / 1e3);
    }
    return samples;
}

void printLatency(const char *label, const QList<double> &samples)
{
    std::printf("  %-34s median %8.2f ms  p99 %8.2f ms  (%lld runs)\n", label,
                percentile(samples, 0.5) / 1e3, percentile(samples, 0.99) / 1e3,
                static_cast<long long>(samples.size()));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Guest agent exec and file speed vs the raw virtio-serial port"));
    parser.addHelpOption();
    const QCommandLineOption runsOption(QStringLiteral("runs"),
                                        QStringLiteral("Round trips per latency figure (200)."),
                                        QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption mibOption(QStringLiteral("mib"),
                                       QStringLiteral("MiB per throughput figure (64)."),
                                       QStringLiteral("MIB"), QStringLiteral("64"));
    const QCommandLineOption imageOption(QStringLiteral("image"),
                                         QStringLiteral("Guest image (default; or debian)."),
                                         QStringLiteral("ID"), QStringLiteral("default"));
    const QCommandLineOption onlyOption(
        QStringLiteral("only"),
        QStringLiteral("Only these phases, comma-separated: latency, raw, stdout, files, cp, rss "
                       "(for profiling one; stdout and files measure raw too)."),
        QStringLiteral("PHASES"));
    const QCommandLineOption storeOption(
        QStringLiteral("image-store"),
        QStringLiteral("Image store (default the tests' store); to compare two agents."),
        QStringLiteral("DIR"));
    parser.addOptions({runsOption, mibOption, imageOption, onlyOption, storeOption});
    parser.process(app);
    const QStringList phases = parser.value(onlyOption).split(u',', Qt::SkipEmptyParts);
    const int runs = std::max(10, parser.value(runsOption).toInt());
    const qint64 bytes = std::max(1, parser.value(mibOption).toInt()) * kMiB;
    const QString image = parser.value(imageOption);

    if (qEnvironmentVariableIsEmpty("AIRLOCK_AIRLOCKD"))
        qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_AIRLOCKD_PATH);
    test::HelperProcess helper({QStringLiteral("--bench-port")});
    const QString helperLog = helper.tempPath() + QStringLiteral("/airlockd.log");
    helper.setOutputFile(helperLog); // its debug lines would bury the figures
    if (parser.isSet(storeOption))
        helper.setImageStore(parser.value(storeOption));
    if (!helper.start()) {
        std::fprintf(stderr, "bench_agent: %s\n", qPrintable(helper.lastError()));
        return 1;
    }
    HelperClient client(std::make_unique<LocalSocketTransport>(helper.socketPath()),
                        QStringLiteral("bench_agent"));
    if (!client.connectSync()) {
        std::fprintf(stderr, "bench_agent: cannot connect\n");
        return 1;
    }
    Bench bench(client, helper);
    const QJsonObject named {{QStringLiteral("name"), kName}};
    if (!client.callSync(QStringLiteral("sandbox.create"),
                         {{QStringLiteral("name"), kName}, {QStringLiteral("image"), image}})
        || !client.callSync(QStringLiteral("sandbox.start"), named, 120000)) {
        std::fprintf(stderr, "bench_agent: the sandbox did not start\n");
        return 1;
    }
    {
        test::GuestConsole console(helper.socketPath(), kName);
        if (console.waitFor("airlock-guest ready", 0, 180000) < 0) {
            std::fprintf(stderr, "bench_agent: the guest did not boot (%s)\n",
                         qPrintable(helperLog));
            return 1;
        }
    }
    const qint64 helperPid = helper.pid();
    std::printf("airlock agent benchmark: image %s, %d runs, %lld MiB, TCG guest\n",
                qPrintable(image), runs, static_cast<long long>(bytes / kMiB));

    // The raw port: our end first (a guest program opening the port sees no host otherwise).
    QLocalSocket port;
    port.connectToServer(bench.benchSocket());
    if (!port.waitForConnected(5000)) {
        std::fprintf(stderr, "bench_agent: %s: %s\n", qPrintable(bench.benchSocket()),
                     qPrintable(port.errorString()));
        return 1;
    }
    const QString mibText = QString::number(bytes);
    const auto want = [&phases](const char *phase) {
        return phases.isEmpty() || phases.contains(QLatin1String(phase));
    };
    const auto failed = [&](const char *what) {
        std::fprintf(stderr, "bench_agent: %s (airlockd's log: %s)\n", what, qPrintable(helperLog));
        client.callSync(QStringLiteral("sandbox.kill"), named);
        return 1;
    };
    bench.shell(QStringLiteral("true")); // warm up: the first exec, the page cache
    double rawOut = 0;
    double rawIn = 0;

    if (want("latency")) {
        // The echo program reads and writes the one descriptor of the port.
        const qint64 echoPid = bench.start(
            {{QStringLiteral("command"), kFindPort + QStringLiteral("exec cat 0<>$d 1>&0")}});
        if (echoPid == 0)
            return failed("no echo program");
        bench.call(QStringLiteral("exec.detach"), {{QStringLiteral("pid"), echoPid}});
        QList<double> echo;
        QList<double> exec;
        QList<double> started;
        for (int round = 0; round < 5; ++round) { // interleaved against load changes
            echo += portRoundTrips(port, runs / 5, QByteArray(64, 'e'));
            exec += execRoundTrips(bench, runs / 5, &started);
        }
        bench.shell(QStringLiteral("kill %1").arg(echoPid));
        // The same work as exec `true` without the agent: a shell on the port starts /bin/true
        // (fork and exec of busybox, as the agent does) for each line, then answers a line.
        const qint64 spawnPid = bench.start(
            {{QStringLiteral("command"),
              kFindPort
                  + QStringLiteral(
                      "exec sh -c 'while read -r l; do /bin/true; echo; done' 0<>$d 1>&0")}});
        if (spawnPid == 0)
            return failed("no spawn program");
        bench.call(QStringLiteral("exec.detach"), {{QStringLiteral("pid"), spawnPid}});
        const QList<double> spawn = portRoundTrips(port, runs, "\n");
        bench.shell(QStringLiteral("kill %1").arg(spawnPid));
        const QList<double> viaCtl = ctlRoundTrips(helper.socketPath(), std::max(10, runs / 4));
        if (echo.isEmpty() || exec.isEmpty() || spawn.isEmpty() || viaCtl.isEmpty())
            return failed("a round trip failed");
        port.readAll();
        const double execMedian = percentile(exec, 0.5);
        std::printf("round trips\n");
        printLatency("raw port echo (64 bytes)", echo);
        printLatency("raw port, spawn /bin/true", spawn);
        printLatency("exec true (HelperClient)", exec);
        printLatency("  of which exec.start answered", started);
        printLatency("airlockctl exec -- true", viaCtl);
        std::printf("  exec / raw echo            %8.2f   (target <= 3)\n",
                    execMedian / percentile(echo, 0.5));
        std::printf("  exec / raw spawn           %8.2f\n", execMedian / percentile(spawn, 0.5));
        std::printf("  exec median                %8.2f ms (target < 30 ms)\n", execMedian / 1e3);
        std::fflush(stdout);
    }

    QElapsedTimer timer;
    if (want("raw") || want("stdout") || want("files")) {
        // Guest to host: `head` writes into the port, we read.
        timer.start();
        const qint64 pid =
            bench.start({{QStringLiteral("command"),
                          kFindPort + QStringLiteral("head -c %1 /dev/zero >$d").arg(mibText)}});
        if (pid == 0)
            return failed("no raw source");
        qint64 got = 0;
        while (got < bytes) {
            if (port.bytesAvailable() == 0 && !port.waitForReadyRead(30000))
                break;
            got += port.read(bytes - got).size();
        }
        rawOut = mibPerSecond(bytes, timer.nsecsElapsed());
        bench.waitForExit(pid);
        if (got < bytes)
            return failed("the raw port did not deliver everything");
        // Host to guest: we write, `head` reads the port to /dev/null.
        const QByteArray block(kMiB, 'r');
        timer.start();
        const qint64 sink =
            bench.start({{QStringLiteral("command"),
                          kFindPort + QStringLiteral("head -c %1 <$d >/dev/null").arg(mibText)}});
        if (sink == 0)
            return failed("no raw sink");
        for (qint64 sent = 0; sent < bytes; sent += block.size())
            port.write(block);
        while (port.bytesToWrite() > 0 && port.waitForBytesWritten(30000)) { }
        if (bench.waitForExit(sink).value(QStringLiteral("exitCode")).toInt(-1) != 0)
            return failed("the raw sink failed");
        rawIn = mibPerSecond(bytes, timer.nsecsElapsed());
        std::printf("throughput, %lld MiB, MiB/s\n", static_cast<long long>(bytes / kMiB));
        std::printf("  raw port guest -> host     %8.1f\n", rawOut);
        std::printf("  raw port host -> guest     %8.1f\n", rawIn);
        std::fflush(stdout);
    }

    if (want("stdout")) {
        timer.start();
        const qint64 streamed = bench.shell(QStringLiteral("head -c %1 /dev/zero").arg(mibText));
        const double rate = mibPerSecond(bytes, timer.nsecsElapsed());
        if (streamed != bytes)
            return failed("exec stdout lost bytes");
        std::printf("  exec stdout                %8.1f   %.2f of raw\n", rate, rate / rawOut);
        std::fflush(stdout);
    }

    const QString path = QStringLiteral("/tmp/bench-agent.bin");
    if (want("files")) {
        // 512 KiB per call, the helper's limit.
        QByteArray chunk(kChunkBytes, Qt::Uninitialized);
        QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(chunk.data()),
                                              chunk.size() / 4);
        const QString chunkText = QString::fromLatin1(chunk.toBase64());
        timer.start();
        for (qint64 at = 0; at < bytes; at += kChunkBytes) {
            if (!bench.call(QStringLiteral("files.write"),
                            {{QStringLiteral("path"), path},
                             {QStringLiteral("data"), chunkText},
                             {QStringLiteral("append"), at > 0}}))
                return failed("files.write failed");
        }
        const double writeRate = mibPerSecond(bytes, timer.nsecsElapsed());
        timer.start();
        qint64 readBack = 0;
        for (bool eof = false; !eof;) {
            const auto answer = bench.call(QStringLiteral("files.read"),
                                           {{QStringLiteral("path"), path},
                                            {QStringLiteral("offset"), readBack},
                                            {QStringLiteral("length"), kChunkBytes}});
            if (!answer)
                return failed("files.read failed");
            const QJsonObject result = answer->toObject();
            readBack +=
                QByteArray::fromBase64(result.value(QStringLiteral("data")).toString().toLatin1())
                    .size();
            eof = result.value(QStringLiteral("eof")).toBool();
        }
        const double readRate = mibPerSecond(bytes, timer.nsecsElapsed());
        bench.shell(QStringLiteral("rm -f ") + path);
        if (readBack != bytes)
            return failed("files.read lost bytes");
        std::printf("  files.write                %8.1f   %.2f of raw (target >= 0.5)\n", writeRate,
                    writeRate / rawIn);
        std::printf("  files.read                 %8.1f   %.2f of raw (target >= 0.5)\n", readRate,
                    readRate / rawOut);
        std::fflush(stdout);
    }

    if (want("cp")) {
        // airlockctl cp both ways; a 256 MiB guest holds one copy in its RAM at a time.
        QTemporaryDir hostDir;
        const QString hostFile = hostDir.filePath(QStringLiteral("copy.bin"));
        QFile file(hostFile);
        if (!file.open(QIODevice::WriteOnly))
            return failed("no host file");
        QByteArray block(kMiB, Qt::Uninitialized);
        QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(block.data()),
                                              block.size() / 4);
        for (qint64 at = 0; at < bytes; at += block.size())
            file.write(block);
        file.close();
        const auto cp = [&](const QString &from, const QString &to) -> double {
            QProcess ctl;
            timer.start();
            ctl.start(
                QStringLiteral(AIRLOCK_AIRLOCKCTL_PATH),
                {QStringLiteral("--socket"), helper.socketPath(), QStringLiteral("cp"), from, to});
            if (!ctl.waitForFinished(600000) || ctl.exitCode() != 0) {
                std::fprintf(stderr, "bench_agent: airlockctl cp: %s\n",
                             ctl.readAllStandardError().constData());
                return -1;
            }
            return mibPerSecond(bytes, timer.nsecsElapsed());
        };
        const double in = cp(hostFile, kName + u':' + path);
        const double out = cp(kName + u':' + path, hostFile);
        bench.shell(QStringLiteral("rm -f ") + path);
        if (in < 0 || out < 0)
            return failed("airlockctl cp failed");
        std::printf("  airlockctl cp into guest   %8.1f   %.2f of raw\n", in,
                    rawIn > 0 ? in / rawIn : 0);
        std::printf("  airlockctl cp out of guest %8.1f   %.2f of raw\n", out,
                    rawOut > 0 ? out / rawOut : 0);
        std::fflush(stdout);
    }

    if (want("rss")) {
        // The guest writes to a client that reads about 8 MiB/s of JSON: the helper must stop
        // it at its pipe instead of buffering (docs/protocol.md, exec.start "Backpressure").
        const qint64 rssBefore = residentBytes(helperPid);
        qint64 rssPeak = rssBefore;
        QLocalSocket slow;
        slow.setReadBufferSize(64 * 1024);
        slow.connectToServer(helper.socketPath());
        if (!slow.waitForConnected(5000))
            return failed("no slow client");
        const QJsonObject request {
            {QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), 1},
            {QStringLiteral("method"), QStringLiteral("exec.start")},
            {QStringLiteral("params"),
             QJsonObject {{QStringLiteral("name"), kName},
                          {QStringLiteral("command"),
                           QStringLiteral("head -c %1 /dev/zero").arg(mibText)}}}};
        slow.write(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
        slow.flush();
        QByteArray line;
        qint64 data = 0;
        bool exited = false;
        timer.start();
        while (!exited && timer.elapsed() < 900000) {
            if (slow.bytesAvailable() == 0)
                slow.waitForReadyRead(1000);
            line += slow.read(64 * 1024);
            for (qsizetype end; (end = line.indexOf('\n')) >= 0;) {
                const QJsonObject message = QJsonDocument::fromJson(line.first(end)).object();
                line.remove(0, end + 1);
                const QString method = message.value(QStringLiteral("method")).toString();
                const QJsonObject params = message.value(QStringLiteral("params")).toObject();
                if (method == u"exec.output")
                    data += QByteArray::fromBase64(
                                params.value(QStringLiteral("data")).toString().toLatin1())
                                .size();
                exited = exited || method == u"exec.exit";
            }
            rssPeak = std::max(rssPeak, residentBytes(helperPid));
            QThread::msleep(8); // the slow reader: 64 KiB per 8 ms at most
        }
        const double rate = mibPerSecond(data, timer.nsecsElapsed());
        if (!exited || data != bytes)
            return failed("the slow reader did not get everything");
        std::printf("airlockd RSS, guest writing %lld MiB to a slow reader (%.1f MiB/s)\n",
                    static_cast<long long>(bytes / kMiB), rate);
        std::printf("  before %.1f MiB, peak %.1f MiB, growth %.1f MiB (target < 16)\n",
                    double(rssBefore) / kMiB, double(rssPeak) / kMiB,
                    double(rssPeak - rssBefore) / kMiB);
    }
    client.callSync(QStringLiteral("sandbox.kill"), named);
    return 0;
}
