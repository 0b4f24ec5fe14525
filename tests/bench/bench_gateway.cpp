// bench_gateway: the real airlock-gateway against a real origin and a standard proxy, side by
// side in one run (issue 16, section 3; docs/gateway.md; README.md, "Benchmarks").
//
// Parts, all inside the gateway topology's own network namespaces (GatewayTopology, root):
// - origin: nginx (one process, TLS with a pkg.test leaf of the topology's upstream test CA) in
//   the upstream namespace on pkg.test's address:443, serving /small (6 bytes) and /big (1 MiB);
// - load client: wrk, one thread, with a private /etc/hosts (unshare --mount + a bind mount)
//   so https://pkg.test/ resolves to the address of the path under test and carries SNI
//   pkg.test;
// - paths, interleaved per round with the order rotated: direct (wrk in the host namespace →
//   nginx), gateway (wrk in the guest namespace → the sandbox table's redirect →
//   airlock-gateway → nginx), haproxy (wrk in the host namespace → HAProxy, nbthread 1,
//   terminating TLS and re-encrypting to nginx with verify required against the upstream CA
//   and SNI pkg.test).
// Rows: small responses at 1/32/512 keep-alive connections (requests/s), 1 MiB at 1/32
// (MiB/s), new TLS connections per second with `Connection: close` at 1/32 clients, median
// latency and the gateway's added median latency, proxy CPU per request and per new
// connection (/proc/PID/stat utime+stime), proxy RSS (VmRSS, max sampled during the run) at
// 32 and 512 connections and after they closed (the lowest in the second after). Ratios are
// medians of per-round ratios; the issue's targets are printed beside them.
//
// nginx, haproxy and wrk come from installers/dev/install-bench-deps.sh. Every child is killed
// (and the namespaces and temporary files removed) on exit, on SIGINT/SIGTERM/SIGHUP, and by
// PR_SET_PDEATHSIG when this process dies some other way.
#include "gatewaytopology.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTemporaryDir>

#include <openssl/bio.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <map>
#include <netinet/in.h>
#include <optional>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace airlock::test;
using namespace Qt::StringLiterals;

namespace {

const QHostAddress kOrigin = topo::PkgServer; // nginx, and what the guest dials
const QHostAddress kHaproxy {u"127.0.0.1"_s}; // HAProxy's frontend, in the host namespace
constexpr int kBigBytes = 1024 * 1024;

// ---- children and the signal path --------------------------------------------------------

// Pids the signal handler kills (0: free slot). Async-signal-safe: atomics and kill(2) only.
std::array<std::atomic<pid_t>, 8> g_children {};
std::atomic<bool> g_interrupted {false};

void onSignal(int)
{
    g_interrupted = true;
    for (auto &pid : g_children) {
        const pid_t p = pid.load();
        if (p > 0)
            ::kill(p, SIGKILL);
    }
}

void registerChild(pid_t pid)
{
    for (auto &slot : g_children) {
        pid_t expected = 0;
        if (slot.compare_exchange_strong(expected, pid))
            return;
    }
}

void unregisterChild(pid_t pid)
{
    for (auto &slot : g_children) {
        pid_t expected = pid;
        slot.compare_exchange_strong(expected, 0);
    }
}

/// One child process (nginx, haproxy, wrk): dies with us (PR_SET_PDEATHSIG), is killed by the
/// signal handler and by the destructor. Started on the main thread (the death signal follows
/// the thread that forked).
class Child final
{
public:
    ~Child() { stop(); }

    bool start(const QString &program, const QStringList &arguments, const QString &logFile = {})
    {
        m_process.setProgram(program);
        m_process.setArguments(arguments);
        if (logFile.isEmpty()) {
            m_process.setProcessChannelMode(QProcess::SeparateChannels);
        } else {
            m_process.setProcessChannelMode(QProcess::MergedChannels);
            m_process.setStandardOutputFile(logFile);
        }
        m_process.setChildProcessModifier([] {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            // A signal handler's SIG_IGN would be inherited; the children get the defaults.
            std::signal(SIGPIPE, SIG_DFL);
        });
        m_process.start();
        if (!m_process.waitForStarted(5000))
            return false;
        m_pid = pid_t(m_process.processId());
        registerChild(m_pid);
        return true;
    }
    pid_t pid() const { return m_pid; }
    bool running() const { return m_process.state() == QProcess::Running; }
    /// Waits for the exit; false on timeout (the child is killed then).
    bool wait(int timeoutMs)
    {
        const bool finished = m_process.waitForFinished(timeoutMs);
        if (!finished)
            stop();
        unregisterChild(m_pid);
        return finished;
    }
    QByteArray output() { return m_process.readAllStandardOutput(); }
    QByteArray errors() { return m_process.readAllStandardError(); }
    int exitCode() const { return m_process.exitCode(); }
    void stop()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
        if (m_pid > 0)
            unregisterChild(m_pid);
        m_pid = 0;
    }

private:
    QProcess m_process;
    pid_t m_pid = 0;
};

