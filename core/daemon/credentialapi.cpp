#include "core/daemon/credentialapi.h"

#include "core/daemon/bindingstore.h"
#include "core/daemon/sandboxservice.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <QJsonArray>

#include <openssl/crypto.h>

namespace airlock {

namespace {

namespace method = protocol::method;

const QString kName = QStringLiteral("name");

QJsonObject secretJson(const vault::SecretInfo &info, const QList<CredentialBinding> &bindings)
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
    };
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
                             BindingStore &bindings, SandboxService &sandboxes, QObject *parent)
    : QObject(parent), m_bindings(bindings), m_sandboxes(sandboxes)
{
    if (vault)
        m_vault.emplace(std::move(*vault));
    else
        m_vaultError = vault.error();
    auto add = [&server](const char *name, RpcServer::Handler handler) {
        server.addMethod(QString::fromLatin1(name), std::move(handler));
    };
    add(method::SecretSet,
        [this](const RpcContext &, const QJsonObject &p) { return secretSet(p); });
    add(method::SecretList,
        [this](const RpcContext &, const QJsonObject &) { return secretList(); });
    add(method::SecretDelete,
        [this](const RpcContext &, const QJsonObject &p) { return secretDelete(p); });
    add(method::BindingAdd,
        [this](const RpcContext &, const QJsonObject &p) { return bindingAdd(p); });
    add(method::BindingList,
        [this](const RpcContext &, const QJsonObject &p) { return bindingList(p); });
    add(method::BindingRemove,
        [this](const RpcContext &, const QJsonObject &p) { return bindingRemove(p); });
}

Result<vault::SecretVault *> CredentialApi::requireVault()
{
    if (!m_vault)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("the vault is unavailable: %1").arg(m_vaultError.message));
    return &*m_vault;
}

Result<QJsonValue> CredentialApi::secretSet(const QJsonObject &params)
{
    auto vault = requireVault();
    if (!vault)
        return std::unexpected(vault.error());
    auto name = json::readString(params, kName);
    if (!name)
        return std::unexpected(name.error());
    if (auto valid = validateName(*name, u"secret name"); !valid)
        return std::unexpected(valid.error());
    const QJsonValue value = params.value(QStringLiteral("value"));
    if (!value.isString())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'value' must be a string"));
    QByteArray bytes = value.toString().toUtf8();
    const vault::SecretValue secret(bytes);
    OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    auto info = (*vault)->set(*name, secret);
    if (!info)
        return std::unexpected(info.error());
    auto bindings = m_bindings.usingSecret(*name);
    Q_EMIT secretChanged(*name);
    return secretJson(*info, bindings ? *bindings : QList<CredentialBinding>());
}

Result<QJsonValue> CredentialApi::secretList()
{
    auto vault = requireVault();
    if (!vault)
        return std::unexpected(vault.error());
    auto secrets = (*vault)->list();
    if (!secrets)
        return std::unexpected(secrets.error());
    auto bindings = m_bindings.list();
    if (!bindings)
        return std::unexpected(bindings.error());
    QJsonArray array;
    for (const vault::SecretInfo &info : *secrets)
        array.append(secretJson(info, *bindings));
    return QJsonObject {{QStringLiteral("secrets"), array}};
}

Result<QJsonValue> CredentialApi::secretDelete(const QJsonObject &params)
{
    auto vault = requireVault();
    if (!vault)
        return std::unexpected(vault.error());
    auto name = json::readString(params, kName);
    if (!name)
        return std::unexpected(name.error());
    auto bindings = m_bindings.usingSecret(*name);
    if (!bindings)
        return std::unexpected(bindings.error());
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
    if (auto removed = (*vault)->remove(*name); !removed)
        return std::unexpected(removed.error());
    Q_EMIT secretChanged(*name);
    return QJsonObject();
}

Result<QJsonValue> CredentialApi::bindingAdd(const QJsonObject &params)
{
    auto vault = requireVault();
    if (!vault)
        return std::unexpected(vault.error());
    auto binding = CredentialBinding::fromJson(params);
    if (!binding)
        return std::unexpected(binding.error());
    // The helper's own guests exist only in memory: nobody's to bind (and the registry's
    // foreign key would refuse them with an SQL error; review 2026-12-01, L5).
    if (binding->sandbox.startsWith(SandboxService::kInternalPrefix))
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no sandbox named '%1'").arg(binding->sandbox));
    if (auto sandbox = m_sandboxes.get(binding->sandbox); !sandbox)
        return std::unexpected(sandbox.error());
    if (auto info = (*vault)->info(binding->secret); !info)
        return std::unexpected(info.error());
    auto stored = m_bindings.add(*binding);
    if (!stored)
        return std::unexpected(stored.error());
    if (auto placeholder = m_bindings.placeholder(stored->sandbox, stored->secret); !placeholder)
        return std::unexpected(placeholder.error());
    Q_EMIT bindingsChanged(stored->sandbox);
    return stored->toJson();
}

Result<QJsonValue> CredentialApi::bindingList(const QJsonObject &params)
{
    auto sandbox = json::readString(params, QStringLiteral("sandbox"), QString());
    if (!sandbox)
        return std::unexpected(sandbox.error());
    if (!sandbox->isEmpty()) {
        if (auto known = m_sandboxes.get(*sandbox); !known)
            return std::unexpected(known.error());
    }
    auto bindings = m_bindings.list(*sandbox);
    if (!bindings)
        return std::unexpected(bindings.error());
    QJsonArray array;
    for (const CredentialBinding &binding : *bindings)
        array.append(binding.toJson());
    return QJsonObject {{QStringLiteral("bindings"), array}};
}

Result<QJsonValue> CredentialApi::bindingRemove(const QJsonObject &params)
{
    auto id =
        json::readInteger(params, QStringLiteral("id"), 1, std::numeric_limits<qint64>::max());
    if (!id)
        return std::unexpected(id.error());
    auto removed = m_bindings.remove(*id);
    if (!removed)
        return std::unexpected(removed.error());
    if (auto pruned = m_bindings.prunePlaceholders(removed->sandbox); !pruned)
        return std::unexpected(pruned.error());
    Q_EMIT bindingsChanged(removed->sandbox);
    return removed->toJson();
}

} // namespace airlock
