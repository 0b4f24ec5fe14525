#pragma once

#include <QString>

#include <optional>

namespace airlock {

/// What the user is asked when a server's host key is not in known_hosts.
struct SshHostKeyQuestion
{
    QString endpoint; ///< e.g. "alice@build:2222"
    QString keyType; ///< e.g. "ssh-ed25519"
    QString fingerprint; ///< "SHA256:..." as OpenSSH prints it
    QString knownHostsFile; ///< where an accepted key is written
};

/// A secret the SSH transport needs to go on.
struct SshSecretQuestion
{
    enum class Kind {
        Passphrase, ///< for the private key in `identityFile`
        Password, ///< "password" authentication
        KeyboardInteractive, ///< one prompt of a keyboard-interactive round
    };
    Kind kind = Kind::Password;
    QString endpoint;
    QString identityFile; ///< Passphrase only
    QString name; ///< KeyboardInteractive: the server's name and instruction for the round
    QString instruction;
    QString prompt; ///< KeyboardInteractive: the server's prompt, e.g. "Password: "
    bool echo = false; ///< KeyboardInteractive: the answer may be shown while typed
    bool retry = false; ///< the previous answer was wrong
};

/// Asks the user on behalf of SshTransport. Called on the thread that owns the transport (the
/// GUI thread, or the CLI's main thread) while the SSH session waits; may block (a modal
/// dialog, a terminal read). Implementations: ui/SshDialogPrompter, airlockctl's terminal.
class SshPrompter
{
public:
    virtual ~SshPrompter() = default;
    /// True when the user trusts this unknown host key; it is then written to known_hosts.
    virtual bool acceptUnknownHostKey(const SshHostKeyQuestion &question) = 0;
    /// The secret, or std::nullopt when the user cancels (authentication then fails).
    virtual std::optional<QString> askSecret(const SshSecretQuestion &question) = 0;
};

} // namespace airlock
