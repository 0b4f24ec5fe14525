#pragma once

#include "core/model/credentialbinding.h"
#include "core/model/egresspolicy.h"
#include "core/model/error.h"
#include "core/model/secretvalue.h"
#include "core/protocol/lineframer.h"
#include "core/vmm/vmmprocess.h"

#include <QByteArray>
#include <QHostAddress>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <vector>

class QSocketNotifier;

namespace airlock {

/// Everything one sandbox's airlock-gateway is started with (docs/gateway.md, "config").
struct GatewayConfig
{
    QString program; ///< absolute path of airlock-gateway
    QString sandbox; ///< validated sandbox name
    QHostAddress gateway; ///< host side of the link: the listeners bind here
    QHostAddress guest;
    int prefixLength = 30;
    quint16 tcpPort = 15001; ///< transparent TCP listener (nftables redirects all guest TCP)
    quint16 dnsPort = 15053; ///< DNS listener, UDP and TCP
    /// Guest connections to GW on this port are explicit-proxy mode (the table redirects them
    /// to the TCP listener; docs/gateway.md).
    quint16 explicitProxyPort = 3128;
    /// `upstreamDns` of the config message: {"address", "port", "timeoutMs"}.
    QJsonObject upstreamDns;
    QString syntheticPool; ///< "100.112.0.0/16": addresses of the gateway's DNS answers
    /// CA file the gateway verifies upstream servers against; empty: the system store.
    QString trustStoreCaFile;
    QByteArray caCertificatePem; ///< the sandbox CA (pki::SandboxCa::certificatePem)
    QByteArray caKeyPem; ///< its PKCS#8 key; goes only over the control socket
    EgressPolicy policy;
    VmmCredentials credentials; ///< unprivileged identity of the gateway process
    QString logPath; ///< the gateway's stderr (a fresh file)
    QString logLevel = QStringLiteral("info"); ///< its --log-level: info, debug or trace
    /// --max-data-bytes (RLIMIT_DATA): a normal gateway uses about 12 MiB of data and at most a
    /// few MiB more per busy connection (docs/gateway.md, "Resource bounds"); a guest that
    /// pushes it past this kills only its own gateway (which fails closed), not the host.
    quint64 maxDataBytes = 1024ull * 1024 * 1024;
    /// --max-log-bytes (RLIMIT_FSIZE): `logPath` stops growing here, even at trace level with
    /// a guest flooding decisions.
    quint64 maxLogBytes = 64ull * 1024 * 1024;
};

/// One binding as airlockd hands it to a gateway (docs/gateway.md, "credentials"): the rule,
/// the sandbox's placeholder for its secret, and the value (null when the vault could not
/// provide it: the gateway then refuses matching requests with `credential_unavailable`).
struct GatewayCredentialGrant
{
    CredentialBinding binding; ///< id, secret, host, pathPrefix, methods, placement
    QString placeholder;
    std::shared_ptr<const SecretValue> value;
};

/// One running airlock-gateway (docs/gateway.md): airlockd binds its listening sockets (as
/// root, on the link's gateway address), starts it through VmmProcess::spawn() as an
/// unprivileged user with PR_SET_NO_NEW_PRIVS and no capabilities, passing only the listeners
/// and one end of a socketpair (the control channel: one JSON object per line, both ways),
/// sends the config and waits (on the event loop) for "ready". Afterwards each "egress" message
/// becomes egress() and the process's end becomes exited(). The listeners live only in the gateway:
/// when it dies the kernel closes them, so redirected guest connections are refused (nothing fails
/// open). The gateway exits by itself when the control socket closes, so a crashed airlockd
/// never leaves gateways behind.
class GatewayProcess : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDefaultReadyTimeoutMs = 10000;
    /// How long setPolicy() waits for the gateway's "applied" answer before reporting Timeout.
    static constexpr int kPolicyAckTimeoutMs = 5000;
    /// Called once per setPolicy(): with success when the gateway answered "applied" for that
    /// policy's generation (every connection and DNS query from then on is checked against it,
    /// and open connections it no longer allows are closed), or when the gateway stopped first
    /// (no guest connection passes until a new gateway starts with the stored policy); with
    /// OperationFailed when the gateway refused it and Timeout after kPolicyAckTimeoutMs.
    using PolicyAck = std::function<void(const Result<void> &)>;
    /// Largest control line accepted from the gateway (docs/gateway.md: 4 MiB).
    static constexpr qsizetype kMaxLineBytes = 4 * 1024 * 1024;

    explicit GatewayProcess(QObject *parent = nullptr);
    /// Stops the gateway (stop()).
    ~GatewayProcess() override;

