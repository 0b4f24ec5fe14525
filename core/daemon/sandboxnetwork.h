#pragma once

#include "core/daemon/gatewayprocess.h"
#include "core/daemon/workerjobs.h"
#include "core/model/egresspolicy.h"
#include "core/model/error.h"
#include "core/net/addresspool.h"
#include "core/net/nftablestable.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

#include <sys/types.h>

namespace airlock {

/// Host-wide network settings of airlockd (its command line; docs/network.md).
struct SandboxNetworkConfig
{
    QString gatewayProgram; ///< absolute path of airlock-gateway
    QString stateDir; ///< CAs go to STATE/ca/<name>/, gateway pid files to STATE/net/
    /// The helper's tag (HelperInstance::tagFor(stateDir)) in its tap and table names; empty:
    /// untagged names (tests that build one network by hand).
    QString instance;
    /// `upstreamDns` of the gateway's config: {"address", "port", "timeoutMs"}.
    QJsonObject upstreamDns;
    QString trustStoreCaFile; ///< empty: the system's trust store
    gid_t gatewayGid = 0; ///< group `airlock-gateway`
    quint16 tcpPort = 15001; ///< the gateway's transparent TCP listener on GW
    /// Its DNS listener on GW (UDP and TCP). Not 53: the table redirects the guest's port-53
    /// traffic here anyway, and an unprivileged port needs no CAP_NET_BIND_SERVICE.
    quint16 dnsPort = 15053;
    /// The gateway's explicit HTTP proxy on GW (`http_proxy=http://GW:3128` in the guest):
    /// redirected by the table to the TCP listener, served in explicit-proxy mode.
    quint16 explicitProxyPort = 3128;
    /// The gateway's synthetic DNS answers (DnsNameMapping); must not overlap the link pool.
    QString syntheticPool = QStringLiteral("100.112.0.0/16");
    int readyTimeoutMs = GatewayProcess::kDefaultReadyTimeoutMs;
    QString gatewayLogLevel = QStringLiteral("info"); ///< airlockd's --log-level, passed on
};

/// One sandbox's network on the host (docs/network.md): its tap, its sandbox CA, its
/// airlock-gateway and its nftables table, brought up in the order that never lets a guest
/// packet meet a link without its table, and torn down in reverse. A gateway that dies while
/// the sandbox runs is restarted with exponential backoff (0.5 s doubling up to 30 s); until
/// then the table keeps redirecting to listeners that no longer exist, so guest traffic is
/// refused or dropped, never let through.
class SandboxNetwork : public QObject
{
    Q_OBJECT
public:
    static constexpr int kFirstRestartDelayMs = 500;
    static constexpr int kMaxRestartDelayMs = 30000;
    /// A gateway that stayed up this long resets the backoff.
    static constexpr int kStableMs = 60000;

    SandboxNetwork(SandboxNetworkConfig config, QString sandbox, LinkAllocation link, uid_t vmmUid,
                   uid_t gatewayUid, EgressPolicy policy, QObject *parent = nullptr);
    ~SandboxNetwork() override;

    /// Called once when up() is done (from the event loop): success, or the first error.
    using Done = std::function<void(const Result<void> &)>;
    /// Brings the network up: the tap (owner: the VMM's uid; with `adopt`, the existing tap of
    /// a running guest is kept), the sandbox CA (loaded or generated), the gateway (its
    /// listeners bound on GW; its "ready" waited for on the event loop), then the table, and
    /// calls `done`. On error everything made here is removed again (an adopted tap too: its
    /// guest cannot keep running). A policy set meanwhile is in force when `done` runs.
    void up(bool adopt, Done done);
    /// Table, then gateway, then tap (the link's index is the caller's to release). Call once
    /// the VMM is gone: a tap still held fails with Busy and is reported in the log. With
    /// `superseded` (a newer network of the same sandbox is up already: a restore), only the
    /// gateway stops: table, tap and pid file have the same names and are the newer one's.
    void down(bool superseded = false);
    /// Calls `then` once every gateway process this network started is gone (at once when
    /// none is left, else from the event loop, possibly after this object is deleted): only
    /// then are the link's ports free for another network. Replaces an earlier `then`.
    void whenGatewaysGone(std::function<void()> then);
    /// Hands a new policy to the running gateway; kept for its restarts in any case.
    /// `enforced` is called once (GatewayProcess::PolicyAck): at once when no gateway runs
    /// (nothing passes until one starts, with this policy), else when the gateway confirmed it.
    /// Errors (then `enforced` is not called): OperationFailed when the write to the gateway
    /// fails.
    Result<void> setPolicy(const EgressPolicy &policy, GatewayProcess::PolicyAck enforced = {});
    /// Tells the running gateway to drop every value of a deleted secret (success when none
    /// runs: a new gateway starts with no value of it).
    Result<void> forgetSecret(const QString &secret);
    /// Where the gateway's credentials come from (the sandbox's bindings with their values,
    /// read from the vault each time, so airlockd holds no value longer than a send). Asked
    /// whenever a gateway has started (also after a restart) and by pushCredentials(). Set
    /// before up().
    using CredentialSource = std::function<QList<GatewayCredentialGrant>()>;
    void setCredentialSource(CredentialSource source) { m_credentialSource = std::move(source); }
    /// Hands the running gateway the current credentials (a binding or secret changed).
    /// InvalidState while the gateway is restarting (it gets them when it is back).
    Result<void> pushCredentials();

