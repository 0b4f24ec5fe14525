// airlockd: the privileged helper. Only wiring; everything it runs lives in core/daemon and
// core/vmm (see docs/protocol.md for what clients may ask of it).

#include "core/daemon/accesspolicy.h"
#include "core/daemon/bindingstore.h"
#include "core/daemon/consolehub.h"
#include "core/daemon/credentialapi.h"
#include "core/daemon/credentialaudit.h"
#include "core/daemon/credentialbroker.h"
#include "core/daemon/egressaudit.h"
#include "core/daemon/helperapi.h"
#include "core/daemon/hostaccounts.h"
#include "core/daemon/logging.h"
#include "core/daemon/registry.h"
#include "core/daemon/rpcserver.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/secretowners.h"
#include "core/daemon/snapshotapi.h"
#include "core/daemon/snapshotservice.h"
#include "core/daemon/socketactivation.h"
#include "core/daemon/statedirlock.h"
#include "core/daemon/unixsignalwatcher.h"
#include "core/snapshot/snapshotarchive.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/kvmprobe.h"
#include "core/vmm/qemumicrovm.h"
#include "core/vmm/vmmprocess.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonObject>
#include <QLoggingCategory>

#include <csignal>
#include <cstdio>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

Q_LOGGING_CATEGORY(lcMain, "airlock.daemon")

const QString kGroup = QStringLiteral("airlock");
const QString kVmmUser = QStringLiteral("airlock-vmm");
const QString kGatewayGroup = QStringLiteral("airlock-gateway");

/// The installed gateway, or the one beside this airlockd (a build tree or a relocated
/// install).
QString defaultGatewayProgram()
{
    // Beside airlockd (an install tree), then the build tree's layout (build/app/airlockd and
    // build/app/airlock-gateway: review finding 8), then the installed libexec dir.
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString &candidate :
         {here.filePath(QStringLiteral("airlock-gateway")),
          here.filePath(QStringLiteral("../airlock-gateway/airlock-gateway"))}) {
        if (QFileInfo(candidate).isExecutable() && QFileInfo(candidate).isFile())
            return QFileInfo(candidate).canonicalFilePath();
    }
    return QStringLiteral(AIRLOCK_LIBEXEC_DIR "/airlock-gateway");
}

/// "ADDRESS" or "ADDRESS:PORT" (IPv4) → the gateway's upstreamDns object; empty on error.
QJsonObject upstreamDnsFrom(const QString &text)
{
    QString address = text;
    int port = 53;
    if (const qsizetype colon = text.lastIndexOf(u':');
        colon > 0 && !text.contains(u'[') && text.count(u':') == 1) {
        bool ok = false;
        port = text.mid(colon + 1).toInt(&ok);
        if (!ok || port < 1 || port > 65535)
            return {};
        address = text.left(colon);
    }
    const QHostAddress host(address);
    if (host.isNull())
        return {};
    return QJsonObject {{QStringLiteral("address"), host.toString()},
                        {QStringLiteral("port"), port},
                        {QStringLiteral("timeoutMs"), 2000}};
}

