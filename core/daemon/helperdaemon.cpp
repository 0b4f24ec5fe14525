#include "core/daemon/helperdaemon.h"

#include "core/daemon/accesspolicy.h"
#include "core/daemon/agentapi.h"
#include "core/daemon/bindingstore.h"
#include "core/daemon/consolehub.h"
#include "core/daemon/credentialapi.h"
#include "core/daemon/credentialaudit.h"
#include "core/daemon/credentialbroker.h"
#include "core/daemon/egressaudit.h"
#include "core/daemon/eventbus.h"
#include "core/daemon/gatewayprogram.h"
#include "core/daemon/guestenvdelivery.h"
#include "core/daemon/hostaccounts.h"
#include "core/daemon/logging.h"
#include "core/daemon/registry.h"
#include "core/daemon/rpcserver.h"
#include "core/daemon/sandboxapi.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/secretowners.h"
#include "core/daemon/snapshotapi.h"
#include "core/daemon/snapshotscheduler.h"
#include "core/daemon/snapshotservice.h"
#include "core/daemon/socketactivation.h"
#include "core/daemon/statedirlock.h"
#include "core/daemon/templateservice.h"
#include "core/daemon/workspaceapi.h"
#include "core/snapshot/snapshotarchive.h"
#include "core/snapshot/snapshotcatalog.h"
#include "core/snapshot/snapshotstore.h"
#include "core/vault/secretvault.h"
#include "core/vmm/firecrackervmm.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/kvmprobe.h"
#include "core/vmm/qemumicrovm.h"
#include "core/vmm/vmm.h"
#include "core/vmm/vmmprocess.h"

#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>

#include <algorithm>
#include <csignal>
#include <optional>
#include <sys/resource.h>
#include <sys/stat.h>

namespace airlock {

namespace {

/// The guest agent connection of a running sandbox, for AgentApi (exec.*, files.*).
Result<agent::AgentClient *> agentOf(SandboxService &sandboxes, const QString &name)
{
    // The helper's own guests (template preparation) are nobody's to run commands in.
    if (name.startsWith(SandboxService::kInternalPrefix))
        return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
    AIRLOCK_TRY_INIT(sandbox, sandboxes.get(name));
    if (sandbox->state != SandboxState::Running)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not running")
                        .arg(name, sandboxStateName(sandbox->state)));
    Vmm *vmm = sandboxes.vmmOf(name);
    GuestAgent *agent = vmm ? vmm->agent() : nullptr;
    agent::AgentClient *client = agent ? agent->connection() : nullptr;
    if (!client)
        return fail(ErrorKind::AgentUnavailable,
                    QStringLiteral("the guest agent of '%1' is not connected").arg(name));
    return client;
}

Q_LOGGING_CATEGORY(lcDaemon, "airlock.daemon")

const QString kGroup = QStringLiteral("airlock");
const QString kVmmUser = QStringLiteral("airlock-vmm");
const QString kGatewayGroup = QStringLiteral("airlock-gateway");

} // namespace

// Declared in construction order: members are destroyed in reverse, so every service goes
// before what it holds a reference to.
struct HelperDaemon::Parts
{
    std::optional<StateDirLock> stateLock;
    std::unique_ptr<ImageStore> images;
    std::unique_ptr<Registry> registry;
    std::unique_ptr<ConsoleHub> consoles;
    std::unique_ptr<SandboxService> sandboxes;
    std::unique_ptr<EgressAudit> egressAudit;
    std::unique_ptr<RpcServer> server;
    std::unique_ptr<BindingStore> bindings;
    std::unique_ptr<SecretOwners> secretOwners;
    std::unique_ptr<CredentialAudit> credentialAudit;
    std::unique_ptr<CredentialApi> credentials;
    std::unique_ptr<CredentialBroker> broker;
    std::unique_ptr<SnapshotStore> snapshotStore;
    std::unique_ptr<SnapshotCatalog> snapshotCatalog;
    std::unique_ptr<SnapshotArchive> archive;
    std::unique_ptr<SnapshotService> snapshots;
    std::unique_ptr<TemplateService> templates;
    std::unique_ptr<SnapshotScheduler> snapshotScheduler;
    std::unique_ptr<EventBus> events;
    std::unique_ptr<SandboxApi> api;
    std::unique_ptr<SnapshotApi> snapshotApi;
    std::unique_ptr<AgentApi> agentApi;
    std::unique_ptr<GuestEnvDelivery> envDelivery;
    std::unique_ptr<WorkspaceApi> workspaceApi;

