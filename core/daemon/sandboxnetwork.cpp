#include "core/daemon/sandboxnetwork.h"

#include "core/model/answerlater.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "core/pki/sandboxca.h"
#include "core/vmm/vmmprocess.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QLoggingCategory>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

#include <net/if.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcNetwork, "airlock.daemon.network")

/// How long killLeftoverGateway() waits for the killed gateway to be gone.
constexpr int kLeftoverGatewayWaitMs = 2000;

/// A root-only directory under the state dir.
Result<QString> privateDir(const QString &stateDir, const QString &name)
{
    const QString dir = QDir(stateDir).filePath(name);
    if (!QDir().mkpath(dir) || ::chmod(QFile::encodeName(dir).constData(), 0700) != 0)
        return fail(ErrorKind::OperationFailed, QStringLiteral("cannot create %1").arg(dir));
    return dir;
}

QString caDir(const QString &stateDir, const QString &sandbox)
{
    return QDir(stateDir).filePath(QStringLiteral("ca/") + sandbox);
}

} // namespace

SandboxNetwork::SandboxNetwork(SandboxNetworkConfig config, QString sandbox, LinkAllocation link,
                               uid_t vmmUid, uid_t gatewayUid, EgressPolicy policy, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_sandbox(std::move(sandbox))
    , m_link(std::move(link))
    , m_vmmUid(vmmUid)
    , m_gatewayUid(gatewayUid)
    , m_policy(std::move(policy))
    , m_tapName(TapDevice::interfaceName(m_sandbox, m_config.instance))
{
    m_restartTimer.setSingleShot(true);
    connect(&m_restartTimer, &QTimer::timeout, this, &SandboxNetwork::tryRestart);
}

SandboxNetwork::~SandboxNetwork()
{
    // Deliberately not down(): a helper that shuts down leaves guests running with their
    // tables; only the gateway goes (it exits when its control socket closes).
    if (m_gateway)
        m_gateway->stop(500);
}

void SandboxNetwork::up(bool adopt, Done done)
{
    m_down = false;
    auto rollback = [this](const Error &error) -> Result<void> {
        qCWarning(lcNetwork, "%s: network setup failed: %s", qPrintable(m_sandbox),
                  qPrintable(error.message));
        down();
        return std::unexpected(error);
    };
    if (adopt && TapDevice::isTap(m_tapName)) {
        // A re-adopting helper: its tap and CA exist (the CA is made again only if it went).
        m_tapCreated = true;
        if (m_caKeyPem.isEmpty()) {
            auto ca = readCa(m_config.stateDir, m_sandbox, /*make=*/true);
            if (!ca) {
                answerLater(this, std::move(done), rollback(ca.error()));
                return;
            }
            m_caKeyPem = ca->key;
            m_caCertificatePem = ca->certificate;
        }
        return upGatewayAndTable(adopt, std::move(done), rollback);
    }
    // On a worker: closing the descriptor that made the tap waits for an RCU grace period
    // (tens of ms on a busy host), and a sandbox's first start makes its CA (four fsync'd files);
    // other clients must not wait for either.
    struct Made
    {
        Result<void> tap;
        Result<CaPem> ca;
    };
    m_jobs.run<Made>(
        [config = TapConfig {m_tapName, m_vmmUid, m_link.gateway, m_link.prefixLength},
         stateDir = m_config.stateDir, sandbox = m_sandbox,
         needCa = m_caKeyPem.isEmpty()]() -> Made {
            Result<void> created = TapDevice::create(config);
            if (!created && created.error().kind == ErrorKind::AlreadyExists) {
                // A leftover of a crash (restore() removes those, but a tap may also outlive a
                // killed VMM for a moment): try once to take its place.
                if (TapDevice::remove(config.ifname))
                    created = TapDevice::create(config);
            }
            if (!created || !needCa)
                return {created, CaPem {}};
            return {created, readCa(stateDir, sandbox, /*make=*/true)};
        },
        [this, adopt, done = std::move(done), rollback](const Made &made) {
            if (made.tap)
                m_tapCreated = true;
            if (m_down) {
                // down() came first and found no tap to remove.
                if (made.tap)
                    (void)TapDevice::remove(m_tapName);
                m_tapCreated = false;
                return done(fail(ErrorKind::InvalidState,
                                 QStringLiteral("the network of '%1' was taken down while its "
                                                "tap was made")
                                     .arg(m_sandbox)));
            }
            if (!made.tap)
                return done(rollback(made.tap.error()));
            if (!made.ca)
                return done(rollback(made.ca.error()));
            if (m_caKeyPem.isEmpty()) {
                m_caKeyPem = made.ca->key;
                m_caCertificatePem = made.ca->certificate;
            }
            upGatewayAndTable(adopt, done, rollback);
        });
}

void SandboxNetwork::upGatewayAndTable(bool adopt, Done done,
                                       const std::function<Result<void>(const Error &)> &rollback)
{
    startGateway([this, adopt, done = std::move(done), rollback](const Result<void> &started) {
        if (!started)
            return done(rollback(started.error()));
        auto loaded = [this, done, rollback](const Result<void> &table) {
            if (!table)
                return done(rollback(table.error()));
            qCInfo(lcNetwork, "%s: network up on %s (guest %s/%d, gateway %s)",
                   qPrintable(m_sandbox), qPrintable(m_tapName),
                   qPrintable(m_link.guest.toString()), m_link.prefixLength,
                   qPrintable(m_link.gateway.toString()));
            done({});
        };
        // A re-adopting helper brings up every network at once: fifty loads on fifty threads
        // contend for the kernel's nftables lock and took twice as long (bench_scale) as one
        // after the other here, between the clients' requests.
        if (adopt)
            return loaded(loadTable());
        loadTableOffLoop(loaded);
    });
}

NftablesSpec SandboxNetwork::tableSpec()
{
    NftablesSpec spec;
    spec.sandbox = m_sandbox;
    spec.instance = m_config.instance;
    spec.ifname = m_tapName;
    spec.guestMac = m_link.macText();
    spec.guest = m_link.guest;
    spec.gateway = m_link.gateway;
    spec.gatewayTcpPort = m_config.tcpPort;
    spec.gatewayDnsPort = m_config.dnsPort;
    spec.explicitProxyPort = m_config.explicitProxyPort;
    // Unique across networks: a sandbox's next network never repeats its last one's number.
    static quint64 loads = 0;
    m_tableGeneration = ++loads;
    return spec;
}

Result<QByteArray> SandboxNetwork::loadAndFingerprint(const NftablesSpec &spec)
{
    AIRLOCK_TRY(NftablesTable::load(spec));
    return NftablesTable::fingerprint(spec.sandbox, spec.instance);
}

void SandboxNetwork::tableLoaded(const QByteArray &fingerprint)
{
    m_tableLoaded = true;
    // The table names the tap: renamed or replaced, the tap would pass unfiltered (a kernel
    // keeps a netdev hook for an absent device), so its index is part of what is checked.
    m_tapIndex = ::if_nametoindex(m_tapName.toLatin1().constData());
    m_tableFingerprint = fingerprint;
}

Result<void> SandboxNetwork::loadTable()
{
    AIRLOCK_TRY_INIT(fingerprint, loadAndFingerprint(tableSpec()));
    tableLoaded(*fingerprint);
    return {};
}

void SandboxNetwork::loadTableOffLoop(Done done)
{
    // libnftables reads the kernel's table list for every command: with 50 guests a load takes
    // tens of ms, which other clients must not wait for.
    m_jobs.run<Result<QByteArray>>(
        [spec = tableSpec()] { return loadAndFingerprint(spec); },
        [this, done = std::move(done)](const Result<QByteArray> &loaded) {
            if (m_down) {
                // down() found no table to remove: it came after down().
                if (loaded)
                    (void)NftablesTable::remove(m_sandbox, m_config.instance);
                return done(fail(ErrorKind::InvalidState,
                                 QStringLiteral("the network of '%1' was taken down while its "
                                                "table was loaded")
                                     .arg(m_sandbox)));
            }
            if (!loaded)
                return done(std::unexpected(loaded.error()));
            tableLoaded(*loaded);
            done({});
        });
}

Result<void> SandboxNetwork::verifyTable(const Result<QHash<QString, QByteArray>> &current) const
{
    if (!m_tableLoaded)
        return {};
    if (::if_nametoindex(m_tapName.toLatin1().constData()) != m_tapIndex || m_tapIndex == 0)
        return fail(
            ErrorKind::NotFound,
            QStringLiteral("the tap %1 the table filters is gone or was renamed").arg(m_tapName));
    AIRLOCK_TRY(current);
    const auto now = current->constFind(m_sandbox);
    if (now == current->cend())
        return fail(ErrorKind::NotFound,
                    QStringLiteral("sandbox %1 has no nftables table %2")
                        .arg(m_sandbox, NftablesTable::tableName(m_sandbox, m_config.instance)));
    if (*now != m_tableFingerprint)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("the nftables table %1 was changed")
                        .arg(NftablesTable::tableName(m_sandbox, m_config.instance)));
    return {};
}

