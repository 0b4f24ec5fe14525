// bench_gateway: HTTPS requests per second, per-request latency and 1 MiB download
// throughput through the real airlock-gateway versus directly to the same local upstream, in
// the same run, with 1 and 32 concurrent keep-alive connections (issue 3 "Benchmark";
// docs/gateway.md). Runs in a private network namespace (root); prints medians and ratios.
// Targets: throughput through the gateway >= 0.7 of direct; added median latency < 1 ms.
#include "core/pki/sandboxca.h"
#include "gatewaytestbed.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

using namespace airlock;
using namespace airlock::gateway;
using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

const QHostAddress kUpstream(u"127.0.0.11"_s);
constexpr int kRuns = 3;

struct Target
{
    bool throughGateway = false;
    QByteArray caPem; // what the client trusts: the sandbox CA or the upstream CA
};

struct RunResult
{
    double seconds = 0;
    qint64 requests = 0;
    qint64 bytes = 0;
    std::vector<double> latenciesMs;
    bool ok = true;
};

double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// `connections` clients in parallel, each doing `perConnection` GETs of `path` on one
// keep-alive connection.
RunResult run(const Target &target, int connections, int perConnection, const QString &path)
{
    std::vector<RunResult> partial(static_cast<size_t>(connections));
    std::vector<std::thread> threads;
    QElapsedTimer wall;
    wall.start();
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&, c] {
            RunResult &mine = partial[size_t(c)];
            GuestConnection client;
            // Through the gateway: the guest dials the upstream address and is redirected.
            if (!client.connectTcp(kUpstream, 443, target.throughGateway)
                || !client.startTls(u"pkg.test"_s, target.caPem)) {
                mine.ok = false;
                return;
            }
            const QByteArray request =
                "GET " + path.toLatin1() + " HTTP/1.1\r\nHost: pkg.test\r\n\r\n";
            for (int i = 0; i < perConnection; ++i) {
                QElapsedTimer one;
                one.start();
                client.write(request);
                const QByteArray response = client.readResponse(20000);
                if (responseStatus(response) != 200) {
                    mine.ok = false;
                    return;
                }
                mine.latenciesMs.push_back(double(one.nsecsElapsed()) / 1e6);
                mine.bytes += response.size();
                ++mine.requests;
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    RunResult total;
    total.seconds = double(wall.nsecsElapsed()) / 1e9;
    for (const RunResult &r : partial) {
        total.ok = total.ok && r.ok;
        total.requests += r.requests;
        total.bytes += r.bytes;
        total.latenciesMs.insert(total.latenciesMs.end(), r.latenciesMs.begin(),
                                 r.latenciesMs.end());
    }
    return total;
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, size_t(double(values.size()) * p))];
}

struct Figures
{
    double requestsPerSecond = 0;
    double medianLatencyMs = 0;
    double p99LatencyMs = 0;
    double mibPerSecond = 0;
};

// The median of kRuns runs of one scenario.
Figures measure(const Target &target, int connections, int perConnection, const QString &path,
                bool *ok)
{
    std::vector<double> rps, latency, p99, throughput;
    for (int i = 0; i < kRuns; ++i) {
        const RunResult r = run(target, connections, perConnection, path);
        *ok = *ok && r.ok;
        rps.push_back(double(r.requests) / r.seconds);
        latency.push_back(median(r.latenciesMs));
        p99.push_back(percentile(r.latenciesMs, 0.99));
        throughput.push_back(double(r.bytes) / (1024.0 * 1024.0) / r.seconds);
    }
    return {median(rps), median(latency), median(p99), median(throughput)};
}

} // namespace