    ~Parts()
    {
        // A restore's or fork's memory fill reads the snapshot store on a worker of the sandbox
        // service, which is declared (and so destroyed) before the store: the fill ends first.
        if (sandboxes)
            sandboxes->waitForWorkers();
    }
};

HelperDaemon::HelperDaemon() : m_parts(std::make_unique<Parts>()) { }

HelperDaemon::~HelperDaemon() = default;

Result<void> HelperDaemon::prepare(const HelperDaemonConfig &config)
{
    Parts &p = *m_parts;
    // Nothing the helper writes is for other users unless it says so (socket, runtime dirs).
    ::umask(0077);
    if (!QDir().mkpath(config.stateDir))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create state dir %1").arg(config.stateDir));
    // Before anything reads the registry or touches a guest: one helper per state dir.
    auto stateLock = StateDirLock::acquire(config.stateDir);
    AIRLOCK_TRY(stateLock);
    p.stateLock.emplace(std::move(*stateLock));
    // Traversable but not listable by the unprivileged VMM user, which needs its runtime dir.
    ::chmod(QFile::encodeName(config.stateDir).constData(), 0711);
    installLogHandler(QDir(config.stateDir).filePath(QStringLiteral("log")),
                      QStringLiteral("airlockd"), config.logLevel);
    return {};
}

