// bench_gateway: HTTPS requests per second, per-request latency and 1 MiB download
// throughput through the real airlock-gateway versus directly to the same local upstream, in
// the same run, with 1 and 32 concurrent keep-alive connections (issue 3 "Benchmark";
// docs/gateway.md). Runs in the gateway topology (GatewayTopology, root): "direct" dials from the
// host namespace, through the gateway from the guest's; prints medians and ratios.
// Targets: throughput through the gateway >= 0.7 of direct; added median latency < 1 ms.
#include "gatewaytopology.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

const QHostAddress kUpstream = topo::PkgServer;
constexpr int kRuns = 3;

struct Target
{
    int nsFd = -1; // where the client dials from: the host (direct) or the guest (redirected)
    QByteArray caPem; // what the client trusts: the upstream CA or the sandbox CA
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
            // Through the gateway: the guest dials the upstream address and is redirected.
            auto client = GuestConnection::connect(target.nsFd, kUpstream, 443);
            if (!client || !client->startTls("pkg.test"_ba, target.caPem, u"pkg.test"_s)) {
                mine.ok = false;
                return;
            }
            const QByteArray request =
                "GET " + path.toLatin1() + " HTTP/1.1\r\nHost: pkg.test\r\n\r\n";
            for (int i = 0; i < perConnection; ++i) {
                QElapsedTimer one;
                one.start();
                client->send(request);
                const HttpResponse response = client->readResponse(20000);
                if (response.status != 200) {
                    mine.ok = false;
                    return;
                }
                mine.latenciesMs.push_back(double(one.nsecsElapsed()) / 1e6);
                mine.bytes += response.size;
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
    QCoreApplication app(argc, argv);
    std::signal(SIGPIPE, SIG_IGN);
    GatewayTopology::Options options;
    options.tag = u"bg"_s;
    options.hosts = {{u"pkg.test"_s, kUpstream}};
    options.servers = {{u"pkg"_s, kUpstream, 443, ServerEndpoint::Kind::Https, u"pkg.test"_s,
                        ServerEndpoint::Answer::Hello}};
    options.policy = {{u"version"_s, 1},
                      {u"rules"_s, QJsonArray {QJsonObject {{u"host"_s, u"pkg.test"_s}}}}};
    options.limits = {
        {u"maxConnections"_s, 1024}, {u"idleTimeoutMs"_s, 60000}, {u"maxHeaderBytes"_s, 65536}};
    // The gateway's reader thread takes its egress events as they come, as airlockd does (a
    // full control channel would make the gateway queue them).
    GatewayTopology topology(options);
    if (!topology.start()) {
        std::fprintf(stderr, "bench_gateway: %s\n", qPrintable(topology.lastError()));
        return 1;
    }

    const Target direct {topology.hostNs(), topology.upstreamCa().certificatePem()};
    const Target through {topology.guestNs(), topology.sandboxCaPem()};
    bool ok = true;
    std::printf("bench_gateway: medians of %d runs; veths between test network namespaces\n",
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
    if (!ok) {
        std::fprintf(stderr, "bench_gateway: some requests failed\n");
        return 1;
    }
    return 0;
}