int main(int argc, char *argv[])
{
    const QString network = enterGatewayTestNetwork();
    QCoreApplication app(argc, argv);
    std::signal(SIGPIPE, SIG_IGN);
    if (!network.isEmpty()) {
        std::fprintf(stderr, "bench_gateway: %s\n", qPrintable(network));
        return 1;
    }
    QTemporaryDir dir;
    auto sandboxCa = airlock::pki::SandboxCa::generate(u"bench"_s);
    auto upstreamCa = airlock::pki::SandboxCa::generate(u"bench-upstream"_s);
    if (!dir.isValid() || !sandboxCa || !upstreamCa
        || !sandboxCa->save(dir.filePath(u"sandbox.crt"_s), dir.filePath(u"sandbox.key"_s))
        || !upstreamCa->save(dir.filePath(u"upstream.crt"_s), dir.filePath(u"upstream.key"_s)))
        return 1;
    TestUpstream upstream;
    TestDnsServer dns;
    if (!upstream.start({kUpstream, 443, true, &*upstreamCa, {u"pkg.test"_s}, {}})
        || !dns.start(QHostAddress(kDnsUpstream), 53, {{u"pkg.test"_s, kUpstream.toString()}})) {
        std::fprintf(stderr, "bench_gateway: cannot start the local upstream\n");
        return 1;
    }
    const QJsonObject policy {{u"version"_s, 1},
                              {u"rules"_s, QJsonArray {QJsonObject {{u"host"_s, u"pkg.test"_s}}}}};
    QJsonObject config =
        gatewayTestConfig(dir.filePath(u"sandbox.crt"_s), dir.filePath(u"sandbox.key"_s),
                          dir.filePath(u"upstream.crt"_s), policy);
    QJsonObject limits = config.value(u"limits"_s).toObject();
    limits.insert(u"idleTimeoutMs"_s, 60000);
    config.insert(u"limits"_s, limits);
    GatewayProcess gateway;
    QString error;
    if (!gateway.startAndWaitReady(config, &error)) {
        std::fprintf(stderr, "bench_gateway: %s\n", qPrintable(error));
        return 1;
    }

    // airlockd reads the egress events as they come; so does the bench (a full control
    // channel would make the gateway queue them).
    std::atomic<bool> stopDrain = false;
    std::thread drain([&] {
        while (!stopDrain) {
            if (gateway.next(100))
                gateway.clearReceived();
        }
    });

    const Target direct {false, upstreamCa->certificatePem()};
    const Target through {true, sandboxCa->certificatePem()};
    bool ok = true;
    std::printf("bench_gateway: medians of %d runs; loopback in a private network namespace\n",
                kRuns);
    std::printf("%-34s %12s %12s %8s\n", "scenario", "direct", "gateway", "ratio");
    const auto row = [](const char *name, double d, double g) {
        std::printf("%-34s %12.2f %12.2f %8.2f\n", name, d, g, d > 0 ? g / d : 0.0);
    };
    for (const int connections : {1, 32}) {
        const int perConnection = connections == 1 ? 1000 : 100;
        const Figures d = measure(direct, connections, perConnection, u"/small"_s, &ok);
        const Figures g = measure(through, connections, perConnection, u"/small"_s, &ok);
        const QByteArray label = QByteArray::number(connections) + " conn";
        row(("requests/s, " + label).constData(), d.requestsPerSecond, g.requestsPerSecond);
        row(("median latency ms, " + label).constData(), d.medianLatencyMs, g.medianLatencyMs);
        row(("p99 latency ms, " + label).constData(), d.p99LatencyMs, g.p99LatencyMs);
        std::printf("%-34s %12s %12.3f\n", ("added median latency ms, " + label).constData(), "",
                    g.medianLatencyMs - d.medianLatencyMs);
    }
    for (const int connections : {1, 32}) {
        const int perConnection = connections == 1 ? 64 : 4;
        const Figures d = measure(direct, connections, perConnection, u"/big"_s, &ok);
        const Figures g = measure(through, connections, perConnection, u"/big"_s, &ok);
        const QByteArray label = "1 MiB MiB/s, " + QByteArray::number(connections) + " conn";
        row(label.constData(), d.mibPerSecond, g.mibPerSecond);
    }
    stopDrain = true;
    drain.join();
    if (!ok) {
        std::fprintf(stderr, "bench_gateway: some requests failed\n");
        return 1;
    }
    return 0;
}
