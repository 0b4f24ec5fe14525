#include "core/daemon/hostaccounts.h"

#include <QLoggingCategory>
#include <QProcess>

#include <grp.h>
#include <pwd.h>

#include <optional>
#include <vector>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcAccounts, "airlock.daemon.accounts")

std::optional<gid_t> lookupGroup(const QString &name)
{
    std::vector<char> buffer(16384);
    group entry {};
    group *found = nullptr;
    if (getgrnam_r(name.toLocal8Bit().constData(), &entry, buffer.data(), buffer.size(), &found)
            != 0
        || !found)
        return std::nullopt;
    return found->gr_gid;
}

std::optional<SystemAccount> lookupUser(const QString &name)
{
    std::vector<char> buffer(16384);
    passwd entry {};
    passwd *found = nullptr;
    if (getpwnam_r(name.toLocal8Bit().constData(), &entry, buffer.data(), buffer.size(), &found)
            != 0
        || !found)
        return std::nullopt;
    return SystemAccount {found->pw_uid, found->pw_gid};
}

/// Runs an account tool; its failure is only reported by the caller when the account is still
/// missing afterwards (a concurrent helper may have created it first).
QString run(const QString &program, const QStringList &arguments)
{
    // Blocking on purpose: only HelperDaemon::start() runs this, before the helper serves.
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(30000))
        return QStringLiteral("%1 did not finish: %2").arg(program, process.errorString());
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
        return QStringLiteral("%1 %2 failed: %3")
            .arg(program, arguments.join(u' '),
                 QString::fromLocal8Bit(process.readAll()).trimmed());
    return {};
}

} // namespace

Result<gid_t> HostAccounts::ensureGroup(const QString &name)
{
    if (auto gid = lookupGroup(name))
        return *gid;
    qCInfo(lcAccounts, "creating system group %s", qPrintable(name));
    const QString error = run(QStringLiteral("groupadd"), {QStringLiteral("--system"), name});
    if (auto gid = lookupGroup(name))
        return *gid;
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("cannot create group %1: %2").arg(name, error));
}

Result<SystemAccount> HostAccounts::ensureSystemUser(const QString &name)
{
    if (auto account = lookupUser(name))
        return *account;
    qCInfo(lcAccounts, "creating system user %s", qPrintable(name));
    const QString error = run(QStringLiteral("useradd"),
                              {QStringLiteral("--system"), QStringLiteral("--no-create-home"),
                               QStringLiteral("--user-group"), QStringLiteral("--shell"),
                               QStringLiteral("/usr/sbin/nologin"), name});
    if (auto account = lookupUser(name))
        return *account;
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("cannot create user %1: %2").arg(name, error));
}

QString HostAccounts::userName(uid_t uid)
{
    std::vector<char> buffer(16384);
    passwd entry {};
    passwd *found = nullptr;
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
        return {};
    return QString::fromLocal8Bit(found->pw_name);
}

} // namespace airlock
