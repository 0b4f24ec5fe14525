#include "core/daemon/credentialapi.h"

#include "core/daemon/bindingstore.h"
#include "core/daemon/hostaccounts.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/secretowners.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <QJsonArray>
#include <QLoggingCategory>

#include <openssl/crypto.h>

namespace airlock {

namespace {

namespace method = protocol::method;

Q_LOGGING_CATEGORY(lcCredentials, "airlock.daemon.credentials")

const QString kName = QStringLiteral("name");

QJsonObject secretJson(const vault::SecretInfo &info, const QList<CredentialBinding> &bindings,
                       uid_t owner)
{
    quint64 uses = 0;
    QDateTime lastUsed;
    QJsonArray ids;
    for (const CredentialBinding &binding : bindings) {
        if (binding.secret != info.name)
            continue;
        uses += binding.stats.injections;
        if (binding.stats.lastUsed.isValid()
            && (!lastUsed.isValid() || binding.stats.lastUsed > lastUsed))
            lastUsed = binding.stats.lastUsed;
        ids.append(binding.id);
    }
    QJsonObject object {
        {kName, info.name},
        {QStringLiteral("fingerprint"), info.fingerprint},
        {QStringLiteral("useCount"), qint64(uses)},
        {QStringLiteral("lastUsed"),
         lastUsed.isValid() ? QJsonValue(lastUsed.toString(Qt::ISODateWithMs)) : QJsonValue()},
        {QStringLiteral("bindings"), ids},
        {QStringLiteral("ownerUid"), qint64(owner)},
    };
    if (const QString user = HostAccounts::userName(owner); !user.isEmpty())
        object.insert(QStringLiteral("owner"), user);
    if (info.created.isValid())
        object.insert(QStringLiteral("created"), info.created.toString(Qt::ISODateWithMs));
    if (info.updated.isValid())
        object.insert(QStringLiteral("updated"), info.updated.toString(Qt::ISODateWithMs));
    if (!info.problem.isEmpty())
        object.insert(QStringLiteral("problem"), info.problem);
    return object;
}

} // namespace

CredentialApi::CredentialApi(RpcServer &server, Result<vault::SecretVault> vault,
                             BindingStore &bindings, SandboxService &sandboxes,
                             SecretOwners &owners, CredentialAudit &audit, QObject *parent)
    : QObject(parent)
    , m_bindings(bindings)
    , m_sandboxes(sandboxes)
    , m_owners(owners)
    , m_audit(audit)
{
    if (vault)
        m_vault.emplace(std::move(*vault));
    else
        m_vaultError = vault.error();
    auto add = [&server](const char *name, RpcServer::Handler handler) {
        server.addMethod(QString::fromLatin1(name), std::move(handler));
    };
    // The caller is the kernel's peer uid of the connection (SO_PEERCRED), never a field.
    add(method::SecretSet,
        [this](const RpcContext &c, const QJsonObject &p) { return secretSet(c.peer.uid, p); });
    add(method::SecretList,
        [this](const RpcContext &, const QJsonObject &) { return secretList(); });
    add(method::SecretDelete,
        [this](const RpcContext &c, const QJsonObject &p) { return secretDelete(c.peer.uid, p); });
    add(method::BindingAdd,
        [this](const RpcContext &c, const QJsonObject &p) { return bindingAdd(c.peer.uid, p); });
    add(method::BindingList,
        [this](const RpcContext &, const QJsonObject &p) { return bindingList(p); });
    add(method::BindingRemove,
        [this](const RpcContext &c, const QJsonObject &p) { return bindingRemove(c.peer.uid, p); });
}

Result<vault::SecretVault *> CredentialApi::requireVault()
{
    if (!m_vault)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("the vault is unavailable: %1").arg(m_vaultError.message));
    return &*m_vault;
}

Result<void> CredentialApi::permit(CredentialAudit::Entry attempt, const QString &action)
{
    auto allowed = m_owners.check(attempt.uid, attempt.secret, action);
    if (!allowed && allowed.error().kind == ErrorKind::PermissionDenied) {
        attempt.outcome = errorKindName(ErrorKind::PermissionDenied);
        m_audit.record(attempt);
    }
    return allowed;
}

Result<QJsonValue> CredentialApi::secretSet(uid_t caller, const QJsonObject &params)
{
    auto vault = requireVault();
    AIRLOCK_TRY(vault);
    auto name = json::readString(params, kName);
    AIRLOCK_TRY(name);
    AIRLOCK_TRY(validateName(*name, u"secret name"));
    const QJsonValue value = params.value(QStringLiteral("value"));
    if (!value.isString())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'value' must be a string"));
    auto exists = (*vault)->contains(*name);
    AIRLOCK_TRY(exists);
    CredentialAudit::Entry entry {caller, QString::fromLatin1(method::SecretSet)};
    entry.secret = *name;
    entry.extra.insert(QStringLiteral("replaced"), *exists);
    if (*exists) {
        AIRLOCK_TRY(permit(entry, QStringLiteral("replace it")));
    } else if (auto owned = m_owners.setOwner(*name, caller); !owned) {
        // Before the value is stored: a secret must never exist without the owner it was
        // stored by (it would fall to root).
        return std::unexpected(owned.error());
    }
    QByteArray bytes = value.toString().toUtf8();
    const SecretValue secret(bytes);
    OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    auto info = (*vault)->set(*name, secret);
    if (!info) {
        if (!*exists)
            m_owners.forget(*name);
        return std::unexpected(info.error());
    }
    m_audit.record(entry);
    auto bindings = m_bindings.usingSecret(*name);
    auto owner = m_owners.ownerOf(*name);
    Q_EMIT secretChanged(*name);
    return secretJson(*info, bindings ? *bindings : QList<CredentialBinding>(),
                      owner.value_or(caller));
}