QString nsPath(int nsFd)
{
    return u"/proc/%1/fd/%2"_s.arg(QCoreApplication::applicationPid()).arg(nsFd);
}

/// `nsenter --net=NS -- PROGRAM ARGS`: nsenter execs PROGRAM (no fork for a network namespace
/// alone), so the child's pid is PROGRAM's.
QStringList inNs(int nsFd, const QString &program, const QStringList &arguments)
{
    return QStringList {u"--net="_s + nsPath(nsFd), u"--"_s, program} + arguments;
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(bytes) == bytes.size();
}

// Waits until a TCP listener accepts on address:port in namespace nsFd (the fact that a server
// is up); false when `child` exited or after timeoutMs.
bool waitListening(int nsFd, const QHostAddress &address, quint16 port, Child &child, int timeoutMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (std::chrono::steady_clock::now() < deadline && child.running() && !g_interrupted) {
        const bool accepted = inNamespace(nsFd, [&] {
            const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in sa {};
            sa.sin_family = AF_INET;
            sa.sin_port = htons(port);
            sa.sin_addr.s_addr = htonl(address.toIPv4Address());
            const bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0;
            ::close(fd);
            return ok;
        });
        if (accepted)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// The first line `program flag` prints (stdout or stderr): versions for the header.
QString firstLine(const QString &program, const QString &flag)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, {flag});
    process.waitForFinished(5000);
    return QString::fromLocal8Bit(process.readAll()).section(u'\n', 0, 0).trimmed();
}

// ---- /proc readings ----------------------------------------------------------------------

/// utime + stime of every thread of `pid`, in seconds (/proc/PID/stat fields 14 and 15).
double cpuSeconds(pid_t pid)
{
    QFile file(u"/proc/%1/stat"_s.arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray stat = file.readAll();
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return 0;
    return double(fields[11].toLongLong() + fields[12].toLongLong())
        / double(::sysconf(_SC_CLK_TCK));
}

/// VmRSS of `pid` in KiB (0 when gone).
qint64 rssKiB(pid_t pid)
{
    QFile file(u"/proc/%1/status"_s.arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return 0;
}

/// Open fds of `pid` (its sockets come and go with the connections it holds).
int fdCount(pid_t pid)
{
    return int(
        QDir(u"/proc/%1/fd"_s.arg(pid)).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).size());
}

/// Samples VmRSS of a pid every 10 ms on its own thread and keeps the maximum.
class RssSampler final
{
public:
    explicit RssSampler(pid_t pid)
        : m_thread([this, pid] {
            while (!m_stop) {
                m_max = std::max<qint64>(m_max, rssKiB(pid));
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        })
    { }
    ~RssSampler() { finish(); }
    qint64 finish()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
        return m_max;
    }

private:
    std::atomic<bool> m_stop {false};
    std::atomic<qint64> m_max {0};
    std::thread m_thread;
};

// ---- wrk -------------------------------------------------------------------------------

struct WrkResult
{
    bool ok = false;
    double seconds = 0;
    qint64 requests = 0;
    qint64 bytes = 0;
    qint64 errors = 0; // connect + read + write + status + timeout
    double medianUs = 0;
    QString error;
};

// wrk's done() hook prints exact counts (µs, bytes) instead of its rounded summary.
constexpr char kWrkScript[] = R"(
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("AIRLOCK-WRK %d %d %d %d %d %d %d %d %.1f\n", summary.duration,
    summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50.0)))
end
)";

struct Setup
{
    QString dir;
    QString wrk, unshare, nsenter, nginx, haproxy;
    int hostNs = -1, guestNs = -1, upstreamNs = -1;
};