    /// Checks that the table loaded by up() is still there as loaded, against `current`
    /// (NftablesTable::fingerprints of this helper's instance, or the error listing them):
    /// success also when no table is up. NotFound when it is gone, OperationFailed when it was
    /// changed (or could not be listed).
    Result<void> verifyTable(const Result<QHash<QString, QByteArray>> &current) const;
    /// Changes with every load of this network's table (and differs between networks): a
    /// fingerprint listed before the last load says nothing about the table now.
    quint64 tableGeneration() const { return m_tableGeneration; }
    /// Loads the table again (after verifyTable() failed); the errors of NftablesTable::load.
    Result<void> reloadTable();

    const LinkAllocation &link() const { return m_link; }
    /// The policy the gateway enforces (or will start with).
    const EgressPolicy &policy() const { return m_policy; }
    QString tapName() const { return m_tapName; }
    /// The CA certificate (PEM) the guest must trust; empty before up().
    QByteArray caCertificatePem() const { return m_caCertificatePem; }
    /// pid of the running gateway, 0 while there is none.
    pid_t gatewayPid() const { return m_gateway ? m_gateway->pid() : 0; }
    uid_t gatewayUid() const { return m_gatewayUid; }

    /// Kills the gateway a crashed airlockd left for `sandbox` (normally it exits on its own
    /// when the control socket closes), as recorded in STATE/net/<sandbox>.gateway: pid and
    /// start time must both match, so a recycled pid is never signalled.
    static void killLeftoverGateway(const QString &stateDir, const QString &sandbox);
    /// Removes the sandbox's CA directory (sandbox.delete).
    static void removeCa(const QString &stateDir, const QString &sandbox);

Q_SIGNALS:
    /// One decision of the gateway (its "event" object).
    void egress(const QJsonObject &event);
    /// The gateway died (`reason`) and, after `attempt` tries, runs again.
    void gatewayRestarted(const QString &reason, int attempt);

private:
    /// The sandbox's CA in PEM, from STATE/ca/NAME.
    struct CaPem
    {
        QByteArray key;
        QByteArray certificate;
    };
    /// Reads the sandbox's CA; when there is none, makes and saves one if `make` (four fsync'd
    /// files), else NotFound. Files and OpenSSL only, so it may run on a worker.
    static Result<CaPem> readCa(const QString &stateDir, const QString &sandbox, bool make);
    /// up() after the tap and the CA: the gateway, then the table.
    void upGatewayAndTable(bool adopt, Done done,
                           const std::function<Result<void>(const Error &)> &rollback);
    /// The table's spec; a new table generation begins.
    NftablesSpec tableSpec();
    /// Loads the table and lists it back; runs on any thread.
    static Result<QByteArray> loadAndFingerprint(const NftablesSpec &spec);
    /// Remembers what verifyTable() compares with.
    void tableLoaded(const QByteArray &fingerprint);
    /// The table as up() loads it; remembers its fingerprint for verifyTable().
    Result<void> loadTable();
    /// loadTable() with the kernel work on a worker; `done` on this thread. InvalidState when
    /// down() came meanwhile (the table is removed again).
    void loadTableOffLoop(Done done);
    /// Starts a gateway with the current policy; `done` as GatewayProcess::Ready.
    void startGateway(GatewayProcess::Ready done);
    /// Takes a gateway that reported ready into service (pid file, newer policy, credentials).
    void gatewayReady(GatewayProcess *gateway, const EgressPolicy &startedWith);
    void onGatewayExited(const QString &reason);
    void tryRestart();
    QString pidFilePath() const;
    void writePidFile() const;

    SandboxNetworkConfig m_config;
    QString m_sandbox;
    LinkAllocation m_link;
    uid_t m_vmmUid;
    uid_t m_gatewayUid;
    EgressPolicy m_policy;
    QString m_tapName;
    QByteArray m_caCertificatePem;
    QByteArray m_caKeyPem;
    GatewayProcess *m_gateway = nullptr; ///< the running gateway
    GatewayProcess *m_startingGateway = nullptr; ///< one that has not reported ready yet
    /// Gateway processes of this network not yet gone, shared with their ProcessReapers.
    struct GatewayExits
    {
        int pending = 0;
        std::function<void()> whenNone;
    };
    std::shared_ptr<GatewayExits> m_gatewayExits = std::make_shared<GatewayExits>();
    bool m_tapCreated = false;
    bool m_tableLoaded = false;
    QByteArray m_tableFingerprint; ///< of the table as loaded (verifyTable)
    quint64 m_tableGeneration = 0; ///< of the last load (tableGeneration)
    unsigned m_tapIndex = 0; ///< ifindex of m_tapName when the table was loaded
    bool m_down = false;
    QTimer m_restartTimer;
    int m_restartAttempt = 0;
    int m_restartDelayMs = kFirstRestartDelayMs;
    QString m_deathReason;
    CredentialSource m_credentialSource;
    qint64 m_gatewayStartedAtMs = 0;
    WorkerJobs m_jobs; ///< the table load of up(); last, so it is waited for first
};

} // namespace airlock