Result<void> HelperDaemon::start(const HelperDaemonConfig &config)
{
    Parts &p = *m_parts;
    const QDir state(config.stateDir);
    // Clients, guests' sockets and log files all take descriptors; the soft limit of a shell
    // (often 1024) is far below what the kernel allows us.
    rlimit files {};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
    // A client that vanishes must cost us an error code, not the process.
    std::signal(SIGPIPE, SIG_IGN);

    // The account tools and the KVM probe below wait for their processes: they run once, here,
    // before the socket listens (nothing is served yet, so no client waits), and never again.
    auto group = HostAccounts::ensureGroup(kGroup);
    AIRLOCK_TRY(group);
    auto vmmUser = HostAccounts::ensureSystemUser(kVmmUser);
    AIRLOCK_TRY(vmmUser);
    auto gatewayGroup = HostAccounts::ensureGroup(kGatewayGroup);
    AIRLOCK_TRY(gatewayGroup);

    p.images = std::make_unique<ImageStore>(config.imageDir);
    KvmProbe::Config probeConfig;
    // The probe boots the default image's kernel; without one it cannot prove KVM works.
    if (auto image = p.images->find(QStringLiteral("default")))
        probeConfig.kernelPath = image->kernelPath;
    probeConfig.vmmUid = vmmUser->uid;
    probeConfig.vmmGid = vmmUser->gid;
    // The package makes airlock-vmm a member of kvm (installers/systemd/airlock.sysusers); a
    // helper started by hand (run-demo.sh, a build tree) gives every VMM the device's group
    // itself, so /dev/kvm as root:kvm 0660 (the Debian default) works there too.
    std::vector<gid_t> vmmGroups = VmmCredentials::forUser(vmmUser->uid, vmmUser->gid).groups;
    if (const auto kvmGroup = KvmProbe::deviceGroup(probeConfig.kvmDevice);
        kvmGroup && std::ranges::find(vmmGroups, *kvmGroup) == vmmGroups.end())
        vmmGroups.push_back(*kvmGroup);
    probeConfig.vmmGroups = vmmGroups;
    const KvmProbeResult probe = KvmProbe::run(probeConfig);
    if (!probe.warning.isEmpty())
        qCWarning(lcDaemon, "%s", qPrintable(probe.warning));
    qCInfo(lcDaemon, "acceleration: %s", qPrintable(accelerationName(probe.acceleration)));

    auto registry = Registry::open(state.filePath(QStringLiteral("registry.sqlite")));
    AIRLOCK_TRY(registry);
    p.registry = std::move(*registry);

    p.consoles = std::make_unique<ConsoleHub>(config.scrollbackBytes);
    SandboxServiceConfig sandboxConfig;
    sandboxConfig.stateDir = config.stateDir;
    sandboxConfig.acceleration = probe.acceleration;
    sandboxConfig.accelerationWarning = probe.warning;
    sandboxConfig.vmmUid = vmmUser->uid;
    sandboxConfig.vmmGid = vmmUser->gid;
    sandboxConfig.vmmGroups = vmmGroups;
    sandboxConfig.vmmUidBase = SandboxServiceConfig::kDefaultVmmUidBase;
    sandboxConfig.gatewayUidBase = SandboxServiceConfig::kDefaultGatewayUidBase;
    sandboxConfig.addressPool = config.addressPool;
    sandboxConfig.benchPort = config.benchPort;
    // Firecracker needs KVM and its binary; without either its sandboxes are refused with the
    // reason, and --vmm auto falls back to QEMU (docs/vmm.md).
    const QString firecracker = FirecrackerVmm::findFirecracker(config.firecrackerBinary);
    // Found where airlock-fcctl was: beside it (the package's /usr/lib/airlock, or beside
    // airlockd), else in a build tree's app/airlock-console/.
    const QString fcctlDir = QFileInfo(config.fcctlProgram).path();
    const QString consoleRelay =
        locateHelperProgram(QStringLiteral("airlock-console"), fcctlDir, fcctlDir);
    sandboxConfig.firecrackerBinary = firecracker;
    if (firecracker.isEmpty())
        sandboxConfig.firecrackerUnavailable = config.firecrackerBinary.isEmpty()
            ? QStringLiteral("no firecracker binary (give airlockd --firecracker PATH)")
            : QStringLiteral("%1 is not an executable file").arg(config.firecrackerBinary);
    else if (!QFileInfo(config.fcctlProgram).isExecutable())
        sandboxConfig.firecrackerUnavailable =
            QStringLiteral("no airlock-fcctl at %1 (it is installed beside airlock-gateway)")
                .arg(config.fcctlProgram);
    else if (!QFileInfo(consoleRelay).isExecutable())
        sandboxConfig.firecrackerUnavailable =
            QStringLiteral("no airlock-console at %1 (it is installed beside airlock-fcctl)")
                .arg(consoleRelay);
    else if (probe.acceleration != Acceleration::Kvm && !config.firecrackerWithoutKvm)
        sandboxConfig.firecrackerUnavailable =
            QStringLiteral("Firecracker needs KVM, which the VMM user cannot use here");
    else
        sandboxConfig.firecrackerUnavailable.clear();
    if (config.vmm == QLatin1String("firecracker")) {
        if (!sandboxConfig.firecrackerUnavailable.isEmpty())
            return fail(
                ErrorKind::BackendUnavailable,
                QStringLiteral("--vmm firecracker: %1").arg(sandboxConfig.firecrackerUnavailable));
        sandboxConfig.defaultVmm = VmmKind::Firecracker;
    } else if (config.vmm == QLatin1String("auto")) {
        sandboxConfig.defaultVmm =
            sandboxConfig.firecrackerUnavailable.isEmpty() ? VmmKind::Firecracker : VmmKind::Qemu;
    }
    qCInfo(lcDaemon, "default VMM: %s%s", qPrintable(vmmKindName(sandboxConfig.defaultVmm)),
           sandboxConfig.firecrackerUnavailable.isEmpty()
               ? ""
               : qPrintable(QStringLiteral(" (Firecracker unavailable: %1)")
                                .arg(sandboxConfig.firecrackerUnavailable)));
    sandboxConfig.network.gatewayProgram = config.gatewayProgram;
    sandboxConfig.network.stateDir = config.stateDir;
    sandboxConfig.network.upstreamDns = config.upstreamDns;
    sandboxConfig.network.trustStoreCaFile = config.trustStoreCaFile;
    sandboxConfig.network.gatewayGid = *gatewayGroup;
    sandboxConfig.network.gatewayLogLevel = config.logLevel;
    if (!QFileInfo(config.gatewayProgram).isExecutable())
        qCWarning(lcDaemon, "no airlock-gateway at %s: sandboxes cannot start",
                  qPrintable(config.gatewayProgram));
    p.sandboxes = std::make_unique<SandboxService>(
        *p.registry, *p.consoles, *p.images, [] { return std::make_unique<QemuMicrovm>(); },
        sandboxConfig);
    if (config.firecrackerWithoutKvm)
        qCWarning(lcDaemon,
                  "--firecracker-without-kvm: Firecracker sandboxes start without a "
                  "proven KVM (a test option)");
    p.sandboxes->setVmmFactory(VmmKind::Firecracker,
                               [firecracker, fcctl = config.fcctlProgram, consoleRelay,
                                withoutKvm = config.firecrackerWithoutKvm] {
                                   auto vmm = std::make_unique<FirecrackerVmm>(firecracker, fcctl,
                                                                               consoleRelay);
                                   vmm->setRequireKvm(!withoutKvm);
                                   return vmm;
                               });
    p.egressAudit = std::make_unique<EgressAudit>(state.filePath(QStringLiteral("audit")));
    QObject::connect(
        p.sandboxes.get(), &SandboxService::egressEvent, p.sandboxes.get(),
        [audit = p.egressAudit.get()](const QString &, qint64 seq, const QJsonObject &event) {
            audit->write(seq, event);
        });
    p.server = std::make_unique<RpcServer>(AccessPolicy(*group, kGroup));
    // A vault that cannot open (lost key, wrong mode) must not stop the helper from serving
    // sandboxes: the secret methods report it instead.
    auto vault = vault::SecretVault::open(state.filePath(QStringLiteral("vault")),
                                          state.filePath(QStringLiteral("vault.key")));
    if (!vault)
        qCWarning(lcDaemon, "vault unavailable: %s", qPrintable(vault.error().message));
    p.bindings = std::make_unique<BindingStore>(*p.registry);
    p.secretOwners = std::make_unique<SecretOwners>(*p.registry);
    p.credentialAudit = std::make_unique<CredentialAudit>(state.filePath(QStringLiteral("audit")));
    p.credentials =
        std::make_unique<CredentialApi>(*p.server, std::move(vault), *p.bindings, *p.sandboxes,
                                        *p.secretOwners, *p.credentialAudit);
    // Before restore(): the gateways of re-adopted guests need their credentials too.
    p.broker = std::make_unique<CredentialBroker>(
        [credentials = p.credentials.get()] { return credentials->secretVault(); }, *p.bindings,
        *p.sandboxes);
    p.broker->watch(*p.credentials);
    AIRLOCK_TRY(p.sandboxes->restore());

    auto snapshotStore = SnapshotStore::open(state.filePath(QStringLiteral("snapshots")));
    AIRLOCK_TRY(snapshotStore);
    p.snapshotStore = std::move(*snapshotStore);
    p.snapshotCatalog = std::make_unique<SnapshotCatalog>(p.registry->connectionName());
    p.archive = std::make_unique<SnapshotArchive>(*p.snapshotStore, *p.snapshotCatalog);
    p.snapshots = std::make_unique<SnapshotService>(*p.sandboxes, *p.archive);
    TemplateService::Options templateOptions;
    templateOptions.automatic = config.automaticTemplates;
    templateOptions.maxTemplates = config.templatesMax;
    p.templates =
        std::make_unique<TemplateService>(*p.sandboxes, *p.snapshots, *p.archive, templateOptions);
    p.snapshotScheduler =
        std::make_unique<SnapshotScheduler>(*p.sandboxes, *p.snapshots, *p.archive);
    p.snapshots->setBindings(p.bindings.get());
    // Before serving: a crash may have left a manifest without its registry row.
    AIRLOCK_TRY(p.snapshots->restore());
    p.templates->start();
    p.snapshotScheduler->start();

    p.events = std::make_unique<EventBus>(*p.server, *p.sandboxes, *p.consoles, *p.snapshots);
    p.api = std::make_unique<SandboxApi>(*p.server, *p.sandboxes, *p.consoles, *p.images);
    p.snapshotApi = std::make_unique<SnapshotApi>(*p.server, *p.sandboxes, *p.snapshots,
                                                  *p.templates, *p.snapshotScheduler);
    p.snapshotApi->setCredentialControls(p.secretOwners.get(), p.credentialAudit.get());
    const AgentApi::ClientLookup agentLookup = [&sandboxes = *p.sandboxes](const QString &name) {
        return agentOf(sandboxes, name);
    };
    p.agentApi = std::make_unique<AgentApi>(*p.server, agentLookup);
    // A binding changed while its guest runs reaches the guest's env file at once.
    p.envDelivery = std::make_unique<GuestEnvDelivery>(
        agentLookup,
        [&sandboxes = *p.sandboxes](const QString &name) { return sandboxes.seedFiles(name); });
    QObject::connect(p.credentials.get(), &CredentialApi::bindingsChanged, p.envDelivery.get(),
                     &GuestEnvDelivery::deliver);
    p.workspaceApi = std::make_unique<WorkspaceApi>(*p.server, agentLookup);
    const int inheritedSocket = takeInheritedListenSocket();
    AIRLOCK_TRY(inheritedSocket >= 0 ? p.server->listen(inheritedSocket, config.socketPath)
                                     : p.server->listen(config.socketPath));
    qCInfo(lcDaemon, "airlockd %s ready (state %s, images %s)", AIRLOCK_VERSION,
           qPrintable(config.stateDir), qPrintable(config.imageDir));
    return {};
}

void HelperDaemon::close()
{
    if (m_parts->server)
        m_parts->server->close();
}

} // namespace airlock