Result<void> SandboxNetwork::reloadTable()
{
    if (m_down)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("the network of '%1' is down").arg(m_sandbox));
    // The guest's frames arrive on the tap it was started with, whatever its name is now.
    const unsigned index = ::if_nametoindex(m_tapName.toLatin1().constData());
    if (index == 0 || index != m_tapIndex)
        return fail(ErrorKind::NotFound,
                    QStringLiteral("the guest's tap is no longer named %1").arg(m_tapName));
    return loadTable();
}

void SandboxNetwork::down(bool superseded)
{
    m_down = true;
    m_restartTimer.stop();
    // A gateway still starting is stopped with it; its callback never runs.
    delete std::exchange(m_startingGateway, nullptr);
    if (superseded) {
        if (m_gateway) {
            m_gateway->stop();
            m_gateway->deleteLater();
            m_gateway = nullptr;
        }
        m_tableLoaded = false;
        m_tapCreated = false;
        return;
    }
    // Best effort: the table goes even when the tap is missing, and the other way round.
    if (auto removed = NftablesTable::remove(m_sandbox, m_config.instance); !removed)
        qCWarning(lcNetwork, "%s: %s", qPrintable(m_sandbox), qPrintable(removed.error().message));
    m_tableLoaded = false;
    if (m_gateway) {
        m_gateway->stop();
        m_gateway->deleteLater();
        m_gateway = nullptr;
    }
    QFile::remove(pidFilePath());
    if (m_tapCreated) {
        if (auto removed = TapDevice::remove(m_tapName); !removed)
            qCWarning(lcNetwork, "%s: %s", qPrintable(m_sandbox),
                      qPrintable(removed.error().message));
        m_tapCreated = false;
    }
}

