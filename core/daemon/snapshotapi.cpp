#include "core/daemon/snapshotapi.h"

#include "core/daemon/credentialaudit.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/secretowners.h"
#include "core/daemon/snapshotscheduler.h"
#include "core/daemon/snapshotservice.h"
#include "core/daemon/templateservice.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"
#include "core/snapshot/retention.h"

#include <QJsonArray>

namespace airlock {

namespace {

namespace method = protocol::method;

Result<QString> nameParam(const QJsonObject &params, const QString &key = QStringLiteral("name"))
{
    auto name = json::readString(params, key);
    if (!name)
        return name;
    // The helper's own guests (template preparation) are nobody's to attach to, type into or
    // snapshot: what a client typed there would be in every sandbox started from the template.
    if (name->startsWith(SandboxService::kInternalPrefix))
        return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(*name));
    return validateName(*name);
}

Result<QString> snapshotParam(const QJsonObject &params)
{
    auto id = json::readString(params, QStringLiteral("snapshot"));
    if (!id)
        return id;
    return Snapshot::validateId(*id);
}

template<typename T>
Result<QJsonValue> asJson(const Result<T> &result)
{
    AIRLOCK_TRY(result);
    return QJsonValue(result->toJson());
}

} // namespace

SnapshotApi::SnapshotApi(RpcServer &server, SandboxService &sandboxes, SnapshotService &snapshots,
                         TemplateService &templates, SnapshotScheduler &schedules, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_sandboxes(sandboxes)
    , m_snapshots(snapshots)
    , m_templates(templates)
    , m_schedules(schedules)
{
    registerMethods();
}

void SnapshotApi::registerMethods()
{
    auto add = [this](const char *name, std::function<Result<QJsonValue>(const QJsonObject &)> f) {
        m_server.addMethod(QString::fromLatin1(name),
                           [f = std::move(f)](const RpcContext &, const QJsonObject &params) {
                               return f(params);
                           });
    };
    // Answered once QEMU has: a VMM that is slow to answer holds up no other client.
    m_server.addDeferredMethod(
        QString::fromLatin1(method::VmPause),
        [this](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
            auto name = nameParam(params);
            if (!name)
                return reply(std::unexpected(name.error()));
            m_sandboxes.pause(*name,
                              [reply](const Result<Sandbox> &paused) { reply(asJson(paused)); });
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::VmResume),
        [this](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
            auto name = nameParam(params);
            if (!name)
                return reply(std::unexpected(name.error()));
            m_sandboxes.resume(*name,
                               [reply](const Result<Sandbox> &resumed) { reply(asJson(resumed)); });
        });
    // Answered once the snapshot is stored; the chunks are written on a worker meanwhile.
    m_server.addDeferredMethod(
        QString::fromLatin1(method::SnapshotCreate),
        [this](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
            auto name = nameParam(params);
            auto label = json::readString(params, QStringLiteral("label"), QString());
            if (!name)
                return reply(std::unexpected(name.error()));
            if (!label)
                return reply(std::unexpected(label.error()));
            m_snapshots.createAsync(
                *name, *label, SnapshotKind::Manual,
                [reply](const Result<Snapshot> &snapshot) { reply(asJson(snapshot)); });
        });
    add(method::SnapshotList, [this](const QJsonObject &p) { return list(p); });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::SnapshotRestore),
        [this](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
            restore(params, std::move(reply));
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::SnapshotFork),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            fork(context.peer.uid, params, std::move(reply));
        });
    add(method::SnapshotDelete, [this](const QJsonObject &params) -> Result<QJsonValue> {
        auto id = snapshotParam(params);
        AIRLOCK_TRY(id);
        AIRLOCK_TRY(m_snapshots.remove(*id));
        return QJsonObject();
    });
    add(method::SnapshotPin, [this](const QJsonObject &params) -> Result<QJsonValue> {
        auto id = snapshotParam(params);
        auto pinned = json::readBool(params, QStringLiteral("pinned"), true);
        AIRLOCK_TRY(id);
        AIRLOCK_TRY(pinned);
        return asJson(m_snapshots.setPinned(*id, *pinned));
    });
    add(method::SnapshotRename, [this](const QJsonObject &params) -> Result<QJsonValue> {
        auto id = snapshotParam(params);
        auto label = json::readString(params, QStringLiteral("label"));
        AIRLOCK_TRY(id);
        AIRLOCK_TRY(label);
        return asJson(m_snapshots.rename(*id, *label));
    });
    add(method::SnapshotSchedule, [this](const QJsonObject &p) { return schedule(p); });
    add(method::TemplateList, [this](const QJsonObject &) { return templates(); });
    add(method::TemplatePrepare, [this](const QJsonObject &p) { return prepareTemplate(p); });
}

