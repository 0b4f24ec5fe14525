#pragma once

#include "core/client/transport.h"
#include "core/ssh/sshendpoint.h"

#include <memory>

namespace airlock {

class SshKeyCache;
class SshPrompter;

/// Transport to a remote airlockd through an SSH channel (libssh): the same JSON-RPC as over
/// the local socket, so HelperClient does not know which it has.
///
/// Threading: libssh is blocking, so every connection runs on its own worker thread, from
/// the TCP connect through host key check and authentication to the channel pump (an
/// ssh_event polling the session's socket and an eventfd that wakes it for outgoing bytes).
/// Results come back to this object's thread as queued calls; questions for the user (host
/// key, passphrase, password) are asked on this object's thread through the SshPrompter while
/// the worker waits. close() never waits for the worker: it detaches it and ignores whatever
/// it still reports, so a hanging TCP connect cannot freeze the window.
///
/// Liveness: after `keepaliveIntervalMs` without traffic a keepalive@openssh.com request is
/// sent; when nothing arrives for `keepaliveCountMax` intervals the connection is declared
/// lost. A closed TCP connection (sshd killed) is noticed at once. Reconnection with backoff is
/// HelperClient's job (setAutoReconnect): each open() is a fresh SSH connection; a decrypted
/// identity key is kept for them, passwords are not.
class SshTransport final : public Transport
{
    Q_OBJECT
public:
    /// The connection states a user sees (ui/ turns them into words).
    enum class State {
        Disconnected,
        Connecting, ///< TCP, key exchange, host key check, authentication, channel
        Connected,
        AuthenticationFailed,
        HostKeyChanged, ///< refused: known_hosts holds another key for this host
        HostKeyRejected, ///< unknown key not accepted (or nobody to ask)
    };
    Q_ENUM(State)

    /// `prompter` (not owned, may be nullptr: unknown keys are then refused and no secret is
    /// asked) must outlive the transport.
    explicit SshTransport(SshEndpoint endpoint, SshPrompter *prompter = nullptr,
                          QObject *parent = nullptr);
    ~SshTransport() override;

    void open() override;
    void close() override;
    void write(const QByteArray &bytes) override;
    bool isOpen() const override;
    /// "helper on alice@build:2222".
    QString description() const override;

    const SshEndpoint &endpoint() const { return m_endpoint; }
    State state() const { return m_state; }
    /// The reason of the last failure or disconnection (English), empty after success.
    QString lastError() const { return m_lastError; }
    /// True when the current (or last) connection runs `airlockctl bridge` on the remote side
    /// because the server refused a direct-streamlocal channel.
    bool usesBridge() const { return m_usesBridge; }
    /// Keepalive period and how many silent periods make the connection lost (default 15 s, 3).
    void setKeepalive(int intervalMs, int countMax);
    /// Keepalive requests sent on the current connection (each after an interval without
    /// traffic from the server), 0 without one.
    int keepalivesSent() const;
    /// TCP connect and SSH handshake timeout (default 15 s).
    void setConnectTimeout(int timeoutMs) { m_connectTimeoutMs = timeoutMs; }
    void setPrompter(SshPrompter *prompter) { m_prompter = prompter; }

    /// Waits up to `timeoutMs` until every worker thread of every SshTransport has ended
    /// (closed its channel and session). Call before the process exits: a worker still inside
    /// libssh while static destructors and atexit handlers run would crash the exit. True when
    /// none is left.
    static bool waitForWorkers(int timeoutMs);

Q_SIGNALS:
    void stateChanged(airlock::SshTransport::State state);

private:
    class Run;
    friend class Run;

    void setState(State state);
    void onRunConnected(Run *run, bool bridge);
    void onRunBytes(Run *run, const QByteArray &bytes);
    void onRunFailed(Run *run, State state, const QString &reason);

    SshEndpoint m_endpoint;
    SshPrompter *m_prompter;
    std::shared_ptr<SshKeyCache> m_keys;
    std::shared_ptr<Run> m_run;
    State m_state = State::Disconnected;
    QString m_lastError;
    bool m_usesBridge = false;
    int m_keepaliveIntervalMs = 15000;
    int m_keepaliveCountMax = 3;
    int m_connectTimeoutMs = 15000;
};

} // namespace airlock
