#include "core/ssh/sshconnection.h"

#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include <cstring>

Q_LOGGING_CATEGORY(lcSsh, "airlock.client.ssh")

namespace airlock {

namespace {

/// Overwrites a secret in place before it is released (QString shares no buffer here: every
/// secret comes from one prompt and is used once).
void wipe(QString &secret)
{
    secret.fill(QChar(0));
    secret.clear();
}

void wipe(QByteArray &secret)
{
    secret.fill('\0');
    secret.clear();
}

QString defaultKnownHosts()
{
    return QDir::homePath() + QStringLiteral("/.ssh/known_hosts");
}

QString methodNames(int methods)
{
    QStringList names;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY)
        names << QStringLiteral("publickey");
    if (methods & SSH_AUTH_METHOD_INTERACTIVE)
        names << QStringLiteral("keyboard-interactive");
    if (methods & SSH_AUTH_METHOD_PASSWORD)
        names << QStringLiteral("password");
    if (methods & SSH_AUTH_METHOD_GSSAPI_MIC)
        names << QStringLiteral("gssapi-with-mic");
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

/// libssh's passphrase callback for the default keys tried by ssh_userauth_publickey_auto.
int passphraseCallback(const char *prompt, char *buffer, size_t length, int, int, void *userdata)
{
    auto *ask = static_cast<std::function<std::optional<QString>(const QString &)> *>(userdata);
    std::optional<QString> answer = (*ask)(QString::fromUtf8(prompt));
    if (!answer)
        return -1;
    QByteArray bytes = answer->toUtf8();
    wipe(*answer);
    if (size_t(bytes.size()) + 1 > length) {
        wipe(bytes);
        return -1;
    }
    std::memcpy(buffer, bytes.constData(), size_t(bytes.size()) + 1);
    wipe(bytes);
    return 0;
}

constexpr int kPasswordAttempts = 3;

} // namespace

SshKeyCache::~SshKeyCache()
{
    if (m_key)
        ssh_key_free(m_key);
}

ssh_key_struct *SshKeyCache::get(const QString &path)
{
    const std::lock_guard lock(m_mutex);
    return path == m_path ? m_key : nullptr;
}

void SshKeyCache::put(const QString &path, ssh_key_struct *key)
{
    const std::lock_guard lock(m_mutex);
    if (m_key && m_key != key)
        ssh_key_free(m_key);
    m_path = path;
    m_key = key;
}

SshConnection::SshConnection(SshEndpoint endpoint, Callbacks callbacks,
                             std::shared_ptr<SshKeyCache> keys)
    : m_endpoint(std::move(endpoint)), m_callbacks(std::move(callbacks)), m_keys(std::move(keys))
{ }

SshConnection::~SshConnection()
{
    if (m_channel) {
        ssh_channel_free(m_channel);
        m_channel = nullptr;
    }
    if (m_session) {
        if (ssh_is_connected(m_session))
            ssh_disconnect(m_session);
        ssh_free(m_session);
    }
}

QString SshConnection::sshError() const
{
    return QString::fromUtf8(ssh_get_error(m_session));
}

std::optional<QString> SshConnection::ask(SshSecretQuestion question)
{
    question.endpoint = m_endpoint.displayName();
    if (!m_callbacks.askSecret)
        return std::nullopt;
    return m_callbacks.askSecret(question);
}

std::optional<SshConnection::Problem> SshConnection::establish(int connectTimeoutMs)
{
    m_session = ssh_new();
    if (!m_session)
        return Problem {Failure::Network, QStringLiteral("libssh could not create a session")};
    const QByteArray host = m_endpoint.host.toUtf8();
    const QByteArray user = m_endpoint.effectiveUser().toUtf8();
    const unsigned int port = m_endpoint.port;
    const QByteArray knownHosts = QFile::encodeName(
        m_endpoint.knownHostsFile.isEmpty() ? defaultKnownHosts() : m_endpoint.knownHostsFile);
    const long timeoutSeconds = std::max(1, connectTimeoutMs / 1000);
    const int noDelay = 1; // JSON-RPC lines are small; Nagle would add 40 ms per round trip
    const int processConfig = 0; // read explicitly below, so our options win
    ssh_options_set(m_session, SSH_OPTIONS_PROCESS_CONFIG, &processConfig);
    ssh_options_set(m_session, SSH_OPTIONS_HOST, host.constData());
    if (m_endpoint.configFile != QLatin1String("none")) {
        // The same home as known_hosts ($HOME), not libssh's passwd lookup.
        const QString path = m_endpoint.configFile.isEmpty()
            ? QDir::homePath() + QStringLiteral("/.ssh/config")
            : m_endpoint.configFile;
        if (QFileInfo::exists(path))
            ssh_options_parse_config(m_session, QFile::encodeName(path).constData());
    }
    ssh_options_set(m_session, SSH_OPTIONS_HOST, host.constData());
    ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    ssh_options_set(m_session, SSH_OPTIONS_USER, user.constData());
    ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, knownHosts.constData());
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT, &timeoutSeconds);
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &noDelay);

    if (ssh_connect(m_session) != SSH_OK)
        return Problem {
            Failure::Network,
            QStringLiteral("cannot connect to %1: %2").arg(m_endpoint.displayName(), sshError())};
    if (auto problem = verifyHostKey())
        return problem;
    if (auto problem = authenticate())
        return problem;
    return openChannel();
}

