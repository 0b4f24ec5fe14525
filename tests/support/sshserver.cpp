#include "sshserver.h"

#include <QDir>
#include <QFile>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <csignal>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::test {

namespace {

qint64 parentOf(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray line = stat.readAll();
    // "pid (comm) state ppid ...": comm may hold spaces, so parse after the last ')'.
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 1 ? fields[1].toLongLong() : -1;
}

} // namespace

SshServer::SshServer() : SshServer(Options {}) { }

SshServer::SshServer(Options options)
    : m_options(options), m_dir(QDir::tempPath() + QStringLiteral("/airlock-sshd-XXXXXX"))
{
    // sshd reads authorized_keys as the logged-in user after privilege separation.
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
}

SshServer::~SshServer()
{
    kill();
    if (!m_user.isEmpty())
        run(QStringLiteral("/usr/sbin/userdel"), {m_user});
}

bool SshServer::run(const QString &program, const QStringList &arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit
        || process.exitCode() != 0) {
        m_lastError = QStringLiteral("%1 %2 failed: %3")
                          .arg(program, arguments.join(QLatin1Char(' ')),
                               QString::fromLocal8Bit(process.readAll()));
        return false;
    }
    return true;
}

QString SshServer::clientKeyPath() const
{
    return m_dir.filePath(QStringLiteral("id_ed25519"));
}

QString SshServer::clientKeyWithPassphrasePath() const
{
    return m_dir.filePath(QStringLiteral("id_passphrase"));
}

QString SshServer::knownHostsPath() const
{
    return m_dir.filePath(QStringLiteral("known_hosts"));
}

bool SshServer::regenerateHostKey()
{
    const QString hostKey = m_dir.filePath(QStringLiteral("ssh_host_ed25519_key"));
    QFile::remove(hostKey);
    QFile::remove(hostKey + QStringLiteral(".pub"));
    return run(QStringLiteral("ssh-keygen"),
               {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                QStringLiteral("-N"), QString(), QStringLiteral("-f"), hostKey});
}

QString SshServer::knownHostsLine() const
{
    QFile pub(m_dir.filePath(QStringLiteral("ssh_host_ed25519_key.pub")));
    if (!pub.open(QIODevice::ReadOnly))
        return {};
    const QList<QByteArray> parts = pub.readAll().trimmed().split(' ');
    return QStringLiteral("[127.0.0.1]:%1 %2 %3")
        .arg(m_port)
        .arg(QString::fromLatin1(parts.value(0)), QString::fromLatin1(parts.value(1)));
}

