#include "testuser.h"

#include "rpctestclient.h"

#include <QDir>
#include <QProcess>
#include <QRegularExpression>

#include <cerrno>

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <vector>

namespace airlock::test {

namespace {

const QString kPrefix = QStringLiteral("alt-u");

QString runTool(const QString &program, const QStringList &arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit
        || process.exitCode() != 0)
        return QStringLiteral("%1 %2 failed: %3")
            .arg(program, arguments.join(QLatin1Char(' ')),
                 QString::fromLocal8Bit(process.readAll()).trimmed());
    return {};
}

/// Switches the effective ids of the whole process (glibc applies them to every thread) and
/// back, so one connect() is made as another user.
class EffectiveUser
{
public:
    EffectiveUser(uid_t uid, gid_t gid, const QList<gid_t> &groups)
    {
        m_savedGroups.resize(size_t(::getgroups(0, nullptr)));
        m_savedGroups.resize(size_t(::getgroups(int(m_savedGroups.size()), m_savedGroups.data())));
        const std::vector<gid_t> wanted(groups.begin(), groups.end());
        m_active = ::setgroups(wanted.size(), wanted.data()) == 0 && ::setegid(gid) == 0
            && ::seteuid(uid) == 0;
    }
    ~EffectiveUser()
    {
        // Order matters: back to root first, then the groups root may set.
        [[maybe_unused]] const int uid = ::seteuid(0);
        [[maybe_unused]] const int gid = ::setegid(0);
        [[maybe_unused]] const int groups = ::setgroups(m_savedGroups.size(), m_savedGroups.data());
    }
    bool isActive() const { return m_active; }

private:
    std::vector<gid_t> m_savedGroups;
    bool m_active = false;
};

} // namespace

TestUser::TestUser(const QString &group)
{
    deleteStaleUsers();
    static int counter = 0;
    const QString name = QStringLiteral("%1%2-%3").arg(kPrefix).arg(::getpid()).arg(++counter);
    if (const QString failed =
            runTool(QStringLiteral("/usr/sbin/useradd"),
                    {QStringLiteral("--system"), QStringLiteral("--no-create-home"),
                     QStringLiteral("--user-group"), QStringLiteral("--shell"),
                     QStringLiteral("/usr/sbin/nologin"), QStringLiteral("-G"), group, name});
        !failed.isEmpty()) {
        m_lastError = failed;
        return;
    }
    m_name = name;
    const passwd *entry = ::getpwnam(name.toLocal8Bit().constData());
    const struct group *member = ::getgrnam(group.toLocal8Bit().constData());
    if (!entry || !member) {
        m_lastError = QStringLiteral("useradd made %1, but it cannot be looked up").arg(name);
        return;
    }
    m_uid = entry->pw_uid;
    m_gid = entry->pw_gid;
    m_groups = {m_gid, member->gr_gid};
}

TestUser::~TestUser()
{
    if (!m_name.isEmpty())
        runTool(QStringLiteral("/usr/sbin/userdel"), {m_name});
}

std::unique_ptr<RpcTestClient> TestUser::connect(const QString &socketPath) const
{
    if (!isValid())
        return nullptr;
    EffectiveUser as(m_uid, m_gid, m_groups);
    if (!as.isActive())
        return nullptr;
    return std::make_unique<RpcTestClient>(socketPath);
}

void TestUser::runAs(QProcess &process) const
{
    const uid_t uid = m_uid;
    const gid_t gid = m_gid;
    const std::vector<gid_t> groups(m_groups.begin(), m_groups.end());
    process.setChildProcessModifier([uid, gid, groups] {
        // Only async-signal-safe calls between fork and exec.
        if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0
            || ::setuid(uid) != 0)
            ::_exit(127);
    });
}

void TestUser::deleteStaleUsers()
{
    static const QRegularExpression pattern(QStringLiteral("^alt-u(\\d+)-\\d+$"));
    QStringList stale;
    ::setpwent();
    while (const passwd *entry = ::getpwent()) {
        const auto match = pattern.match(QString::fromLocal8Bit(entry->pw_name));
        if (!match.hasMatch())
            continue;
        const pid_t pid = pid_t(match.captured(1).toLongLong());
        if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH)
            stale.append(match.captured(0));
    }
    ::endpwent();
    for (const QString &name : stale)
        runTool(QStringLiteral("/usr/sbin/userdel"), {name});
}

} // namespace airlock::test