std::optional<SshConnection::Problem> SshConnection::verifyHostKey()
{
    ssh_key serverKey = nullptr;
    if (ssh_get_server_publickey(m_session, &serverKey) != SSH_OK)
        return Problem {
            Failure::Network,
            QStringLiteral("%1 sent no host key: %2").arg(m_endpoint.displayName(), sshError())};
    unsigned char *hash = nullptr;
    size_t hashLength = 0;
    const int hashed =
        ssh_get_publickey_hash(serverKey, SSH_PUBLICKEY_HASH_SHA256, &hash, &hashLength);
    const QString keyType = QString::fromLatin1(ssh_key_type_to_char(ssh_key_type(serverKey)));
    ssh_key_free(serverKey);
    if (hashed != SSH_OK)
        return Problem {Failure::Network, QStringLiteral("cannot hash the host key")};
    char *fingerprint = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hashLength);
    ssh_clean_pubkey_hash(&hash);
    m_fingerprint = QString::fromLatin1(fingerprint);
    ssh_string_free_char(fingerprint);

    const QString knownHosts =
        m_endpoint.knownHostsFile.isEmpty() ? defaultKnownHosts() : m_endpoint.knownHostsFile;
    // ssh-keygen names non-default ports as [host]:port.
    const QString entry = m_endpoint.port == 22
        ? m_endpoint.host
        : QStringLiteral("[%1]:%2").arg(m_endpoint.host).arg(m_endpoint.port);
    switch (ssh_session_is_known_server(m_session)) {
    case SSH_KNOWN_HOSTS_OK:
        return std::nullopt;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        // RFC 4251 section 4.1: a changed key is what a man-in-the-middle looks like. OpenSSH
        // refuses too; like it, we offer no override, only the command that removes the old
        // key once the user has checked the new one out of band.
        return Problem {
            Failure::HostKeyChanged,
            QStringLiteral("the host key of %1 has changed (it is now %2 %3): "
                           "someone may be intercepting the connection, or the host "
                           "was reinstalled. Refusing to connect. If you have "
                           "checked the new key, remove the old one with: "
                           "ssh-keygen -R '%4' -f '%5'")
                .arg(m_endpoint.displayName(), keyType, m_fingerprint, entry, knownHosts)};
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND: {
        const SshHostKeyQuestion question {m_endpoint.displayName(), keyType, m_fingerprint,
                                           knownHosts};
        if (!m_callbacks.acceptHostKey || !m_callbacks.acceptHostKey(question))
            return Problem {Failure::HostKeyRejected,
                            QStringLiteral("the host key of %1 (%2 %3) is not in %4 and was not "
                                           "accepted")
                                .arg(m_endpoint.displayName(), keyType, m_fingerprint, knownHosts)};
        QDir().mkpath(QFileInfo(knownHosts).absolutePath());
        if (ssh_session_update_known_hosts(m_session) != SSH_OK)
            return Problem {
                Failure::Network,
                QStringLiteral("cannot write the host key to %1: %2").arg(knownHosts, sshError())};
        qCInfo(lcSsh) << "added host key" << m_fingerprint << "of" << m_endpoint.displayName()
                      << "to" << knownHosts;
        return std::nullopt;
    }
    case SSH_KNOWN_HOSTS_ERROR:
        break;
    }
    return Problem {Failure::Network,
                    QStringLiteral("cannot check the host key of %1 against %2: %3")
                        .arg(m_endpoint.displayName(), knownHosts, sshError())};
}

