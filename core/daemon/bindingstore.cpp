#include "core/daemon/bindingstore.h"

#include "core/daemon/registry.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcBindings, "airlock.daemon.bindings")

const QString kColumns = QStringLiteral(
    "id, sandbox, secret, host, path_prefix, methods, placement, created_at, injections, "
    "last_used, denied");

// A null QString binds as SQL NULL; the text columns hold '' for "none".
QString text(const QString &value)
{
    return value.isNull() ? QStringLiteral("") : value;
}

std::unexpected<Error> sqlError(const QString &what, const QSqlQuery &query)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("bindings: %1: %2").arg(what, query.lastError().text()));
}

CredentialBinding bindingFrom(const QSqlQuery &query)
{
    CredentialBinding binding;
    binding.id = query.value(0).toLongLong();
    binding.sandbox = query.value(1).toString();
    binding.secret = query.value(2).toString();
    binding.host = query.value(3).toString();
    binding.pathPrefix = query.value(4).toString();
    const QString methods = query.value(5).toString();
    if (!methods.isEmpty())
        binding.methods = methods.split(QLatin1Char(' '));
    // Written by add() from a validated placement; a row edited by hand (or stored before a
    // rule got stricter) falls back to the default placement rather than failing every list.
    if (auto placement = CredentialPlacement::fromJson(
            QJsonDocument::fromJson(query.value(6).toString().toUtf8()).object()))
        binding.placement = *placement;
    else
        qCWarning(lcBindings, "binding %lld: stored placement refused (%s); using the default",
                  binding.id, qPrintable(placement.error().message));
    binding.createdAt = QDateTime::fromString(query.value(7).toString(), Qt::ISODateWithMs);
    binding.stats.injections = query.value(8).toULongLong();
    binding.stats.lastUsed = QDateTime::fromString(query.value(9).toString(), Qt::ISODateWithMs);
    binding.stats.denied = query.value(10).toULongLong();
    return binding;
}

Result<QList<CredentialBinding>> collect(QSqlQuery &query, const QString &what)
{
    if (!query.exec())
        return sqlError(what, query);
    QList<CredentialBinding> bindings;
    while (query.next())
        bindings.append(bindingFrom(query));
    return bindings;
}

} // namespace

BindingStore::BindingStore(const Registry &registry) : m_connection(registry.connectionName()) { }

Result<CredentialBinding> BindingStore::add(const CredentialBinding &binding)
{
    AIRLOCK_TRY(binding.validate());
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    const QString methods = text(binding.methods.join(QLatin1Char(' ')));
    QSqlQuery duplicate(db);
    duplicate.prepare(QStringLiteral(
        "SELECT id FROM credential_bindings WHERE sandbox = :sandbox AND secret = :secret AND "
        "host = :host AND path_prefix = :path_prefix AND methods = :methods"));
    duplicate.bindValue(QStringLiteral(":sandbox"), binding.sandbox);
    duplicate.bindValue(QStringLiteral(":secret"), binding.secret);
    duplicate.bindValue(QStringLiteral(":host"), binding.host);
    duplicate.bindValue(QStringLiteral(":path_prefix"), text(binding.pathPrefix));
    duplicate.bindValue(QStringLiteral(":methods"), methods);
    if (!duplicate.exec())
        return sqlError(QStringLiteral("check duplicate"), duplicate);
    if (duplicate.next())
        return fail(ErrorKind::AlreadyExists,
                    QStringLiteral("sandbox '%1' already binds secret '%2' to %3 (binding %4)")
                        .arg(binding.sandbox, binding.secret, binding.host)
                        .arg(duplicate.value(0).toLongLong()));

    CredentialBinding stored = binding;
    stored.createdAt = QDateTime::currentDateTimeUtc();
    stored.stats = {};
    QSqlQuery insert(db);
    insert.prepare(QStringLiteral(
        "INSERT INTO credential_bindings (sandbox, secret, host, path_prefix, methods, placement, "
        "created_at) VALUES (:sandbox, :secret, :host, :path_prefix, :methods, :placement, "
        ":created_at)"));
    insert.bindValue(QStringLiteral(":sandbox"), stored.sandbox);
    insert.bindValue(QStringLiteral(":secret"), stored.secret);
    insert.bindValue(QStringLiteral(":host"), stored.host);
    insert.bindValue(QStringLiteral(":path_prefix"), text(stored.pathPrefix));
    insert.bindValue(QStringLiteral(":methods"), methods);
    insert.bindValue(
        QStringLiteral(":placement"),
        QString::fromUtf8(QJsonDocument(stored.placement.toJson()).toJson(QJsonDocument::Compact)));
    insert.bindValue(QStringLiteral(":created_at"), stored.createdAt.toString(Qt::ISODateWithMs));
    if (!insert.exec())
        return sqlError(QStringLiteral("add"), insert);
    stored.id = insert.lastInsertId().toLongLong();
    return stored;
}

Result<QList<CredentialBinding>> BindingStore::list(const QString &sandbox) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    if (sandbox.isEmpty()) {
        query.prepare(
            QStringLiteral("SELECT %1 FROM credential_bindings ORDER BY id").arg(kColumns));
    } else {
        query.prepare(QStringLiteral("SELECT %1 FROM credential_bindings WHERE sandbox = :sandbox "
                                     "ORDER BY id")
                          .arg(kColumns));
        query.bindValue(QStringLiteral(":sandbox"), sandbox);
    }
    return collect(query, QStringLiteral("list"));
}