void SandboxNetwork::whenGatewaysGone(std::function<void()> then)
{
    if (m_gatewayExits->pending == 0)
        return then();
    m_gatewayExits->whenNone = std::move(then);
}

Result<void> SandboxNetwork::setPolicy(const EgressPolicy &policy,
                                       GatewayProcess::PolicyAck enforced)
{
    m_policy = policy;
    if (!m_gateway || !m_gateway->isRunning()) {
        // Starting or restarting: no guest traffic passes until it runs with this (gatewayReady).
        qCInfo(lcNetwork, "%s: the gateway is not running yet; it gets the new policy once ready",
               qPrintable(m_sandbox));
        if (enforced)
            enforced({});
        return {};
    }
    return m_gateway->setPolicy(policy, std::move(enforced));
}

Result<void> SandboxNetwork::forgetSecret(const QString &secret)
{
    if (!m_gateway || !m_gateway->isRunning())
        return {};
    return m_gateway->forgetSecret(secret);
}

Result<SandboxNetwork::CaPem> SandboxNetwork::readCa(const QString &stateDir,
                                                     const QString &sandbox, bool make)
{
    auto parent = privateDir(stateDir, QStringLiteral("ca"));
    AIRLOCK_TRY(parent);
    auto dir = privateDir(stateDir, QStringLiteral("ca/") + sandbox);
    AIRLOCK_TRY(dir);
    const QString certificatePath = QDir(*dir).filePath(QStringLiteral("ca.pem"));
    const QString keyPath = QDir(*dir).filePath(QStringLiteral("ca.key"));
    auto ca = pki::SandboxCa::load(certificatePath, keyPath);
    if (!ca && ca.error().kind == ErrorKind::NotFound && make) {
        ca = pki::SandboxCa::generate(sandbox.left(40));
        if (ca) {
            AIRLOCK_TRY(ca->save(certificatePath, keyPath));
            qCInfo(lcNetwork, "%s: generated sandbox CA %s", qPrintable(sandbox),
                   qPrintable(ca->fingerprint()));
        }
    }
    AIRLOCK_TRY(ca);
    QFile key(keyPath);
    if (!key.open(QIODevice::ReadOnly))
        return fail(ErrorKind::OperationFailed, QStringLiteral("cannot read %1").arg(keyPath));
    return CaPem {key.readAll(), ca->certificatePem()};
}