bool SshServer::writeConfig()
{
    QFile config(m_dir.filePath(QStringLiteral("sshd_config")));
    if (!config.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const QString yes = QStringLiteral("yes");
    const QString no = QStringLiteral("no");
    config.write(
        QStringLiteral("Port %1\n"
                       "ListenAddress 127.0.0.1\n"
                       "HostKey %2/ssh_host_ed25519_key\n"
                       "PidFile %2/sshd.pid\n"
                       "AuthorizedKeysFile %2/authorized_keys\n"
                       "StrictModes no\n"
                       "UsePAM no\n"
                       "PermitRootLogin prohibit-password\n"
                       "PubkeyAuthentication yes\n"
                       "PasswordAuthentication %3\n"
                       "KbdInteractiveAuthentication no\n"
                       "AllowStreamLocalForwarding %4\n"
                       // OpenSSH only permits direct-streamlocal when local TCP
                       // forwarding is allowed too (channel_permit_all).
                       "AllowTcpForwarding local\n"
                       "X11Forwarding no\n"
                       "PrintMotd no\n"
                       "MaxStartups 100\n"
                       "LogLevel %5\n")
            .arg(m_port)
            .arg(m_dir.path(), m_options.passwordAuthentication ? yes : no,
                 m_options.allowStreamLocalForwarding ? yes : no,
                 // AIRLOCK_TEST_SSHD_LOGLEVEL=DEBUG3 shows sshd's side on stderr.
                 qEnvironmentVariable("AIRLOCK_TEST_SSHD_LOGLEVEL", QStringLiteral("ERROR")))
            .toUtf8());
    return true;
}

bool SshServer::start(int timeoutMs)
{
    if (!m_dir.isValid()) {
        m_lastError = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    if (isRunning())
        return true;
    const QString hostKey = m_dir.filePath(QStringLiteral("ssh_host_ed25519_key"));
    if (!QFile::exists(hostKey)) {
        const QString keygen = QStringLiteral("ssh-keygen");
        if (!regenerateHostKey()
            || !run(keygen,
                    {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                     QStringLiteral("-N"), QString(), QStringLiteral("-f"), clientKeyPath()})
            || !run(keygen,
                    {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                     QStringLiteral("-N"), clientKeyPassphrase(), QStringLiteral("-f"),
                     clientKeyWithPassphrasePath()}))
            return false;
        QFile keys(m_dir.filePath(QStringLiteral("authorized_keys")));
        if (!keys.open(QIODevice::WriteOnly))
            return false;
        for (const QString &pub : {clientKeyPath(), clientKeyWithPassphrasePath()}) {
            QFile file(pub + QStringLiteral(".pub"));
            if (!file.open(QIODevice::ReadOnly))
                return false;
            keys.write(file.readAll());
        }
        keys.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup
                            | QFile::ReadOther);
    }
    // sshd insists on its privilege separation directory (the Debian package's tmpfiles entry).
    QDir().mkpath(QStringLiteral("/run/sshd"));
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (m_port == 0 || (attempt > 0 && !m_everStarted)) {
            QTcpServer probe;
            if (!probe.listen(QHostAddress::LocalHost, 0)) {
                m_lastError = QStringLiteral("no free loopback port");
                return false;
            }
            m_port = probe.serverPort();
        }
        if (!writeConfig()) {
            m_lastError = QStringLiteral("cannot write sshd_config");
            return false;
        }
        m_process.start(QStringLiteral("/usr/sbin/sshd"),
                        {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"),
                         m_dir.filePath(QStringLiteral("sshd_config"))});
        if (!m_process.waitForStarted(5000)) {
            m_lastError = QStringLiteral("cannot start sshd: %1").arg(m_process.errorString());
            return false;
        }
        // Up when it sends its banner.
        const bool answered = QTest::qWaitFor(
            [&] {
                if (m_process.state() != QProcess::Running)
                    return true;
                QTcpSocket socket;
                socket.connectToHost(QHostAddress::LocalHost, m_port);
                return socket.waitForConnected(200) && socket.waitForReadyRead(1000)
                    && socket.readLine().startsWith("SSH-2.0-");
            },
            timeoutMs);
        if (answered && m_process.state() == QProcess::Running) {
            m_everStarted = true;
            return true;
        }
        if (m_process.state() == QProcess::Running) {
            m_lastError = QStringLiteral("sshd did not answer on port %1").arg(m_port);
            kill();
            return false;
        }
        // Most likely the port was taken in between: try another one (a restart after kill()
        // keeps its port because clients reconnect to it, so it only retries that one).
        m_lastError = QStringLiteral("sshd exited with status %1").arg(m_process.exitCode());
        if (m_everStarted)
            return false;
    }
    return false;
}

QList<qint64> SshServer::processTree() const
{
    QList<qint64> tree;
    if (m_process.state() != QProcess::Running)
        return tree;
    tree.append(m_process.processId());
    // Session processes are children (and grandchildren) of the listener.
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    bool grew = true;
    while (grew) {
        grew = false;
        for (const QString &entry : entries) {
            bool ok = false;
            const qint64 pid = entry.toLongLong(&ok);
            if (!ok || tree.contains(pid))
                continue;
            if (tree.contains(parentOf(pid))) {
                tree.append(pid);
                grew = true;
            }
        }
    }
    return tree;
}

void SshServer::kill()
{
    const QList<qint64> tree = processTree();
    for (qint64 pid : tree)
        ::kill(pid_t(pid), SIGKILL);
    m_process.waitForFinished(5000);
}

void SshServer::freeze(bool frozen)
{
    for (qint64 pid : processTree())
        ::kill(pid_t(pid), frozen ? SIGSTOP : SIGCONT);
}

bool SshServer::isRunning() const
{
    return m_process.state() == QProcess::Running;
}

QString SshServer::createPasswordUser(const QString &password)
{
    const QString name = QStringLiteral("airlock-ssh%1").arg(::getpid());
    if (!run(QStringLiteral("/usr/sbin/useradd"),
             {QStringLiteral("-M"), QStringLiteral("-d"), m_dir.path(), QStringLiteral("-s"),
              QStringLiteral("/bin/sh"), QStringLiteral("-G"), QStringLiteral("airlock"), name}))
        return {};
    m_user = name;
    QProcess chpasswd;
    chpasswd.start(QStringLiteral("/usr/sbin/chpasswd"), QStringList());
    chpasswd.waitForStarted();
    chpasswd.write((name + QLatin1Char(':') + password + QLatin1Char('\n')).toUtf8());
    chpasswd.closeWriteChannel();
    if (!chpasswd.waitForFinished(10000) || chpasswd.exitCode() != 0) {
        m_lastError = QStringLiteral("chpasswd failed");
        return {};
    }
    return name;
}

} // namespace airlock::test
