#include "core/daemon/credentialbroker.h"

#include "core/daemon/bindingstore.h"
#include "core/daemon/credentialapi.h"
#include "core/daemon/sandboxservice.h"
#include "core/model/egressevent.h"
#include "core/vault/secretvault.h"

#include <QHash>
#include <QLoggingCategory>
#include <QSet>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcBroker, "airlock.daemon.credentials")
} // namespace

CredentialBroker::CredentialBroker(std::function<vault::SecretVault *()> vault,
                                   BindingStore &bindings, SandboxService &sandboxes,
                                   QObject *parent)
    : QObject(parent), m_vault(std::move(vault)), m_bindings(bindings), m_sandboxes(sandboxes)
{
    m_sandboxes.setCredentialSource([this](const QString &name) { return grants(name); });
    connect(&m_sandboxes, &SandboxService::egressEvent, this,
            [this](const QString &name, qint64, const QJsonObject &event) {
                recordEvent(name, event);
            });
}

void CredentialBroker::watch(CredentialApi &api)
{
    connect(&api, &CredentialApi::bindingsChanged, this, &CredentialBroker::refreshSandbox);
    connect(&api, &CredentialApi::secretChanged, this, &CredentialBroker::refreshSecret);
    // Unbound values stay scrub-only in the gateways
    // (docs/reviews/2026-12-01-credentials-redteam.md#f7) until the secret itself is deleted; then
    // they go (issue 16: a removed secret leaves their memory).
    connect(&api, &CredentialApi::secretDeleted, &m_sandboxes, &SandboxService::forgetSecret);
}

QList<GatewayCredentialGrant> CredentialBroker::grants(const QString &sandbox) const
{
    QList<GatewayCredentialGrant> grants;
    auto bindings = m_bindings.list(sandbox);
    if (!bindings) {
        qCWarning(lcBroker, "%s: no credentials for the gateway: %s", qPrintable(sandbox),
                  qPrintable(bindings.error().message));
        return grants;
    }
    vault::SecretVault *vault = m_vault ? m_vault() : nullptr;
    // One read (and one locked copy) per secret, shared by its bindings.
    QHash<QString, std::shared_ptr<const SecretValue>> values;
    for (const CredentialBinding &binding : std::as_const(*bindings)) {
        auto placeholder = m_bindings.placeholder(sandbox, binding.secret);
        if (!placeholder) {
            qCWarning(lcBroker, "%s: binding %lld left out: %s", qPrintable(sandbox),
                      static_cast<long long>(binding.id), qPrintable(placeholder.error().message));
            continue;
        }
        GatewayCredentialGrant grant;
        grant.binding = binding;
        grant.placeholder = *placeholder;
        if (!values.contains(binding.secret)) {
            std::shared_ptr<const SecretValue> value;
            if (!vault) {
                qCWarning(lcBroker,
                          "%s: secret '%s' handed over without its value: the vault is "
                          "unavailable",
                          qPrintable(sandbox), qPrintable(binding.secret));
            } else if (auto read = vault->read(binding.secret); !read) {
                qCWarning(lcBroker, "%s: secret '%s' handed over without its value: %s",
                          qPrintable(sandbox), qPrintable(binding.secret),
                          qPrintable(read.error().message));
            } else {
                value = std::make_shared<const SecretValue>(std::move(*read));
            }
            values.insert(binding.secret, value);
        }
        grant.value = values.value(binding.secret);
        grants.append(std::move(grant));
    }
    return grants;
}

void CredentialBroker::recordEvent(const QString &sandbox, const QJsonObject &object)
{
    if (!object.contains(QStringLiteral("binding")))
        return;
    auto event = EgressEvent::fromJson(object);
    if (!event || !event->binding)
        return;
    auto bindings = m_bindings.list(sandbox);
    if (!bindings)
        return;
    const bool own =
        std::any_of(bindings->cbegin(), bindings->cend(),
                    [&](const CredentialBinding &b) { return b.id == *event->binding; });
    if (!own) {
        qCWarning(lcBroker, "%s: the gateway reported binding %lld, which is not this sandbox's",
                  qPrintable(sandbox), static_cast<long long>(*event->binding));
        return;
    }
    const Result<void> counted = event->allowed
        ? m_bindings.recordInjection(*event->binding, event->time, event->count.value_or(1))
        : m_bindings.recordDenied(*event->binding, event->count.value_or(1));
    if (!counted)
        qCWarning(lcBroker, "%s: %s", qPrintable(sandbox), qPrintable(counted.error().message));
}

void CredentialBroker::refreshSandbox(const QString &sandbox)
{
    if (auto refreshed = m_sandboxes.refreshCredentials(sandbox); !refreshed)
        qCWarning(lcBroker, "%s: %s", qPrintable(sandbox), qPrintable(refreshed.error().message));
}

void CredentialBroker::refreshSecret(const QString &secret)
{
    auto bindings = m_bindings.usingSecret(secret);
    if (!bindings)
        return;
    QSet<QString> sandboxes;
    for (const CredentialBinding &binding : std::as_const(*bindings))
        sandboxes.insert(binding.sandbox);
    for (const QString &sandbox : std::as_const(sandboxes))
        refreshSandbox(sandbox);
}

} // namespace airlock
