#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace airlock::test {

/// A real OpenSSH server for a test: Debian's /usr/sbin/sshd in the foreground (-D -e) on a
/// free 127.0.0.1 port, with its own host key, configuration and authorized_keys in a
/// temporary directory, PAM off. Root may log in with the generated client key
/// (clientKeyPath(); clientKeyWithPassphrase() is the same kind of key behind a passphrase).
///
///     SshServer sshd;
///     QVERIFY2(sshd.start(), qPrintable(sshd.lastError()));
///     endpoint.port = sshd.port(); endpoint.identityFile = sshd.clientKeyPath(); ...
///
/// Password logins use a throw-away account (createPasswordUser()) in the `airlock` group,
/// removed again by the destructor: root's password is unknown and must stay so. The
/// destructor stops sshd and every session process it forked.
class SshServer
{
public:
    struct Options
    {
        bool allowStreamLocalForwarding = true;
        bool passwordAuthentication = false;
    };

    SshServer();
    explicit SshServer(Options options);
    ~SshServer();
    SshServer(const SshServer &) = delete;
    SshServer &operator=(const SshServer &) = delete;

    /// Generates keys (first time), writes sshd_config, starts sshd and waits for its banner.
    /// Restarting after kill() reuses the port and the host key.
    bool start(int timeoutMs = 10000);
    /// SIGKILL to sshd and to every session process under it: the network side of a crash.
    void kill();
    /// SIGSTOP / SIGCONT to sshd and its sessions: a server that stops answering.
    void freeze(bool frozen);
    bool isRunning() const;

    quint16 port() const { return m_port; }
    /// A fresh host key: the next start() presents another key (a "changed" host key).
    bool regenerateHostKey();
    /// The `[127.0.0.1]:PORT key` line for a known_hosts file.
    QString knownHostsLine() const;
    QString clientKeyPath() const;
    QString clientKeyWithPassphrasePath() const;
    static QString clientKeyPassphrase() { return QStringLiteral("correct horse battery"); }
    /// known_hosts file in the temp dir (empty until the test writes it).
    QString knownHostsPath() const;
    QString tempPath() const { return m_dir.path(); }

    /// Creates a login user with `password` (group airlock for the helper). Empty on failure.
    QString createPasswordUser(const QString &password);
    QString lastError() const { return m_lastError; }

private:
    bool run(const QString &program, const QStringList &arguments);
    bool writeConfig();
    QList<qint64> processTree() const;

    Options m_options;
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port = 0;
    bool m_everStarted = false;
    QString m_user;
    QString m_lastError;
};

} // namespace airlock::test