    /// Called once when start() is done: with success when the gateway reported "ready", else
    /// with BackendUnavailable (no gateway binary) or OperationFailed (bind, spawn, a "fatal"
    /// answer, exit or timeout; the message says which, with the gateway's last log line). On
    /// error no gateway process is left. Always called from the event loop, never from start().
    using Ready = std::function<void(const Result<void> &)>;
    /// Binds the listeners, spawns the gateway and sends the config, then returns: `ready` is
    /// called once the gateway reported ready or failed (at most `readyTimeoutMs` later), so a
    /// slow gateway never blocks the helper's event loop. Not called when this object is
    /// deleted first.
    void start(const GatewayConfig &config, int readyTimeoutMs, Ready ready);
    /// True between start() and its `ready` callback.
    bool isStarting() const { return bool(m_readyCallback); }
    /// Sends {"type":"policy","generation":N}: the gateway applies it to every request from
    /// then on, closes open connections it no longer allows and answers "applied" with N
    /// (docs/gateway.md). `applied` is called once, as PolicyAck says. Errors (then `applied` is
    /// not called): InvalidState when not running, OperationFailed when the write fails.
    Result<void> setPolicy(const EgressPolicy &policy, PolicyAck applied = {});
    /// Sends {"type":"forgetSecret"}: the gateway drops every value it still holds of `secret`
    /// (current or kept for scrubbing after a rotation or an unbinding) and wipes it.
    /// Errors: InvalidState when not running, OperationFailed when the write fails.
    Result<void> forgetSecret(const QString &secret);
    /// Sends {"type":"credentials"} with the values as its raw payload, written straight from
    /// their SecretValues (no other copy is made). Replaces the gateway's credentials whole.
    /// Errors: InvalidState when not running, OperationFailed when the write fails.
    Result<void> setCredentials(const QList<GatewayCredentialGrant> &credentials);
    /// Closes the control socket (the gateway exits on EOF) and returns at once; a
    /// ProcessReaper kills the process if it is still there after `graceMs`. exited() is not
    /// emitted for a requested stop. setReleased()'s callback tells when it is gone.
    void stop(int graceMs = 2000);
    /// `released` is called once this object's gateway process is gone for good (its
    /// listeners closed, so the link's ports are free again): after a stop, an exit or a
    /// failed start, or when this object is deleted without a process. It may run after this
    /// object is deleted (a stopped process is seen out by a ProcessReaper).
    void setReleased(std::function<void()> released) { m_released = std::move(released); }

    bool isRunning() const { return m_process != nullptr; }
    pid_t pid() const;

Q_SIGNALS:
    /// One egress decision: the "event" object of an "egress" message.
    void egress(const QJsonObject &event);
    /// The gateway exited (or closed its control socket) without being asked to. `reason`
    /// is an English sentence such as "airlock-gateway was killed by signal 9".
    void exited(const QString &reason);

private:
    /// The synchronous part of start(): listeners, process, config message.
    Result<void> launch(const GatewayConfig &config);
    /// Ends a pending start() with `result` (a failure stops the process first).
    void finishStart(Result<void> result);
    Result<void> sendLine(const QJsonObject &message);
    /// Writes `bytes` without blocking: what the socket does not take is queued (at most
    /// kMaxOutboxBytes) and written when the gateway reads. A gateway that leaves its queue
    /// unread for kOutboxStallMs, or lets it overflow, is killed (and restarted by its owner).
    Result<void> sendBytes(QByteArrayView bytes);
    void flushOutbox();
    /// Gives up on the gateway: closes the control socket and kills it (logged with `why`).
    void abandonControl(const QString &why);
    /// Reads what the socket has; returns false on EOF or a framing error.
    bool readAvailable();
    void handleMessage(const QJsonObject &message);
    void onReadable();
    void onProcessExited(bool statusKnown, int waitStatus);
    void closeControl();
    QString lastLogLine() const;
    /// Answers (and forgets) every waiter of a generation up to `generation` with `result`.
    void resolvePolicyWaiters(quint64 generation, const Result<void> &result);
    /// Answers the waiter of exactly `generation` (if it still waits) with `error`.
    void failPolicyWaiter(quint64 generation, const Error &error);

    GatewayConfig m_config;
    VmmProcess *m_process = nullptr;
    int m_control = -1;
    QSocketNotifier *m_notifier = nullptr;
    std::unique_ptr<protocol::LineFramer> m_framer;
    bool m_ready = false;
    Ready m_readyCallback; ///< set while start() waits for "ready"
    QTimer m_readyTimer;
    int m_readyTimeoutMs = kDefaultReadyTimeoutMs;
    QString m_fatal;
    bool m_stopping = false;
    std::function<void()> m_released;
    /// Control bytes the socket did not take yet (wiped once sent: credential values).
    std::vector<char> m_outbox;
    QSocketNotifier *m_writeNotifier = nullptr;
    QTimer m_outboxTimer; ///< a queue without progress for kOutboxStallMs: the gateway is stuck
    static constexpr size_t kMaxOutboxBytes = 64 * 1024 * 1024;
    static constexpr int kOutboxStallMs = 5000;
    struct PolicyWaiter
    {
        quint64 generation = 0;
        PolicyAck ack;
    };
    quint64 m_policyGeneration = 0; ///< of the last policy sent
    quint64 m_appliedGeneration = 0; ///< of the last policy the gateway confirmed
    QList<PolicyWaiter> m_policyWaiters; ///< oldest first
};

} // namespace airlock
