// airlockd: the privileged helper. main() parses and checks the command line; the helper itself
// is composed in core/daemon/helperdaemon.cpp (see docs/architecture.md and docs/protocol.md).

#include "core/daemon/consolehub.h"
#include "core/daemon/gatewayprogram.h"
#include "core/daemon/helperdaemon.h"
#include "core/daemon/logging.h"
#include "core/daemon/unixsignalwatcher.h"
#include "core/daemon/upstreamdns.h"
#include "core/net/addresspool.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>

#include <csignal>
#include <cstdio>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

Q_LOGGING_CATEGORY(lcMain, "airlock.daemon")

} // namespace

int main(int argc, char *argv[])
{
    // Secret values pass through airlockd (secret.set, the credentials sent to gateways) in
    // copies Qt's JSON parser keeps: no core file may carry them (prctl(2) PR_SET_DUMPABLE;
    // docs/reviews/2026-12-01-credentials-redteam.md#f11).
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlockd"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Airlock's privileged helper: runs microVM sandboxes for members of group "
                       "'airlock' over a JSON-RPC Unix socket."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption socketOption(
        QStringLiteral("socket"), QStringLiteral("Unix socket to listen on."),
        QStringLiteral("PATH"), QStringLiteral(AIRLOCK_DEFAULT_SOCKET));
    const QCommandLineOption stateOption(
        QStringLiteral("state-dir"), QStringLiteral("Registry, runtime dirs and logs."),
        QStringLiteral("DIR"), QStringLiteral(AIRLOCK_DEFAULT_STATE_DIR));
    const QCommandLineOption imagesOption(QStringLiteral("image-store"),
                                          QStringLiteral("Guest images (default STATE/images)."),
                                          QStringLiteral("DIR"));
    const QCommandLineOption scrollbackOption(
        QStringLiteral("scrollback"),
        QStringLiteral("Console scrollback per sandbox in bytes (default 1048576)."),
        QStringLiteral("BYTES"), QString::number(airlock::ConsoleHub::kDefaultScrollbackBytes));
    const QCommandLineOption logLevelOption(QStringLiteral("log-level"),
                                            QStringLiteral("trace, debug, info, warning or error."),
                                            QStringLiteral("LEVEL"), QStringLiteral("info"));
    const QCommandLineOption gatewayOption(
        QStringLiteral("gateway"),
        QStringLiteral("The airlock-gateway program (default: beside airlockd, or in "
                       "../airlock-gateway/ of a build tree, else %1).")
            .arg(QStringLiteral(AIRLOCK_LIBEXEC_DIR "/airlock-gateway")),
        QStringLiteral("PATH"));
    const QCommandLineOption poolOption(
        QStringLiteral("address-pool"),
        QStringLiteral("IPv4 pool for sandbox links (default 100.96.0.0/16)."),
        QStringLiteral("CIDR"), airlock::AddressPool::DefaultPool.toString());
    const QCommandLineOption upstreamOption(
        QStringLiteral("upstream-dns"),
        QStringLiteral("Resolver the gateways query, ADDRESS[:PORT] (default: the first "
                       "nameserver of /etc/resolv.conf)."),
        QStringLiteral("ADDRESS"));
    const QCommandLineOption trustOption(
        QStringLiteral("upstream-ca"),
        QStringLiteral("PEM file of CAs the gateways trust for upstream TLS instead of the "
                       "system store (tests)."),
        QStringLiteral("FILE"));
    const QCommandLineOption templatesOption(
        QStringLiteral("templates"),
        QStringLiteral("auto: prepare image templates for fast starts in the background (the "
                       "default image at start, any image and shape a start missed); off: only "
                       "on request (template.prepare). Default auto."),
        QStringLiteral("MODE"), QStringLiteral("auto"));
    const QCommandLineOption templatesMaxOption(
        QStringLiteral("templates-max"),
        QStringLiteral("Templates kept at most; beyond that, the least recently used are "
                       "removed (1..64, default 4)."),
        QStringLiteral("N"), QStringLiteral("4"));
    const QCommandLineOption benchPortOption(
        QStringLiteral("bench-port"),
        QStringLiteral("Give every guest a second virtio-serial port, org.airlock.bench on "
                       "RUNDIR/bench.sock, that airlockd never reads: the raw baseline of the "
                       "agent benchmark (tests/bench/bench_agent). Not for production."));
    const QCommandLineOption vmmOption(
        QStringLiteral("vmm"),
        QStringLiteral("The VMM of sandboxes whose sandbox.create names none: qemu, firecracker "
                       "(refused at start unless its binary is found and KVM works) or auto "
                       "(firecracker when it can run, else qemu). Default qemu."),
        QStringLiteral("BACKEND"), QStringLiteral("qemu"));
    const QCommandLineOption firecrackerOption(
        QStringLiteral("firecracker"),
        QStringLiteral("The firecracker binary (default: $AIRLOCK_FIRECRACKER, else firecracker "
                       "from PATH)."),
        QStringLiteral("PATH"));
    const QCommandLineOption firecrackerWithoutKvmOption(
        QStringLiteral("firecracker-without-kvm"),
        QStringLiteral("Let Firecracker sandboxes start although the KVM probe failed: for "
                       "Firecracker conformance servers in tests (a real Firecracker then fails "
                       "its start itself). Not for production."));
    parser.addOptions({socketOption, stateOption, imagesOption, scrollbackOption, logLevelOption,
                       gatewayOption, poolOption, upstreamOption, trustOption, templatesOption,
                       templatesMaxOption, benchPortOption, vmmOption, firecrackerOption,
                       firecrackerWithoutKvmOption});
    parser.process(app);
    const QString templateMode = parser.value(templatesOption);
    if (templateMode != QLatin1String("auto") && templateMode != QLatin1String("off")) {
        std::fprintf(stderr, "airlockd: --templates must be auto or off\n");
        return 2;
    }
    bool templatesMaxOk = false;
    const int templatesMax = parser.value(templatesMaxOption).toInt(&templatesMaxOk);
    if (!templatesMaxOk || templatesMax < 1 || templatesMax > 64) {
        std::fprintf(stderr, "airlockd: --templates-max must be a number from 1 to 64\n");
        return 2;
    }

    const QString vmm = parser.value(vmmOption);
    if (vmm != QLatin1String("qemu") && vmm != QLatin1String("firecracker")
        && vmm != QLatin1String("auto")) {
        std::fprintf(stderr, "airlockd: --vmm must be qemu, firecracker or auto\n");
        return 2;
    }

    const QString logLevel = parser.value(logLevelOption);
    if (!airlock::isValidLogLevel(logLevel)) {
        std::fprintf(stderr, "airlockd: unknown --log-level '%s'\n", qPrintable(logLevel));
        return 2;
    }
    bool scrollbackOk = false;
    const qlonglong scrollback = parser.value(scrollbackOption).toLongLong(&scrollbackOk);
    if (!scrollbackOk || scrollback < 1024 || scrollback > 256LL * 1024 * 1024) {
        std::fprintf(stderr, "airlockd: --scrollback must be 1024..268435456 bytes\n");
        return 2;
    }
    const QString upstreamText =
        airlock::upstreamdns::choose(parser.value(upstreamOption), parser.isSet(upstreamOption),
                                     airlock::upstreamdns::hostResolver());
    const QJsonObject upstreamDns = airlock::upstreamdns::fromText(upstreamText);
    if (upstreamDns.isEmpty()) {
        std::fprintf(stderr, "airlockd: --upstream-dns needs an IPv4 ADDRESS[:PORT] (got '%s')\n",
                     qPrintable(upstreamText));
        return 2;
    }
    if (auto pool = airlock::AddressPool::create(parser.value(poolOption)); !pool) {
        std::fprintf(stderr, "airlockd: --address-pool: %s\n", qPrintable(pool.error().message));
        return 2;
    }
    QString trustStore;
    if (parser.isSet(trustOption)) {
        trustStore = QFileInfo(parser.value(trustOption)).absoluteFilePath();
        if (!QFileInfo(trustStore).isReadable()) {
            std::fprintf(stderr, "airlockd: --upstream-ca: cannot read %s\n",
                         qPrintable(trustStore));
            return 2;
        }
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr,
                     "airlockd: must run as root (it creates VMM users, sockets and runtime "
                     "dirs); start it with sudo or as the systemd service airlockd.service\n");
        return 1;
    }

    airlock::HelperDaemonConfig config;
    config.socketPath = parser.value(socketOption);
    config.stateDir = QDir(parser.value(stateOption)).absolutePath();
    config.imageDir = parser.isSet(imagesOption)
        ? QDir(parser.value(imagesOption)).absolutePath()
        : QDir(config.stateDir).filePath(QStringLiteral("images"));
    config.scrollbackBytes = scrollback;
    config.logLevel = logLevel;
    config.gatewayProgram = parser.isSet(gatewayOption)
        ? QFileInfo(parser.value(gatewayOption)).absoluteFilePath()
        : airlock::locateGatewayProgram(QCoreApplication::applicationDirPath(),
                                        QStringLiteral(AIRLOCK_LIBEXEC_DIR));
    config.fcctlProgram = airlock::locateHelperProgram(QStringLiteral("airlock-fcctl"),
                                                       QCoreApplication::applicationDirPath(),
                                                       QStringLiteral(AIRLOCK_LIBEXEC_DIR));
    config.addressPool = parser.value(poolOption);
    config.upstreamDns = upstreamDns;
    config.trustStoreCaFile = trustStore;
    config.automaticTemplates = templateMode == QLatin1String("auto");
    config.templatesMax = templatesMax;
    config.benchPort = parser.isSet(benchPortOption);
    config.vmm = vmm;
    config.firecrackerWithoutKvm = parser.isSet(firecrackerWithoutKvmOption);
    if (parser.isSet(firecrackerOption))
        config.firecrackerBinary = QFileInfo(parser.value(firecrackerOption)).absoluteFilePath();

    airlock::HelperDaemon daemon;
    if (auto prepared = daemon.prepare(config); !prepared) {
        std::fprintf(stderr, "airlockd: %s\n", qPrintable(prepared.error().message));
        return 1;
    }
    if (auto started = daemon.start(config); !started) {
        qCCritical(lcMain, "%s", qPrintable(started.error().message));
        return 1;
    }
    airlock::UnixSignalWatcher signalWatcher({SIGTERM, SIGINT});
    QObject::connect(&signalWatcher, &airlock::UnixSignalWatcher::signalReceived, &app,
                     [](int number) {
                         // Guests keep running; the next airlockd re-adopts them.
                         qCInfo(lcMain, "signal %d: shutting down, leaving guests running", number);
                         QCoreApplication::quit();
                     });
    const int status = app.exec();
    daemon.close();
    qCInfo(lcMain, "airlockd stopped");
    return status;
}
