#include "core/daemon/secretowners.h"

#include "core/daemon/hostaccounts.h"
#include "core/daemon/registry.h"

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

namespace airlock {

namespace {

std::unexpected<Error> sqlError(const QString &what, const QSqlQuery &query)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("secret owners: %1: %2").arg(what, query.lastError().text()));
}

} // namespace

SecretOwners::SecretOwners(const Registry &registry) : m_connection(registry.connectionName()) { }

Result<uid_t> SecretOwners::ownerOf(const QString &name) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("SELECT uid FROM secret_owners WHERE name = :name"));
    query.bindValue(QStringLiteral(":name"), name);
    if (!query.exec())
        return sqlError(QStringLiteral("look up"), query);
    if (!query.next())
        return uid_t(0);
    return uid_t(query.value(0).toLongLong());
}

Result<QHash<QString, uid_t>> SecretOwners::all() const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    if (!query.exec(QStringLiteral("SELECT name, uid FROM secret_owners")))
        return sqlError(QStringLiteral("list"), query);
    QHash<QString, uid_t> owners;
    while (query.next())
        owners.insert(query.value(0).toString(), uid_t(query.value(1).toLongLong()));
    return owners;
}

Result<void> SecretOwners::setOwner(const QString &name, uid_t uid, const QDateTime &when)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("INSERT OR REPLACE INTO secret_owners (name, uid, since) "
                                 "VALUES (:name, :uid, :since)"));
    query.bindValue(QStringLiteral(":name"), name);
    query.bindValue(QStringLiteral(":uid"), qint64(uid));
    query.bindValue(QStringLiteral(":since"), when.toUTC().toString(Qt::ISODateWithMs));
    if (!query.exec())
        return sqlError(QStringLiteral("record"), query);
    return {};
}

Result<void> SecretOwners::forget(const QString &name)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("DELETE FROM secret_owners WHERE name = :name"));
    query.bindValue(QStringLiteral(":name"), name);
    if (!query.exec())
        return sqlError(QStringLiteral("forget"), query);
    return {};
}

Result<void> SecretOwners::check(uid_t caller, const QString &name, const QString &action) const
{
    if (caller == 0)
        return {};
    auto owner = ownerOf(name);
    AIRLOCK_TRY(owner);
    if (*owner == caller)
        return {};
    const QString user = HostAccounts::userName(*owner);
    const QString whose = user.isEmpty() ? QStringLiteral("uid %1").arg(*owner)
                                         : QStringLiteral("%1 (uid %2)").arg(user).arg(*owner);
    return fail(ErrorKind::PermissionDenied,
                QStringLiteral("secret '%1' belongs to %2: only its owner or root may %3")
                    .arg(name, whose, action));
}

QString SecretOwners::describe(uid_t uid)
{
    const QString name = HostAccounts::userName(uid);
    return name.isEmpty() ? QStringLiteral("uid %1").arg(uid) : name;
}

} // namespace airlock