Result<QJsonValue> SnapshotApi::list(const QJsonObject &params)
{
    QString name;
    if (params.contains(QStringLiteral("name"))) {
        auto valid = nameParam(params);
        AIRLOCK_TRY(valid);
        name = *valid;
    }
    auto snapshots = m_snapshots.list(name);
    AIRLOCK_TRY(snapshots);
    QJsonArray array;
    for (const Snapshot &snapshot : *snapshots)
        array.append(snapshot.toJson());
    QJsonObject result {{QStringLiteral("snapshots"), array}};
    if (!name.isEmpty()) {
        const QString head = m_snapshots.head(name);
        const auto schedule = m_schedules.schedule(name);
        result.insert(QStringLiteral("head"), head.isEmpty() ? QJsonValue() : QJsonValue(head));
        if (schedule) {
            result.insert(QStringLiteral("schedule"), schedule->toJson());
            result.insert(QStringLiteral("retainedSince"),
                          Retention::windowStart(*schedule, QDateTime::currentDateTimeUtc())
                              .toString(Qt::ISODateWithMs));
        }
    }
    return result;
}

void SnapshotApi::restore(const QJsonObject &params, RpcServer::Reply reply)
{
    auto name = nameParam(params);
    auto id = snapshotParam(params);
    if (!name)
        return reply(std::unexpected(name.error()));
    if (!id)
        return reply(std::unexpected(id.error()));
    m_snapshots.restoreSnapshot(
        *name, *id, [this, name = *name, reply](const Result<std::optional<Snapshot>> &safety) {
            if (!safety)
                return reply(std::unexpected(safety.error()));
            const QJsonValue safetyJson = *safety ? QJsonValue((*safety)->toJson()) : QJsonValue();
            // Once the restored guest answered its identity refresh.
            m_sandboxes.whenSettled(name, [this, name, safetyJson, reply] {
                auto sandbox = m_sandboxes.get(name);
                if (!sandbox)
                    return reply(std::unexpected(sandbox.error()));
                reply(QJsonObject {{QStringLiteral("sandbox"), sandbox->toJson()},
                                   {QStringLiteral("safety"), safetyJson}});
            });
        });
}

void SnapshotApi::fork(uid_t caller, const QJsonObject &params, RpcServer::Reply reply)
{
    auto id = snapshotParam(params);
    auto name = nameParam(params);
    if (!id)
        return reply(std::unexpected(id.error()));
    if (!name)
        return reply(std::unexpected(name.error()));
    auto bindings = json::readBool(params, QStringLiteral("bindings"), false);
    if (!bindings)
        return reply(std::unexpected(bindings.error()));
    std::optional<QMap<QString, QString>> labels;
    if (const QJsonValue given = params.value(QStringLiteral("labels")); !given.isUndefined()) {
        auto parsed = SandboxSpec::labelsFromJson(given);
        if (!parsed)
            return reply(std::unexpected(parsed.error()));
        labels = *parsed;
    }
    SnapshotService::ForkBindings forkBindings;
    forkBindings.copy = *bindings;
    if (m_owners) {
        // Copying a binding binds the secret to the fork: the same right as binding.add.
        forkBindings.refuse = [owners = m_owners, caller](const CredentialBinding &binding) {
            auto allowed = owners->check(caller, binding.secret, QStringLiteral("bind it"));
            return allowed
                ? QString()
                : QStringLiteral("binding %1: %2").arg(binding.id).arg(allowed.error().message);
        };
    }
    m_snapshots.fork(
        *id, *name, std::move(forkBindings),
        [this, caller, id = *id, reply](const Result<QString> &forked,
                                        const SnapshotService::ForkBindings &result) {
            forkDone(caller, id, forked, result, reply);
        },
        labels);
}