/// Runs wrk in namespace nsFd with `hostsFile` as its /etc/hosts.
WrkResult runWrk(const Setup &s, int nsFd, const QString &hostsFile, const QString &path,
                 int connections, bool close, int seconds)
{
    QStringList wrkArgs {u"-t1"_s,
                         u"-c"_s + QString::number(connections),
                         u"-d"_s + QString::number(seconds) + u's',
                         u"--timeout"_s,
                         u"10s"_s,
                         u"-s"_s,
                         s.dir + u"/report.lua"_s};
    if (close)
        wrkArgs << u"-H"_s << u"Connection: close"_s;
    wrkArgs << u"https://pkg.test"_s + path;
    // A private mount namespace: the bind mount of the hosts file is seen by wrk alone.
    const QString script = u"h=$1; n=$2; shift 2; mount --bind \"$h\" /etc/hosts && "
                           "exec \"$NSENTER\" --net=\"$n\" -- \"$@\""_s;
    Child wrk;
    qputenv("NSENTER", s.nsenter.toLocal8Bit());
    WrkResult result;
    if (!wrk.start(s.unshare,
                   QStringList {u"--mount"_s, u"--propagation"_s, u"private"_s, u"--"_s, u"sh"_s,
                                u"-c"_s, script, u"sh"_s, hostsFile, nsPath(nsFd), s.wrk}
                       + wrkArgs)) {
        result.error = u"cannot start wrk"_s;
        return result;
    }
    if (!wrk.wait((seconds + 30) * 1000)) {
        result.error = u"wrk did not finish"_s;
        return result;
    }
    const QByteArray out = wrk.output();
    const qsizetype at = out.indexOf("AIRLOCK-WRK ");
    if (wrk.exitCode() != 0 || at < 0) {
        result.error = u"wrk failed: "_s + QString::fromLocal8Bit(out + wrk.errors()).trimmed();
        return result;
    }
    const QList<QByteArray> f = out.mid(at).split('\n').first().split(' ');
    result.seconds = f.value(1).toDouble() / 1e6;
    result.requests = f.value(2).toLongLong();
    result.bytes = f.value(3).toLongLong();
    for (int i = 4; i <= 8; ++i)
        result.errors += f.value(i).toLongLong();
    result.medianUs = f.value(9).toDouble();
    result.ok = result.seconds > 0 && result.requests > 0;
    if (!result.ok)
        result.error = u"wrk made no requests: "_s + QString::fromLocal8Bit(out).trimmed();
    return result;
}

// ---- scenarios and rows ----------------------------------------------------------------

enum Path { Direct, Gateway, Haproxy, PathCount };
const char *const kPathNames[] = {"direct", "gateway", "haproxy"};

struct Scenario
{
    const char *key;
    const char *path; // URL path
    int connections;
    bool close; // Connection: close (a new TLS connection per request)
};

const Scenario kScenarios[] = {
    {"small1", "/small", 1, false},     {"small32", "/small", 32, false},
    {"small512", "/small", 512, false}, {"big1", "/big", 1, false},
    {"big32", "/big", 32, false},       {"new1", "/small", 1, true},
    {"new32", "/small", 32, true},
};

/// What one run of one scenario on one path measured.
struct Sample
{
    WrkResult wrk;
    double proxyCpuSeconds = 0; // NaN-free: 0 for direct
    qint64 idleRssKiB = 0, maxRssKiB = 0, afterRssKiB = 0;
};

/// Per round, per path: the value of a row (NaN when not applicable).
using Values = std::array<double, PathCount>;

double median(std::vector<double> v)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Row
{
    QString name;
    QString unit;
    std::vector<Values> rounds;
    // Target on gateway÷direct / gateway÷haproxy (0: none); minimum or maximum.
    double minVsDirect = 0, minVsHaproxy = 0, maxVsHaproxy = 0;
};