Result<QList<CredentialBinding>> BindingStore::usingSecret(const QString &secret) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(
        QStringLiteral("SELECT %1 FROM credential_bindings WHERE secret = :secret ORDER BY id")
            .arg(kColumns));
    query.bindValue(QStringLiteral(":secret"), secret);
    return collect(query, QStringLiteral("list by secret"));
}

Result<CredentialBinding> BindingStore::get(qint64 id) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(
        QStringLiteral("SELECT %1 FROM credential_bindings WHERE id = :id").arg(kColumns));
    query.bindValue(QStringLiteral(":id"), id);
    auto found = collect(query, QStringLiteral("find"));
    AIRLOCK_TRY(found);
    if (found->isEmpty())
        return fail(ErrorKind::NotFound, QStringLiteral("no binding with id %1").arg(id));
    return found->first();
}

Result<CredentialBinding> BindingStore::remove(qint64 id)
{
    auto found = get(id);
    AIRLOCK_TRY(found);
    QSqlQuery remove(QSqlDatabase::database(m_connection));
    remove.prepare(QStringLiteral("DELETE FROM credential_bindings WHERE id = :id"));
    remove.bindValue(QStringLiteral(":id"), id);
    if (!remove.exec())
        return sqlError(QStringLiteral("remove"), remove);
    return *found;
}

Result<QString> BindingStore::placeholder(const QString &sandbox, const QString &secret)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT placeholder FROM credential_placeholders WHERE "
                                 "sandbox = :sandbox AND secret = :secret"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    query.bindValue(QStringLiteral(":secret"), secret);
    if (!query.exec())
        return sqlError(QStringLiteral("placeholder"), query);
    if (query.next())
        return query.value(0).toString();
    const QString fresh = newPlaceholder();
    QSqlQuery insert(db);
    insert.prepare(QStringLiteral("INSERT INTO credential_placeholders (sandbox, secret, "
                                  "placeholder) VALUES (:sandbox, :secret, :placeholder)"));
    insert.bindValue(QStringLiteral(":sandbox"), sandbox);
    insert.bindValue(QStringLiteral(":secret"), secret);
    insert.bindValue(QStringLiteral(":placeholder"), fresh);
    if (!insert.exec())
        return sqlError(QStringLiteral("new placeholder"), insert);
    return fresh;
}

Result<QHash<QString, QString>> BindingStore::placeholders(const QString &sandbox) const
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral(
        "SELECT secret, placeholder FROM credential_placeholders WHERE sandbox = :sandbox"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    if (!query.exec())
        return sqlError(QStringLiteral("placeholders"), query);
    QHash<QString, QString> placeholders;
    while (query.next())
        placeholders.insert(query.value(0).toString(), query.value(1).toString());
    return placeholders;
}

Result<void> BindingStore::prunePlaceholders(const QString &sandbox)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral(
        "DELETE FROM credential_placeholders WHERE sandbox = :sandbox AND secret NOT IN "
        "(SELECT secret FROM credential_bindings WHERE sandbox = :sandbox2)"));
    query.bindValue(QStringLiteral(":sandbox"), sandbox);
    query.bindValue(QStringLiteral(":sandbox2"), sandbox);
    if (!query.exec())
        return sqlError(QStringLiteral("prune placeholders"), query);
    return {};
}

Result<void> BindingStore::regeneratePlaceholders(const QString &sandbox)
{
    auto current = placeholders(sandbox);
    AIRLOCK_TRY(current);
    for (auto it = current->cbegin(); it != current->cend(); ++it) {
        QSqlQuery update(QSqlDatabase::database(m_connection));
        update.prepare(
            QStringLiteral("UPDATE credential_placeholders SET placeholder = "
                           ":placeholder WHERE sandbox = :sandbox AND secret = :secret"));
        update.bindValue(QStringLiteral(":placeholder"), newPlaceholder());
        update.bindValue(QStringLiteral(":sandbox"), sandbox);
        update.bindValue(QStringLiteral(":secret"), it.key());
        if (!update.exec())
            return sqlError(QStringLiteral("regenerate placeholder"), update);
    }
    return {};
}

Result<void> BindingStore::recordInjection(qint64 id, const QDateTime &when, qint64 count)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(QStringLiteral("UPDATE credential_bindings SET injections = injections + "
                                 ":count, last_used = :when WHERE id = :id"));
    query.bindValue(QStringLiteral(":count"), qMax<qint64>(1, count));
    query.bindValue(QStringLiteral(":when"), when.toUTC().toString(Qt::ISODateWithMs));
    query.bindValue(QStringLiteral(":id"), id);
    if (!query.exec())
        return sqlError(QStringLiteral("record injection"), query);
    if (query.numRowsAffected() != 1)
        return fail(ErrorKind::NotFound, QStringLiteral("no binding with id %1").arg(id));
    return {};
}

Result<void> BindingStore::recordDenied(qint64 id, qint64 count)
{
    QSqlQuery query(QSqlDatabase::database(m_connection));
    query.prepare(
        QStringLiteral("UPDATE credential_bindings SET denied = denied + :count WHERE id = :id"));
    query.bindValue(QStringLiteral(":count"), qMax<qint64>(1, count));
    query.bindValue(QStringLiteral(":id"), id);
    if (!query.exec())
        return sqlError(QStringLiteral("record denial"), query);
    if (query.numRowsAffected() != 1)
        return fail(ErrorKind::NotFound, QStringLiteral("no binding with id %1").arg(id));
    return {};
}

} // namespace airlock