void SandboxNetwork::startGateway(GatewayProcess::Ready done)
{
    auto logDir = privateDir(m_config.stateDir, QStringLiteral("log"));
    if (!logDir) {
        answerLater(this, std::move(done), Result<void>(std::unexpected(logDir.error())));
        return;
    }
    GatewayConfig config;
    config.program = m_config.gatewayProgram;
    config.sandbox = m_sandbox;
    config.gateway = m_link.gateway;
    config.guest = m_link.guest;
    config.prefixLength = m_link.prefixLength;
    config.tcpPort = m_config.tcpPort;
    config.dnsPort = m_config.dnsPort;
    config.explicitProxyPort = m_config.explicitProxyPort;
    config.upstreamDns = m_config.upstreamDns;
    config.syntheticPool = m_config.syntheticPool;
    config.trustStoreCaFile = m_config.trustStoreCaFile;
    config.caCertificatePem = m_caCertificatePem;
    config.caKeyPem = m_caKeyPem;
    config.policy = m_policy;
    // Its own uid (unless the helper runs every VMM as one user), so a compromised gateway
    // cannot signal or trace another sandbox's gateway; no supplementary groups.
    config.credentials = VmmCredentials {m_gatewayUid, m_config.gatewayGid, {m_config.gatewayGid}};
    config.logPath = QDir(*logDir).filePath(QStringLiteral("gateway-%1.log").arg(m_sandbox));
    config.logLevel = m_config.gatewayLogLevel;
    delete std::exchange(m_startingGateway, new GatewayProcess(this));
    GatewayProcess *gateway = m_startingGateway;
    ++m_gatewayExits->pending;
    gateway->setReleased([exits = m_gatewayExits] {
        if (--exits->pending == 0 && exits->whenNone)
            std::exchange(exits->whenNone, nullptr)();
    });
    connect(gateway, &GatewayProcess::egress, this, &SandboxNetwork::egress);
    gateway->start(config, m_config.readyTimeoutMs,
                   [this, gateway, started = config.policy,
                    done = std::move(done)](const Result<void> &ready) {
                       m_startingGateway = nullptr;
                       if (!ready) {
                           // Inside its own callback: deleted from the event loop.
                           gateway->deleteLater();
                           return done(ready);
                       }
                       gatewayReady(gateway, started);
                       done({});
                   });
}

void SandboxNetwork::gatewayReady(GatewayProcess *gateway, const EgressPolicy &startedWith)
{
    connect(gateway, &GatewayProcess::exited, this, &SandboxNetwork::onGatewayExited);
    m_gateway = gateway;
    m_gatewayStartedAtMs = QDateTime::currentMSecsSinceEpoch();
    writePidFile();
    // A policy set while the gateway started: sent before anything else, so it is in force
    // before the guest's first packet (the control channel is read in order).
    if (m_policy != startedWith) {
        if (auto sent = m_gateway->setPolicy(m_policy); !sent)
            qCWarning(lcNetwork, "%s: %s", qPrintable(m_sandbox), qPrintable(sent.error().message));
    }
    // Before the guest (or, after a restart, its next connection) can send anything: the
    // control channel is ordered, so the gateway applies them before it reads guest traffic
    // queued behind them.
    if (auto pushed = pushCredentials(); !pushed)
        qCWarning(lcNetwork, "%s: %s", qPrintable(m_sandbox), qPrintable(pushed.error().message));
}