QString fmt(double v, int precision = 2)
{
    return std::isnan(v) ? u"-"_s : QString::number(v, 'f', precision);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    int rounds = 5;
    int seconds = 5;
    QStringList only; // --only KEY,...: scenarios to run (profiling); no table then
    // --haproxy-no-reuse: HAProxy neither resumes TLS sessions with the origin nor reuses idle
    // server connections (what the gateway does), to tell those features' share apart.
    bool haproxyNoReuse = false;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i < args.size(); ++i) {
        if (args[i] == u"--rounds"_s && i + 1 < args.size()) {
            rounds = std::max(1, args[++i].toInt());
        } else if (args[i] == u"--seconds"_s && i + 1 < args.size()) {
            seconds = std::max(1, args[++i].toInt());
        } else if (args[i] == u"--haproxy-no-reuse"_s) {
            haproxyNoReuse = true;
        } else if (args[i] == u"--only"_s && i + 1 < args.size()) {
            only = args[++i].split(u',');
        } else {
            std::fprintf(stderr,
                         "usage: bench_gateway [--rounds N (5)] [--seconds S (5)] "
                         "[--only SCENARIO,... (runs without the table)] [--haproxy-no-reuse]\n");
            return 2;
        }
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr, "bench_gateway: needs root (network namespaces, nftables)\n");
        return 1;
    }

    Setup s;
    const QStringList sbin {u"/usr/sbin"_s, u"/sbin"_s, u"/usr/bin"_s, u"/bin"_s};
    const auto find = [&](const QString &name, QString *into) {
        *into = QStandardPaths::findExecutable(name);
        if (into->isEmpty())
            *into = QStandardPaths::findExecutable(name, sbin);
        return !into->isEmpty();
    };
    QStringList missing;
    for (const auto &[name, into] :
         std::initializer_list<std::pair<QString, QString *>> {{u"nginx"_s, &s.nginx},
                                                               {u"haproxy"_s, &s.haproxy},
                                                               {u"wrk"_s, &s.wrk},
                                                               {u"unshare"_s, &s.unshare},
                                                               {u"nsenter"_s, &s.nsenter}}) {
        if (!find(name, into))
            missing << name;
    }
    if (!missing.isEmpty()) {
        std::fprintf(stderr,
                     "bench_gateway: %s not found; install them with "
                     "installers/dev/install-bench-deps.sh (as root)\n",
                     qPrintable(missing.join(u", "_s)));
        return 1;
    }

    struct sigaction action
    {
    };
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
        ::sigaction(signal, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    // 512 connections are 1024+ fds in a proxy: the gateway inherits this limit.
    rlimit nofile {};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &nofile);
    }

    GatewayTopology::Options options;
    options.tag = u"bg"_s;
    options.hosts = {{u"pkg.test"_s, kOrigin}};
    // No recording server: nginx takes pkg.test's address:443 in the upstream namespace.
    options.servers = {};
    options.policy = {{u"version"_s, 1},
                      {u"rules"_s, QJsonArray {QJsonObject {{u"host"_s, u"pkg.test"_s}}}}};
    options.limits = {
        {u"maxConnections"_s, 1024}, {u"idleTimeoutMs"_s, 60000}, {u"maxHeaderBytes"_s, 65536}};
    GatewayTopology topology(options);
    if (!topology.start()) {
        std::fprintf(stderr, "bench_gateway: %s\n", qPrintable(topology.lastError()));
        return 1;
    }
    QTemporaryDir dir(QDir::tempPath() + u"/airlock-bench-gateway-XXXXXX"_s);
    if (!dir.isValid()) {
        std::fprintf(stderr, "bench_gateway: no temporary directory\n");
        return 1;
    }
    s.dir = dir.path();
    s.hostNs = topology.hostNs();
    s.guestNs = topology.guestNs();
    s.upstreamNs = topology.upstreamNs();

    // The origin's certificate: a pkg.test leaf of the upstream test CA (what the gateway and
    // HAProxy verify against); HAProxy's frontend shows the same leaf (wrk does not verify).
    const auto leaf = topology.upstreamCa().leaf(u"pkg.test"_s);
    if (!leaf) {
        std::fprintf(stderr, "bench_gateway: cannot mint the pkg.test leaf\n");
        return 1;
    }
    QByteArray certPem, keyPem;
    {
        BIO *bio = BIO_new(BIO_s_mem());
        PEM_write_bio_X509(bio, leaf->certificate.get());
        char *data = nullptr;
        certPem = QByteArray(data, BIO_get_mem_data(bio, &data));
        BIO_free(bio);
        bio = BIO_new(BIO_s_mem());
        PEM_write_bio_PrivateKey(bio, leaf->key.get(), nullptr, nullptr, 0, nullptr, nullptr);
        keyPem = QByteArray(data, BIO_get_mem_data(bio, &data));
        BIO_free(bio);
    }
    const QString d = s.dir;
    const QString origin = kOrigin.toString();
    QDir().mkpath(d + u"/www"_s);
    QDir().mkpath(d + u"/nginx-tmp"_s);
    const QByteArray nginxConf = QStringLiteral(R"(
daemon off;
master_process off;
worker_processes 1;
pid %1/nginx.pid;
error_log %1/nginx-error.log warn;
worker_rlimit_nofile 8192;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
    client_body_temp_path %1/nginx-tmp/body;
    proxy_temp_path %1/nginx-tmp/proxy;
    fastcgi_temp_path %1/nginx-tmp/fastcgi;
    default_type application/octet-stream;
    server {
        listen %2:443 ssl;
        server_name pkg.test;
        ssl_certificate %1/pkg.crt;
        ssl_certificate_key %1/pkg.key;
        root %1/www;
        location = /small { default_type text/plain; return 200 "hello\n"; }
        location = /big { }
    }
}
)")
                                     .arg(d, origin)
                                     .toUtf8();
    const QByteArray haproxyCfg =
        QStringLiteral(R"(
global
    nbthread 1
    maxconn 4096
    ssl-server-verify required
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend pkg
    bind %1:443 ssl crt %2/haproxy.pem
    default_backend origin
backend origin
    %5
    server nginx %3:443 ssl verify required ca-file %4 sni str(pkg.test) verifyhost pkg.test %6
)")
            .arg(kHaproxy.toString(), d, origin, topology.filePath(u"upstream-ca.pem"_s),
                 haproxyNoReuse ? u"http-reuse never"_s : QString(),
                 haproxyNoReuse ? u"no-ssl-reuse"_s : QString())
            .toUtf8();
    if (!writeFile(d + u"/pkg.crt"_s, certPem) || !writeFile(d + u"/pkg.key"_s, keyPem)
        || !writeFile(d + u"/haproxy.pem"_s, certPem + keyPem)
        || !writeFile(d + u"/www/big"_s, QByteArray(kBigBytes, 'x'))
        || !writeFile(d + u"/nginx.conf"_s, nginxConf)
        || !writeFile(d + u"/haproxy.cfg"_s, haproxyCfg)
        || !writeFile(d + u"/report.lua"_s, kWrkScript)
        || !writeFile(d + u"/hosts-origin"_s,
                      "127.0.0.1 localhost\n" + origin.toLatin1() + " pkg.test\n")
        || !writeFile(d + u"/hosts-haproxy"_s,
                      "127.0.0.1 localhost\n" + kHaproxy.toString().toLatin1() + " pkg.test\n")) {
        std::fprintf(stderr, "bench_gateway: cannot write the configuration files\n");
        return 1;
    }

    Child nginx, haproxy;
    if (!nginx.start(
            s.nsenter,
            inNs(s.upstreamNs, s.nginx,
                 {u"-p"_s, d, u"-c"_s, d + u"/nginx.conf"_s, u"-e"_s, d + u"/nginx-error.log"_s}),
            d + u"/nginx.out"_s)
        || !waitListening(s.upstreamNs, kOrigin, 443, nginx, 10000)) {
        QFile log(d + u"/nginx-error.log"_s);
        log.open(QIODevice::ReadOnly);
        QFile out(d + u"/nginx.out"_s);
        out.open(QIODevice::ReadOnly);
        std::fprintf(stderr, "bench_gateway: nginx did not start:\n%s%s\n",
                     log.readAll().constData(), out.readAll().constData());
        return 1;
    }
    if (!haproxy.start(s.nsenter,
                       inNs(s.hostNs, s.haproxy, {u"-db"_s, u"-f"_s, d + u"/haproxy.cfg"_s}),
                       d + u"/haproxy.out"_s)
        || !waitListening(s.hostNs, kHaproxy, 443, haproxy, 10000)) {
        QFile out(d + u"/haproxy.out"_s);
        out.open(QIODevice::ReadOnly);
        std::fprintf(stderr, "bench_gateway: haproxy did not start:\n%s\n",
                     out.readAll().constData());
        return 1;
    }
    const pid_t gatewayPid = pid_t(topology.gateway().pid());
    const pid_t proxyPid[PathCount] = {0, gatewayPid, haproxy.pid()};
    const int clientNs[PathCount] = {s.hostNs, s.guestNs, s.hostNs};
    const QString hosts[PathCount] = {d + u"/hosts-origin"_s, d + u"/hosts-origin"_s,
                                      d + u"/hosts-haproxy"_s};

    QFile cpuinfo(u"/proc/cpuinfo"_s);
    cpuinfo.open(QIODevice::ReadOnly);
    QByteArray cpuModel;
    for (const QByteArray &line : cpuinfo.readAll().split('\n')) {
        if (line.startsWith("model name")) {
            cpuModel = line.mid(line.indexOf(':') + 1).trimmed();
            break;
        }
    }
    std::printf("bench_gateway: %d rounds of %d s per run, paths interleaved; %ld CPUs (%s), %s\n",
                rounds, seconds, ::sysconf(_SC_NPROCESSORS_ONLN), cpuModel.constData(),
                qPrintable(QSysInfo::kernelVersion()));
    std::printf("bench_gateway: %s; %s; %s\n", qPrintable(firstLine(s.nginx, u"-v"_s)),
                qPrintable(firstLine(s.haproxy, u"-v"_s)),
                qPrintable(firstLine(s.wrk, u"-v"_s).section(u' ', 0, 1)));
    if (haproxyNoReuse)
        std::printf("bench_gateway: HAProxy with http-reuse never, no-ssl-reuse\n");
    std::fflush(stdout);

    // samples[round][scenario][path]
    std::vector<std::map<QString, std::array<Sample, PathCount>>> samples(
        static_cast<size_t>(rounds));
    bool failed = false;
    for (int round = 0; round < rounds && !failed; ++round) {
        for (const Scenario &scenario : kScenarios) {
            if (!only.isEmpty() && !only.contains(QLatin1StringView(scenario.key)))
                continue;
            for (int k = 0; k < PathCount && !failed; ++k) {
                const int p = (k + round + int(&scenario - kScenarios)) % PathCount;
                if (g_interrupted) {
                    failed = true;
                    break;
                }
                Sample &sample =
                    samples[size_t(round)][QString::fromLatin1(scenario.key)][size_t(p)];
                const pid_t proxy = proxyPid[p];
                const int idleFds = proxy ? fdCount(proxy) : 0;
                sample.idleRssKiB = proxy ? rssKiB(proxy) : 0;
                const double cpuBefore = proxy ? cpuSeconds(proxy) : 0;
                std::optional<RssSampler> sampler;
                if (proxy)
                    sampler.emplace(proxy);
                sample.wrk = runWrk(s, clientNs[p], hosts[p], QString::fromLatin1(scenario.path),
                                    scenario.connections, scenario.close, seconds);
                if (proxy) {
                    sample.maxRssKiB = sampler->finish();
                    sample.proxyCpuSeconds = cpuSeconds(proxy) - cpuBefore;
                    // The fact "connections closed": the proxy's fds are back to their count
                    // before the run (HAProxy may keep idle server connections until its
                    // pool purge; then the reading is taken after 8 s).
                    const auto deadline =
                        std::chrono::steady_clock::now() + std::chrono::seconds(8);
                    while (fdCount(proxy) > idleFds && std::chrono::steady_clock::now() < deadline
                           && !g_interrupted)
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    // Then the lowest VmRSS over one second: a proxy may give memory back a
                    // little after its last connection went (the gateway trims its heap 100 ms
                    // later).
                    sample.afterRssKiB = rssKiB(proxy);
                    const auto window = std::chrono::steady_clock::now() + std::chrono::seconds(1);
                    while (std::chrono::steady_clock::now() < window && !g_interrupted) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                        sample.afterRssKiB = std::min(sample.afterRssKiB, rssKiB(proxy));
                    }
                }
                const WrkResult &w = sample.wrk;
                std::printf("  round %d %-8s %-7s %s\n", round + 1, scenario.key, kPathNames[p],
                            w.ok ? qPrintable(u"%1 req in %2 s, %3 MiB, median %4 ms, %5 errors, "
                                              "cpu %6 s, rss %7/%8/%9 KiB"_s.arg(w.requests)
                                                  .arg(w.seconds, 0, 'f', 2)
                                                  .arg(double(w.bytes) / 1048576.0, 0, 'f', 1)
                                                  .arg(w.medianUs / 1000.0, 0, 'f', 3)
                                                  .arg(w.errors)
                                                  .arg(sample.proxyCpuSeconds, 0, 'f', 2)
                                                  .arg(sample.idleRssKiB)
                                                  .arg(sample.maxRssKiB)
                                                  .arg(sample.afterRssKiB))
                                 : qPrintable(w.error));
                std::fflush(stdout);
                if (!w.ok || !nginx.running() || !haproxy.running() || !topology.gateway().pid()) {
                    std::fprintf(stderr, "bench_gateway: run failed (%s)\n", qPrintable(w.error));
                    failed = true;
                }
            }
        }
    }
    if (g_interrupted) {
        std::fprintf(stderr, "bench_gateway: interrupted\n");
        return 1;
    }
    if (failed) {
        std::fprintf(stderr, "gateway log:\n%s\n", qPrintable(topology.gateway().logTail()));
        return 1;
    }
    if (!only.isEmpty())
        return 0;

    // ---- rows ----
    std::vector<Row> rows;
    const auto perRound = [&](const char *key, auto value) {
        std::vector<Values> out;
        for (auto &round : samples) {
            Values v;
            for (int p = 0; p < PathCount; ++p)
                v[size_t(p)] = value(round[QString::fromLatin1(key)][size_t(p)], p);
            out.push_back(v);
        }
        return out;
    };
    const double nan = std::nan("");
    const auto rps = [](const Sample &x, int) { return double(x.wrk.requests) / x.wrk.seconds; };
    const auto mibps = [](const Sample &x, int) {
        return double(x.wrk.bytes) / 1048576.0 / x.wrk.seconds;
    };
    const auto latencyMs = [](const Sample &x, int) { return x.wrk.medianUs / 1000.0; };
    const auto cpuUsPerRequest = [nan](const Sample &x, int p) {
        return p == Direct ? nan : x.proxyCpuSeconds * 1e6 / double(x.wrk.requests);
    };
    const auto maxRssMiB = [nan](const Sample &x, int p) {
        return p == Direct ? nan : double(x.maxRssKiB) / 1024.0;
    };
    const auto afterRssMiB = [nan](const Sample &x, int p) {
        return p == Direct ? nan : double(x.afterRssKiB) / 1024.0;
    };
    const auto idleRssMiB = [nan](const Sample &x, int p) {
        return p == Direct ? nan : double(x.idleRssKiB) / 1024.0;
    };
    const auto add = [&](const QString &name, const QString &unit, std::vector<Values> values,
                         double minVsDirect, double minVsHaproxy, double maxVsHaproxy = 0) {
        rows.push_back({name, unit, std::move(values), minVsDirect, minVsHaproxy, maxVsHaproxy});
    };
    add(u"small, 1 conn"_s, u"req/s"_s, perRound("small1", rps), 0, 1.0);
    add(u"small, 32 conn"_s, u"req/s"_s, perRound("small32", rps), 0, 1.0);
    add(u"small, 512 conn"_s, u"req/s"_s, perRound("small512", rps), 0, 1.0);
    add(u"1 MiB, 1 conn"_s, u"MiB/s"_s, perRound("big1", mibps), 0.8, 1.0);
    add(u"1 MiB, 32 conn"_s, u"MiB/s"_s, perRound("big32", mibps), 0.8, 1.0);
    add(u"new TLS conn, 1 client"_s, u"conn/s"_s, perRound("new1", rps), 0, 1.0);
    add(u"new TLS conn, 32 clients"_s, u"conn/s"_s, perRound("new32", rps), 0, 1.0);
    add(u"median latency, 1 conn"_s, u"ms"_s, perRound("small1", latencyMs), 0, 0);
    add(u"median latency, 32 conn"_s, u"ms"_s, perRound("small32", latencyMs), 0, 0);
    add(u"proxy CPU per request, 1 conn"_s, u"us"_s, perRound("small1", cpuUsPerRequest), 0, 0);
    add(u"proxy CPU per request, 32 conn"_s, u"us"_s, perRound("small32", cpuUsPerRequest), 0, 0);
    add(u"proxy CPU per new conn, 1 client"_s, u"us"_s, perRound("new1", cpuUsPerRequest), 0, 0);
    add(u"proxy CPU per new conn, 32 clients"_s, u"us"_s, perRound("new32", cpuUsPerRequest), 0, 0);
    add(u"RSS idle before 512 conn"_s, u"MiB"_s, perRound("small512", idleRssMiB), 0, 0);
    add(u"RSS max, 32 conn"_s, u"MiB"_s, perRound("small32", maxRssMiB), 0, 0);
    add(u"RSS max, 512 conn"_s, u"MiB"_s, perRound("small512", maxRssMiB), 0, 0, 1.5);
    add(u"RSS after 512 conn closed"_s, u"MiB"_s, perRound("small512", afterRssMiB), 0, 0);

    std::printf("\n%-36s %-6s %10s %10s %10s %8s %8s  %s\n", "row (medians)", "unit", "direct",
                "gateway", "haproxy", "gw/dir", "gw/hap", "target");
    const auto ratio = [](const std::vector<Values> &v, int a, int b) {
        std::vector<double> r;
        for (const Values &x : v)
            r.push_back(std::isnan(x[size_t(b)]) || x[size_t(b)] == 0
                            ? std::nan("")
                            : x[size_t(a)] / x[size_t(b)]);
        return median(r);
    };
    int met = 0, notMet = 0;
    const auto verdict = [&](bool ok) {
        ok ? ++met : ++notMet;
        return ok ? "met" : "NOT met";
    };
    for (const Row &row : rows) {
        double m[PathCount];
        for (int p = 0; p < PathCount; ++p) {
            std::vector<double> v;
            for (const Values &x : row.rounds)
                v.push_back(x[size_t(p)]);
            m[p] = median(v);
        }
        const double gd = ratio(row.rounds, Gateway, Direct);
        const double gh = ratio(row.rounds, Gateway, Haproxy);
        QStringList targets;
        if (row.minVsHaproxy > 0)
            targets << u"gw/hap >= %1 %2"_s.arg(row.minVsHaproxy, 0, 'f', 1)
                           .arg(QLatin1StringView(verdict(gh >= row.minVsHaproxy)));
        if (row.minVsDirect > 0)
            targets << u"gw/dir >= %1 %2"_s.arg(row.minVsDirect, 0, 'f', 1)
                           .arg(QLatin1StringView(verdict(gd >= row.minVsDirect)));
        if (row.maxVsHaproxy > 0)
            targets << u"gw/hap <= %1 %2"_s.arg(row.maxVsHaproxy, 0, 'f', 1)
                           .arg(QLatin1StringView(verdict(gh <= row.maxVsHaproxy)));
        const int precision = row.unit == u"ms"_s ? 3 : (row.unit == u"MiB"_s ? 1 : 0);
        std::printf("%-36s %-6s %10s %10s %10s %8s %8s  %s\n", qPrintable(row.name),
                    qPrintable(row.unit), qPrintable(fmt(m[0], precision)),
                    qPrintable(fmt(m[1], precision)), qPrintable(fmt(m[2], precision)),
                    qPrintable(fmt(gd)), qPrintable(fmt(gh)), qPrintable(targets.join(u"; "_s)));
    }
    // The gateway's added median latency (gateway − direct per round, then the median).
    for (const auto &[key, connections, limit] :
         {std::tuple {"small1", 1, 0.2}, std::tuple {"small32", 32, 1.0}}) {
        std::vector<double> added;
        for (const Values &x : perRound(key, latencyMs))
            added.push_back(x[Gateway] - x[Direct]);
        const double a = median(added);
        std::printf(
            "%-36s %-6s %10s %10s %10s %8s %8s  %s\n",
            qPrintable(u"added median latency, %1 conn"_s.arg(connections)), "ms", "",
            qPrintable(fmt(a, 3)), "", "", "",
            qPrintable(u"< %1 ms %2"_s.arg(limit).arg(QLatin1StringView(verdict(a < limit)))));
    }
    // Memory given back: after the 512 connections closed, at most a quarter of what they added
    // is still resident (per round, then the median).
    {
        std::vector<double> kept;
        for (auto &round : samples) {
            const Sample &g = round[u"small512"_s][Gateway];
            const double grown = double(g.maxRssKiB - g.idleRssKiB);
            kept.push_back(grown > 0 ? double(g.afterRssKiB - g.idleRssKiB) / grown : 0);
        }
        const double k = median(kept);
        std::printf(
            "%-36s %-6s %10s %10s %10s %8s %8s  %s\n", "gateway RSS kept after close", "share", "",
            qPrintable(fmt(k)), "", "", "",
            qPrintable(u"<= 0.25 of the growth %1"_s.arg(QLatin1StringView(verdict(k <= 0.25)))));
    }
    std::printf("\ntargets: %d met, %d not met\n", met, notMet);
    return 0;
}