void SnapshotApi::forkDone(uid_t caller, const QString &id, const Result<QString> &forked,
                           const SnapshotService::ForkBindings &forkBindings,
                           const RpcServer::Reply &reply)
{
    if (!forked)
        return reply(std::unexpected(forked.error()));
    if (m_audit) {
        for (const CredentialBinding &copy : forkBindings.copied) {
            CredentialAudit::Entry entry {caller, QString::fromLatin1(method::SnapshotFork)};
            entry.secret = copy.secret;
            entry.sandbox = copy.sandbox;
            entry.host = copy.host;
            entry.binding = copy.id;
            entry.extra.insert(QStringLiteral("snapshot"), id);
            m_audit->record(entry);
        }
    }
    const int copied = int(forkBindings.copied.size());
    const QStringList leftOut = forkBindings.leftOut;
    // Once the fork's guest answered its identity refresh.
    m_sandboxes.whenSettled(*forked, [this, name = *forked, copied, leftOut, reply] {
        auto sandbox = m_sandboxes.get(name);
        if (!sandbox)
            return reply(std::unexpected(sandbox.error()));
        // The Sandbox, plus what was done with the original's credential bindings.
        QJsonObject result = sandbox->toJson();
        result.insert(QStringLiteral("bindingsCopied"), copied);
        result.insert(QStringLiteral("bindingsLeftOut"), int(leftOut.size()));
        if (!leftOut.isEmpty())
            result.insert(QStringLiteral("bindingsLeftOutReason"),
                          QStringLiteral("%1 binding(s) of secrets you do not own were not "
                                         "copied: %2")
                              .arg(leftOut.size())
                              .arg(leftOut.join(QStringLiteral("; "))));
        reply(result);
    });
}

Result<QJsonValue> SnapshotApi::templates()
{
    auto all = m_snapshots.list(QString());
    AIRLOCK_TRY(all);
    QJsonArray templates;
    for (const Snapshot &snapshot : *all) {
        if (snapshot.kind != SnapshotKind::Template)
            continue;
        SandboxSpec shape;
        shape.image = snapshot.image;
        shape.vcpus = snapshot.vcpus;
        shape.memoryMib = snapshot.memoryMib;
        shape.vmm = snapshot.vmm;
        const auto key = m_templates.templateKey(shape);
        QJsonObject object = snapshot.toJson();
        object.insert(QStringLiteral("current"), key && *key == snapshot.templateKey);
        templates.append(object);
    }
    return QJsonObject {{QStringLiteral("templates"), templates}};
}

Result<QJsonValue> SnapshotApi::prepareTemplate(const QJsonObject &params)
{
    QJsonObject spec = params;
    spec.insert(QStringLiteral("name"), QStringLiteral("template"));
    auto shape = SandboxSpec::fromJson(spec);
    AIRLOCK_TRY(shape);
    AIRLOCK_TRY(shape->validate());
    auto prepared = m_templates.prepareTemplate(*shape);
    AIRLOCK_TRY(prepared);
    return QJsonObject {
        {QStringLiteral("template"), *prepared ? QJsonValue((*prepared)->toJson()) : QJsonValue()},
        {QStringLiteral("preparing"), !*prepared && m_templates.isPreparing(*shape)}};
}

Result<QJsonValue> SnapshotApi::schedule(const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    const QJsonValue value = params.value(QStringLiteral("schedule"));
    if (value.isUndefined())
        return asJson(m_schedules.schedule(*name));
    if (!value.isObject())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'schedule' must be an object"));
    auto schedule = SnapshotSchedule::fromJson(value.toObject());
    AIRLOCK_TRY(schedule);
    return asJson(m_schedules.setSchedule(*name, *schedule));
}

} // namespace airlock