std::optional<SshConnection::Problem> SshConnection::authenticate()
{
    int rc = ssh_userauth_none(m_session, nullptr);
    if (rc == SSH_AUTH_SUCCESS)
        return std::nullopt;
    if (rc == SSH_AUTH_ERROR)
        return Problem {Failure::Network,
                        QStringLiteral("authentication with %1 failed: %2")
                            .arg(m_endpoint.displayName(), sshError())};
    const int methods = ssh_userauth_list(m_session, nullptr);
    QStringList tried;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        if (!m_endpoint.identityFile.isEmpty()) {
            if (authenticateWithIdentityFile(tried))
                return std::nullopt;
        } else {
            // The agent first, then ~/.ssh/id_*; encrypted default keys ask for their passphrase
            // through the same prompt as an identity file.
            std::function<std::optional<QString>(const QString &)> askPassphrase =
                [this](const QString &prompt) {
                    SshSecretQuestion question;
                    question.kind = SshSecretQuestion::Kind::Passphrase;
                    question.prompt = prompt;
                    return ask(question);
                };
            ssh_callbacks_struct callbacks {};
            callbacks.userdata = &askPassphrase;
            callbacks.auth_function = passphraseCallback;
            ssh_callbacks_init(&callbacks);
            ssh_set_callbacks(m_session, &callbacks);
            rc = ssh_userauth_publickey_auto(m_session, nullptr, nullptr);
            ssh_callbacks_struct none {};
            ssh_callbacks_init(&none);
            ssh_set_callbacks(m_session, &none);
            tried << QStringLiteral("ssh-agent and default keys");
            if (rc == SSH_AUTH_SUCCESS)
                return std::nullopt;
        }
    }
    if ((methods & SSH_AUTH_METHOD_INTERACTIVE) && authenticateKeyboardInteractive(tried))
        return std::nullopt;
    if ((methods & SSH_AUTH_METHOD_PASSWORD) && authenticatePassword(tried))
        return std::nullopt;
    if (!ssh_is_connected(m_session))
        return Problem {Failure::Network,
                        QStringLiteral("%1 closed the connection during "
                                       "authentication: %2")
                            .arg(m_endpoint.displayName(), sshError())};
    return Problem {
        Failure::AuthenticationFailed,
        QStringLiteral("authentication failed for %1 (server accepts: %2; tried: %3)")
            .arg(m_endpoint.displayName(), methodNames(methods),
                 tried.isEmpty() ? QStringLiteral("nothing") : tried.join(QStringLiteral(", ")))};
}

bool SshConnection::authenticateWithIdentityFile(QStringList &tried)
{
    const QString path = m_endpoint.identityFile;
    tried << QStringLiteral("key %1").arg(path);
    ssh_key key = m_keys ? m_keys->get(path) : nullptr;
    const QByteArray file = QFile::encodeName(path);
    if (!key) {
        // Unencrypted keys load without asking; an encrypted one fails and we ask.
        if (ssh_pki_import_privkey_file(file.constData(), nullptr, nullptr, nullptr, &key)
            != SSH_OK) {
            key = nullptr;
            if (!QFileInfo(path).isReadable()) {
                tried.last() += QStringLiteral(" (cannot read the file)");
                return false;
            }
            for (int attempt = 0; attempt < kPasswordAttempts && !key; ++attempt) {
                SshSecretQuestion question;
                question.kind = SshSecretQuestion::Kind::Passphrase;
                question.identityFile = path;
                question.retry = attempt > 0;
                std::optional<QString> passphrase = ask(question);
                if (!passphrase)
                    return false;
                QByteArray bytes = passphrase->toUtf8();
                wipe(*passphrase);
                if (ssh_pki_import_privkey_file(file.constData(), bytes.constData(), nullptr,
                                                nullptr, &key)
                    != SSH_OK)
                    key = nullptr;
                wipe(bytes);
            }
            if (!key) {
                tried.last() += QStringLiteral(" (wrong passphrase)");
                return false;
            }
        }
        if (m_keys)
            m_keys->put(path, key);
    }
    const int rc = ssh_userauth_publickey(m_session, nullptr, key);
    if (!m_keys)
        ssh_key_free(key);
    return rc == SSH_AUTH_SUCCESS;
}