/// The first `nameserver` of /etc/resolv.conf: the host's resolver (resolv.conf(5)).
QString hostResolver()
{
    QFile file(QStringLiteral("/etc/resolv.conf"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    while (!file.atEnd()) {
        const QList<QByteArray> fields = file.readLine().simplified().split(' ');
        if (fields.size() >= 2 && fields[0] == "nameserver")
            return QString::fromLatin1(fields[1]);
    }
    return {};
}

int failStartup(const QString &message)
{
    qCCritical(lcMain, "%s", qPrintable(message));
    return 1;
}

} // namespace

int main(int argc, char *argv[])
{
    // Secret values pass through airlockd (secret.set, the credentials sent to gateways) in
    // copies Qt's JSON parser keeps: no core file may carry them (prctl(2) PR_SET_DUMPABLE;
    // red-team 2026-12-01 finding 11).
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
    parser.addOptions({socketOption, stateOption, imagesOption, scrollbackOption, logLevelOption,
                       gatewayOption, poolOption, upstreamOption, trustOption, templatesOption,
                       templatesMaxOption});
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
    QString upstreamText =
        parser.isSet(upstreamOption) ? parser.value(upstreamOption) : hostResolver();
    // No usable host resolver (none, or IPv6 only): the gateways get loopback, which answers
    // nothing, so every lookup fails closed; --upstream-dns fixes it.
    if (!parser.isSet(upstreamOption) && upstreamDnsFrom(upstreamText).isEmpty())
        upstreamText = QStringLiteral("127.0.0.1");
    const QJsonObject upstreamDns = upstreamDnsFrom(upstreamText);
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

    // Nothing the helper writes is for other users unless it says so (socket, runtime dirs).
    ::umask(0077);
    const QString stateDir = QDir(parser.value(stateOption)).absolutePath();
    const QString imageDir = parser.isSet(imagesOption)
        ? QDir(parser.value(imagesOption)).absolutePath()
        : QDir(stateDir).filePath(QStringLiteral("images"));
    if (!QDir().mkpath(stateDir)) {
        std::fprintf(stderr, "airlockd: cannot create state dir %s\n", qPrintable(stateDir));
        return 1;
    }
    // Before anything reads the registry or touches a guest: one helper per state dir.
    auto stateLock = airlock::StateDirLock::acquire(stateDir);
    if (!stateLock) {
        std::fprintf(stderr, "airlockd: %s\n", qPrintable(stateLock.error().message));
        return 1;
    }
    // Traversable but not listable by the unprivileged VMM user, which needs its runtime dir.
    ::chmod(QFile::encodeName(stateDir).constData(), 0711);
    airlock::installLogHandler(QDir(stateDir).filePath(QStringLiteral("log")),
                               QStringLiteral("airlockd"), logLevel);
    // Clients, guests' sockets and log files all take descriptors; the soft limit of a shell
    // (often 1024) is far below what the kernel allows us.
    rlimit files {};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
    // A client that vanishes must cost us an error code, not the process.
    std::signal(SIGPIPE, SIG_IGN);

    auto group = airlock::HostAccounts::ensureGroup(kGroup);
    if (!group)
        return failStartup(group.error().message);
    auto vmmUser = airlock::HostAccounts::ensureSystemUser(kVmmUser);
    if (!vmmUser)
        return failStartup(vmmUser.error().message);
    auto gatewayGroup = airlock::HostAccounts::ensureGroup(kGatewayGroup);
    if (!gatewayGroup)
        return failStartup(gatewayGroup.error().message);

    airlock::ImageStore images(imageDir);
    airlock::KvmProbe::Config probeConfig;
    // The probe boots the default image's kernel; without one it cannot prove KVM works.
    if (auto image = images.find(QStringLiteral("default")))
        probeConfig.kernelPath = image->kernelPath;
    probeConfig.vmmUid = vmmUser->uid;
    probeConfig.vmmGid = vmmUser->gid;
    const airlock::KvmProbeResult probe = airlock::KvmProbe::run(probeConfig);
    if (!probe.warning.isEmpty())
        qCWarning(lcMain, "%s", qPrintable(probe.warning));
    qCInfo(lcMain, "acceleration: %s", qPrintable(airlock::accelerationName(probe.acceleration)));

    auto registry =
        airlock::Registry::open(QDir(stateDir).filePath(QStringLiteral("registry.sqlite")));
    if (!registry)
        return failStartup(registry.error().message);

    airlock::ConsoleHub consoles(scrollback);
    airlock::SandboxServiceConfig config;
    config.stateDir = stateDir;
    config.acceleration = probe.acceleration;
    config.accelerationWarning = probe.warning;
    config.vmmUid = vmmUser->uid;
    config.vmmGid = vmmUser->gid;
    config.vmmGroups = airlock::VmmCredentials::forUser(vmmUser->uid, vmmUser->gid).groups;
    config.vmmUidBase = airlock::SandboxServiceConfig::kDefaultVmmUidBase;
    config.gatewayUidBase = airlock::SandboxServiceConfig::kDefaultGatewayUidBase;
    config.addressPool = parser.value(poolOption);
    config.network.gatewayProgram = parser.isSet(gatewayOption)
        ? QFileInfo(parser.value(gatewayOption)).absoluteFilePath()
        : defaultGatewayProgram();
    config.network.stateDir = stateDir;
    config.network.upstreamDns = upstreamDns;
    config.network.trustStoreCaFile = trustStore;
    config.network.gatewayGid = *gatewayGroup;
    config.network.gatewayLogLevel = logLevel;
    if (!QFileInfo(config.network.gatewayProgram).isExecutable())
        qCWarning(lcMain, "no airlock-gateway at %s: sandboxes cannot start",
                  qPrintable(config.network.gatewayProgram));
    airlock::SandboxService sandboxes(
        **registry, consoles, images, [] { return std::make_unique<airlock::QemuMicrovm>(); },
        config);
    airlock::EgressAudit audit(QDir(stateDir).filePath(QStringLiteral("audit")));
    QObject::connect(&sandboxes, &airlock::SandboxService::egressEvent, &app,
                     [&audit](const QString &, qint64 seq, const QJsonObject &event) {
                         audit.write(seq, event);
                     });
    airlock::RpcServer server(airlock::AccessPolicy(*group, kGroup));
    // A vault that cannot open (lost key, wrong mode) must not stop the helper from serving
    // sandboxes: the secret methods report it instead.
    auto vault =
        airlock::vault::SecretVault::open(QDir(stateDir).filePath(QStringLiteral("vault")),
                                          QDir(stateDir).filePath(QStringLiteral("vault.key")));
    if (!vault)
        qCWarning(lcMain, "vault unavailable: %s", qPrintable(vault.error().message));
    airlock::BindingStore bindings(**registry);
    airlock::SecretOwners secretOwners(**registry);
    airlock::CredentialAudit credentialAudit(QDir(stateDir).filePath(QStringLiteral("audit")));
    airlock::CredentialApi credentials(server, std::move(vault), bindings, sandboxes, secretOwners,
                                       credentialAudit);
    // Before restore(): the gateways of re-adopted guests need their credentials too.
    airlock::CredentialBroker broker([&credentials] { return credentials.secretVault(); }, bindings,
                                     sandboxes);
    broker.watch(credentials);
    if (auto restored = sandboxes.restore(); !restored)
        return failStartup(restored.error().message);

    auto snapshotStore =
        airlock::SnapshotStore::open(QDir(stateDir).filePath(QStringLiteral("snapshots")));
    if (!snapshotStore)
        return failStartup(snapshotStore.error().message);
    airlock::SnapshotCatalog snapshotCatalog((*registry)->connectionName());
    airlock::SnapshotArchive archive(**snapshotStore, snapshotCatalog);
    airlock::SnapshotService snapshots(sandboxes, archive);
    airlock::SnapshotService::TemplateOptions templateOptions;
    templateOptions.automatic = templateMode == QLatin1String("auto");
    templateOptions.maxTemplates = templatesMax;
    snapshots.setTemplateOptions(templateOptions);
    snapshots.setBindings(&bindings);
    // Before serving: a crash may have left a manifest without its registry row.
    if (auto reconciled = snapshots.restore(); !reconciled)
        return failStartup(reconciled.error().message);
    snapshots.startSchedules();

    airlock::HelperApi api(server, sandboxes, consoles, images);
    airlock::SnapshotApi snapshotApi(server, api, sandboxes, snapshots);
    snapshotApi.setCredentialControls(&secretOwners, &credentialAudit);
    const int inheritedSocket = airlock::takeInheritedListenSocket();
    if (auto listening = inheritedSocket >= 0
            ? server.listen(inheritedSocket, parser.value(socketOption))
            : server.listen(parser.value(socketOption));
        !listening)
        return failStartup(listening.error().message);

    airlock::UnixSignalWatcher signalWatcher({SIGTERM, SIGINT});
    QObject::connect(&signalWatcher, &airlock::UnixSignalWatcher::signalReceived, &app,
                     [](int number) {
                         // Guests keep running; the next airlockd re-adopts them.
                         qCInfo(lcMain, "signal %d: shutting down, leaving guests running", number);
                         QCoreApplication::quit();
                     });
    qCInfo(lcMain, "airlockd %s ready (state %s, images %s)", AIRLOCK_VERSION, qPrintable(stateDir),
           qPrintable(imageDir));
    const int status = app.exec();
    server.close();
    qCInfo(lcMain, "airlockd stopped");
    return status;
}