Result<QJsonValue> CredentialApi::secretList()
{
    auto vault = requireVault();
    AIRLOCK_TRY(vault);
    auto secrets = (*vault)->list();
    AIRLOCK_TRY(secrets);
    auto bindings = m_bindings.list();
    AIRLOCK_TRY(bindings);
    auto owners = m_owners.all();
    AIRLOCK_TRY(owners);
    QJsonArray array;
    for (const vault::SecretInfo &info : *secrets)
        array.append(secretJson(info, *bindings, owners->value(info.name, 0)));
    return QJsonObject {{QStringLiteral("secrets"), array}};
}

Result<QJsonValue> CredentialApi::secretDelete(uid_t caller, const QJsonObject &params)
{
    auto vault = requireVault();
    AIRLOCK_TRY(vault);
    auto name = json::readString(params, kName);
    AIRLOCK_TRY(name);
    // Known first, so nobody is told that a missing secret belongs to root.
    auto exists = (*vault)->contains(*name);
    AIRLOCK_TRY(exists);
    if (!*exists)
        return fail(ErrorKind::NotFound, QStringLiteral("no secret named %1").arg(*name));
    CredentialAudit::Entry entry {caller, QString::fromLatin1(method::SecretDelete)};
    entry.secret = *name;
    AIRLOCK_TRY(permit(entry, QStringLiteral("delete it")));
    auto bindings = m_bindings.usingSecret(*name);
    AIRLOCK_TRY(bindings);
    if (!bindings->isEmpty()) {
        QStringList uses;
        for (const CredentialBinding &binding : *bindings)
            uses.append(QStringLiteral("%1 (sandbox %2, %3)")
                            .arg(binding.id)
                            .arg(binding.sandbox, binding.host));
        return fail(ErrorKind::Busy,
                    QStringLiteral("secret '%1' is used by binding(s) %2; remove "
                                   "them first")
                        .arg(*name, uses.join(QStringLiteral(", "))));
    }
    AIRLOCK_TRY((*vault)->remove(*name));
    if (auto forgotten = m_owners.forget(*name); !forgotten)
        qCWarning(lcCredentials, "%s", qPrintable(forgotten.error().message));
    m_audit.record(entry);
    Q_EMIT secretChanged(*name);
    Q_EMIT secretDeleted(*name);
    return QJsonObject();
}

Result<QJsonValue> CredentialApi::bindingAdd(uid_t caller, const QJsonObject &params)
{
    auto vault = requireVault();
    AIRLOCK_TRY(vault);
    auto binding = CredentialBinding::fromJson(params);
    AIRLOCK_TRY(binding);
    // The helper's own guests exist only in memory: nobody's to bind (and the registry's
    // foreign key would refuse them with an SQL error; docs/reviews/2026-12-01-newuser-pass.md#l5).
    if (binding->sandbox.startsWith(SandboxService::kInternalPrefix))
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no sandbox named '%1'").arg(binding->sandbox));
    AIRLOCK_TRY(m_sandboxes.get(binding->sandbox));
    AIRLOCK_TRY((*vault)->info(binding->secret));
    CredentialAudit::Entry entry {caller, QString::fromLatin1(method::BindingAdd)};
    entry.secret = binding->secret;
    entry.sandbox = binding->sandbox;
    entry.host = binding->host;
    // Binding is how a value is used: whoever may bind a secret to a host of their choosing
    // can read it back there (docs/architecture.md boundary 4).
    AIRLOCK_TRY(permit(entry, QStringLiteral("bind it")));
    auto stored = m_bindings.add(*binding);
    AIRLOCK_TRY(stored);
    AIRLOCK_TRY(m_bindings.placeholder(stored->sandbox, stored->secret));
    entry.binding = stored->id;
    m_audit.record(entry);
    Q_EMIT bindingsChanged(stored->sandbox);
    return stored->toJson();
}

Result<QJsonValue> CredentialApi::bindingList(const QJsonObject &params)
{
    auto sandbox = json::readString(params, QStringLiteral("sandbox"), QString());
    AIRLOCK_TRY(sandbox);
    if (!sandbox->isEmpty()) {
        AIRLOCK_TRY(m_sandboxes.get(*sandbox));
    }
    auto bindings = m_bindings.list(*sandbox);
    AIRLOCK_TRY(bindings);
    QJsonArray array;
    for (const CredentialBinding &binding : *bindings)
        array.append(binding.toJson());
    return QJsonObject {{QStringLiteral("bindings"), array}};
}

Result<QJsonValue> CredentialApi::bindingRemove(uid_t caller, const QJsonObject &params)
{
    auto id =
        json::readInteger(params, QStringLiteral("id"), 1, std::numeric_limits<qint64>::max());
    AIRLOCK_TRY(id);
    auto found = m_bindings.get(*id);
    AIRLOCK_TRY(found);
    CredentialAudit::Entry entry {caller, QString::fromLatin1(method::BindingRemove)};
    entry.secret = found->secret;
    entry.sandbox = found->sandbox;
    entry.host = found->host;
    entry.binding = found->id;
    AIRLOCK_TRY(permit(entry, QStringLiteral("remove its bindings")));
    auto removed = m_bindings.remove(*id);
    AIRLOCK_TRY(removed);
    AIRLOCK_TRY(m_bindings.prunePlaceholders(removed->sandbox));
    m_audit.record(entry);
    Q_EMIT bindingsChanged(removed->sandbox);
    return removed->toJson();
}

} // namespace airlock