Result<void> SandboxNetwork::pushCredentials()
{
    if (!m_gateway || !m_gateway->isRunning())
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("the gateway of '%1' is restarting; it gets the credentials "
                                   "when it is back")
                        .arg(m_sandbox));
    const QList<GatewayCredentialGrant> grants =
        m_credentialSource ? m_credentialSource() : QList<GatewayCredentialGrant>();
    return m_gateway->setCredentials(grants);
}

void SandboxNetwork::onGatewayExited(const QString &reason)
{
    if (m_gateway) {
        m_gateway->deleteLater();
        m_gateway = nullptr;
    }
    QFile::remove(pidFilePath());
    if (m_down)
        return;
    if (QDateTime::currentMSecsSinceEpoch() - m_gatewayStartedAtMs > kStableMs) {
        m_restartAttempt = 0;
        m_restartDelayMs = kFirstRestartDelayMs;
    }
    m_deathReason = reason;
    qCWarning(lcNetwork,
              "%s: %s; guest traffic is dropped until the gateway is restarted in "
              "%d ms",
              qPrintable(m_sandbox), qPrintable(reason), m_restartDelayMs);
    m_restartTimer.start(m_restartDelayMs);
}

void SandboxNetwork::tryRestart()
{
    if (m_down || m_gateway || m_startingGateway)
        return;
    ++m_restartAttempt;
    m_restartDelayMs = qMin(m_restartDelayMs * 2, kMaxRestartDelayMs);
    startGateway([this](const Result<void> &started) {
        if (m_down)
            return;
        if (!started) {
            qCWarning(lcNetwork,
                      "%s: restarting the gateway failed (attempt %d): %s; next try in "
                      "%d ms",
                      qPrintable(m_sandbox), m_restartAttempt, qPrintable(started.error().message),
                      m_restartDelayMs);
            m_restartTimer.start(m_restartDelayMs);
            return;
        }
        qCInfo(lcNetwork, "%s: gateway restarted (attempt %d)", qPrintable(m_sandbox),
               m_restartAttempt);
        Q_EMIT gatewayRestarted(m_deathReason, m_restartAttempt);
    });
}

QString SandboxNetwork::pidFilePath() const
{
    return QDir(m_config.stateDir).filePath(QStringLiteral("net/%1.gateway").arg(m_sandbox));
}

void SandboxNetwork::writePidFile() const
{
    if (!privateDir(m_config.stateDir, QStringLiteral("net")) || !m_gateway)
        return;
    const pid_t pid = m_gateway->pid();
    const auto start = VmmProcess::readStartTime(pid);
    // Atomic by rename, not durable: it serves a helper that restarts after kill -9 (the page
    // cache holds it); after a power loss no gateway runs anyway. An fsync here held the event
    // loop for tens of ms on a busy disk, on every start.
    const QString path = pidFilePath();
    QFile file(path + QStringLiteral(".tmp"));
    if (!start || !file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return;
    const bool written =
        file.write(QByteArray::number(qint64(pid)) + ' ' + QByteArray::number(*start) + '\n') > 0;
    file.close();
    if (!written
        || ::rename(QFile::encodeName(file.fileName()).constData(),
                    QFile::encodeName(path).constData())
            != 0)
        file.remove();
}

void SandboxNetwork::killLeftoverGateway(const QString &stateDir, const QString &sandbox)
{
    const QString path = QDir(stateDir).filePath(QStringLiteral("net/%1.gateway").arg(sandbox));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return;
    const QList<QByteArray> fields = file.readAll().trimmed().split(' ');
    file.close();
    QFile::remove(path);
    if (fields.size() != 2)
        return;
    const pid_t pid = pid_t(fields[0].toLongLong());
    // The pidfd names the process whose start time was recorded, never one that got its pid.
    VmmProcess gateway;
    if (pid <= 1 || !gateway.watch(pid, fields[1].toLongLong()))
        return;
    qCWarning(lcNetwork, "%s: killing the gateway (pid %d) an earlier airlockd left running",
              qPrintable(sandbox), int(pid));
    gateway.sendSignal(SIGKILL);
    // Its listeners stay bound until it is gone; the new gateway needs the same ports.
    gateway.waitForExit(kLeftoverGatewayWaitMs);
}

void SandboxNetwork::removeCa(const QString &stateDir, const QString &sandbox)
{
    QDir(caDir(stateDir, sandbox)).removeRecursively();
}

} // namespace airlock
