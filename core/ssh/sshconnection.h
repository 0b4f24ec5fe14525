#pragma once

#include "core/ssh/sshendpoint.h"
#include "core/ssh/sshprompter.h"

#include <QString>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>

struct ssh_session_struct;
struct ssh_channel_struct;
struct ssh_key_struct;

namespace airlock {

/// A private key loaded (and decrypted) once, kept for reconnections so the passphrase is
/// asked once per key and application run, not once per connection. Owned by SshTransport and
/// shared with its connection threads; one connection uses it at a time.
class SshKeyCache
{
public:
    SshKeyCache() = default;
    ~SshKeyCache();
    SshKeyCache(const SshKeyCache &) = delete;
    SshKeyCache &operator=(const SshKeyCache &) = delete;

    /// The cached key for `path`, or nullptr.
    ssh_key_struct *get(const QString &path);
    /// Takes ownership of `key`.
    void put(const QString &path, ssh_key_struct *key);

private:
    std::mutex m_mutex;
    QString m_path;
    ssh_key_struct *m_key = nullptr;
};

/// One blocking libssh session to a remote airlockd, used on a worker thread: TCP connect and
/// key exchange, host key check against known_hosts, user authentication, and the channel to
/// the helper socket (direct-streamlocal, else `airlockctl bridge` in an exec channel). The
/// questions for the user go through the callbacks, which block until answered.
class SshConnection
{
public:
    /// Why establish() failed; SshTransport turns it into its state.
    enum class Failure {
        Network, ///< resolving, connecting, key exchange, or the server went away
        HostKeyChanged, ///< known_hosts has another key for this host: refused, no override
        HostKeyRejected, ///< unknown key and the user (or a non-interactive run) said no
        AuthenticationFailed, ///< every offered method failed or was cancelled
        Channel, ///< authenticated, but neither channel to the helper could be opened
    };
    struct Problem
    {
        Failure failure;
        QString message;
    };
    struct Callbacks
    {
        std::function<bool(const SshHostKeyQuestion &)> acceptHostKey;
        std::function<std::optional<QString>(const SshSecretQuestion &)> askSecret;
    };

    SshConnection(SshEndpoint endpoint, Callbacks callbacks, std::shared_ptr<SshKeyCache> keys);
    ~SshConnection();
    SshConnection(const SshConnection &) = delete;
    SshConnection &operator=(const SshConnection &) = delete;

    /// Connects, checks the host key, authenticates and opens the channel. std::nullopt on
    /// success; then session() and channel() are ready for non-blocking use.
    std::optional<Problem> establish(int connectTimeoutMs);

    ssh_session_struct *session() const { return m_session; }
    ssh_channel_struct *channel() const { return m_channel; }
    /// True when the channel runs `airlockctl bridge` instead of forwarding the socket.
    bool usesBridge() const { return m_bridge; }
    /// The SHA256 fingerprint of the server's host key once connected, e.g. "SHA256:abc...".
    QString hostKeyFingerprint() const { return m_fingerprint; }

private:
    std::optional<Problem> verifyHostKey();
    std::optional<Problem> authenticate();
    /// Public key authentication with `identityFile`; true on success.
    bool authenticateWithIdentityFile(QStringList &tried);
    bool authenticateKeyboardInteractive(QStringList &tried);
    bool authenticatePassword(QStringList &tried);
    std::optional<Problem> openChannel();
    QString sshError() const;
    std::optional<QString> ask(SshSecretQuestion question);

    SshEndpoint m_endpoint;
    Callbacks m_callbacks;
    std::shared_ptr<SshKeyCache> m_keys;
    ssh_session_struct *m_session = nullptr;
    ssh_channel_struct *m_channel = nullptr;
    bool m_bridge = false;
    QString m_fingerprint;
};

} // namespace airlock