bool SshConnection::authenticateKeyboardInteractive(QStringList &tried)
{
    tried << QStringLiteral("keyboard-interactive");
    for (int attempt = 0; attempt < kPasswordAttempts; ++attempt) {
        int rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
        while (rc == SSH_AUTH_INFO) {
            const QString name = QString::fromUtf8(ssh_userauth_kbdint_getname(m_session));
            const QString instruction =
                QString::fromUtf8(ssh_userauth_kbdint_getinstruction(m_session));
            const int prompts = ssh_userauth_kbdint_getnprompts(m_session);
            for (int i = 0; i < prompts; ++i) {
                char echo = 0;
                SshSecretQuestion question;
                question.kind = SshSecretQuestion::Kind::KeyboardInteractive;
                question.name = name;
                question.instruction = instruction;
                question.prompt =
                    QString::fromUtf8(ssh_userauth_kbdint_getprompt(m_session, unsigned(i), &echo));
                question.echo = echo != 0;
                question.retry = attempt > 0;
                std::optional<QString> answer = ask(question);
                if (!answer)
                    return false;
                QByteArray bytes = answer->toUtf8();
                wipe(*answer);
                ssh_userauth_kbdint_setanswer(m_session, unsigned(i), bytes.constData());
                wipe(bytes);
            }
            rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
        }
        if (rc == SSH_AUTH_SUCCESS)
            return true;
        if (rc == SSH_AUTH_ERROR || !ssh_is_connected(m_session))
            return false;
    }
    return false;
}

bool SshConnection::authenticatePassword(QStringList &tried)
{
    tried << QStringLiteral("password");
    for (int attempt = 0; attempt < kPasswordAttempts; ++attempt) {
        SshSecretQuestion question;
        question.kind = SshSecretQuestion::Kind::Password;
        question.retry = attempt > 0;
        std::optional<QString> password = ask(question);
        if (!password)
            return false;
        QByteArray bytes = password->toUtf8();
        wipe(*password);
        const int rc = ssh_userauth_password(m_session, nullptr, bytes.constData());
        wipe(bytes);
        if (rc == SSH_AUTH_SUCCESS)
            return true;
        if (rc == SSH_AUTH_ERROR || !ssh_is_connected(m_session))
            return false;
    }
    return false;
}

std::optional<SshConnection::Problem> SshConnection::openChannel()
{
    const QByteArray socketPath = m_endpoint.socketPath.toUtf8();
    m_channel = ssh_channel_new(m_session);
    if (!m_channel)
        return Problem {Failure::Channel, QStringLiteral("libssh could not create a channel")};
    // direct-streamlocal@openssh.com (OpenSSH PROTOCOL, section 2.4): sshd connects to the
    // socket as the logged-in user, so the helper checks that user's credentials.
    if (ssh_channel_open_forward_unix(m_channel, socketPath.constData(), "127.0.0.1", 0)
        == SSH_OK) {
        m_bridge = false;
        return std::nullopt;
    }
    const QString forwardError = sshError();
    qCInfo(lcSsh) << "streamlocal channel to" << m_endpoint.socketPath << "refused:" << forwardError
                  << "- falling back to" << m_endpoint.bridgeCommand();
    ssh_channel_free(m_channel);
    m_channel = ssh_channel_new(m_session);
    const QByteArray command = m_endpoint.bridgeCommand().toUtf8();
    if (m_channel && ssh_channel_open_session(m_channel) == SSH_OK
        && ssh_channel_request_exec(m_channel, command.constData()) == SSH_OK) {
        m_bridge = true;
        return std::nullopt;
    }
    return Problem {Failure::Channel,
                    QStringLiteral("%1 refused a channel to the helper socket %2 (%3) and "
                                   "running '%4' (%5)")
                        .arg(m_endpoint.displayName(), m_endpoint.socketPath, forwardError,
                             m_endpoint.bridgeCommand(), sshError())};
}

} // namespace airlock
