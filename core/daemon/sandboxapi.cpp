#include "core/daemon/sandboxapi.h"

#include "core/daemon/consolehub.h"
#include "core/daemon/policydryrun.h"
#include "core/daemon/sandboxservice.h"
#include "core/model/egresspolicy.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"
#include "core/vmm/imagestore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <limits>

namespace airlock {

namespace {

namespace method = protocol::method;

/// The largest scrollback replay whose base64 still fits one 1 MiB message with room for the
/// envelope: 3/4 of (1 MiB - 4 KiB).
constexpr qsizetype kMaxReplayBytes = (protocol::kMaxMessageBytes - 4096) / 4 * 3;

constexpr int kDefaultStopTimeoutMs = 10000;

/// The `name` parameter, type-checked and validated.
Result<QString> nameParam(const QJsonObject &params)
{
    auto name = json::readString(params, QStringLiteral("name"));
    if (!name)
        return name;
    // The helper's own guests (template preparation) are nobody's to attach to, type into or
    // snapshot: what a client typed there would be in every sandbox started from the template.
    if (name->startsWith(SandboxService::kInternalPrefix))
        return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(*name));
    return validateName(*name);
}

template<typename T>
Result<QJsonValue> sandboxResult(const Result<T> &result)
{
    AIRLOCK_TRY(result);
    return QJsonValue(result->toJson());
}

Result<QJsonValue> emptyResult(const Result<void> &result)
{
    AIRLOCK_TRY(result);
    return QJsonValue(QJsonObject());
}

const QString kPolicy = QStringLiteral("policy");
const QString kRevision = QStringLiteral("revision");
const QString kIfRevision = QStringLiteral("ifRevision");

/// The `policy` parameter of policy.set and policy.dryRun: present and a JSON object.
Result<QJsonObject> policyParam(const QJsonObject &params)
{
    const QJsonValue value = params.value(kPolicy);
    if (!value.isObject())
        return fail(ErrorKind::InvalidParams,
                    value.isUndefined() ? QStringLiteral("field 'policy' is missing")
                                        : QStringLiteral("field 'policy' must be an object"));
    return value.toObject();
}

/// One `policy.validate` error: `{rule: int|null, field: string|null, message}`. `message` is
/// the text EgressPolicy::fromJson gives ("rule N, field 'F': why"); rule and field repeat what
/// it names so a client can point at the spot.
QJsonObject policyError(std::optional<qsizetype> rule, const QString &message)
{
    static const QRegularExpression fieldPattern(QStringLiteral("^field '([^']*)': "));
    const QRegularExpressionMatch match = fieldPattern.match(message);
    return QJsonObject {
        {QStringLiteral("rule"), rule ? QJsonValue(qint64(*rule)) : QJsonValue()},
        {QStringLiteral("field"), match.hasMatch() ? QJsonValue(match.captured(1)) : QJsonValue()},
        {QStringLiteral("message"),
         rule ? QStringLiteral("rule %1, %2").arg(*rule).arg(message) : message},
    };
}

/// Every problem of a policy object, not just the first: the top-level fields, then each rule
/// on its own (EgressRule::fromJson). Empty when EgressPolicy::fromJson accepts the object.
QJsonArray policyErrors(const QJsonValue &value)
{
    QJsonArray errors;
    if (!value.isObject()) {
        errors.append(policyError(std::nullopt,
                                  QStringLiteral("a policy must be a JSON object {\"version\": "
                                                 "1, \"rules\": [...]}")));
        return errors;
    }
    const QJsonObject object = value.toObject();
    // The top level, each problem on its own: every key is judged by the loader itself, in a
    // probe object that differs from a valid empty policy only in that key (so "version" and
    // "rules" problems are both reported, and every unknown key). A rules array is judged here
    // only for its length; its rules follow one by one.
    const QString versionKey = QStringLiteral("version");
    const QString rulesKey = QStringLiteral("rules");
    const QJsonValue rules = object.value(rulesKey);
    const bool rulesIsArray = rules.isArray();
    const QJsonObject validEmpty {{versionKey, EgressPolicy::kVersion}, {rulesKey, QJsonArray()}};
    auto probe = [&](const QString &key, const QJsonValue &keyValue) {
        QJsonObject candidate = validEmpty;
        if (keyValue.isUndefined())
            candidate.remove(key);
        else
            candidate.insert(key, keyValue);
        if (auto ok = EgressPolicy::fromJson(candidate); !ok)
            errors.append(policyError(std::nullopt, ok.error().message));
    };
    probe(versionKey, object.value(versionKey));
    const bool tooManyRules = rulesIsArray && rules.toArray().size() > EgressPolicy::kMaxRules;
    probe(rulesKey, rulesIsArray && !tooManyRules ? QJsonValue(QJsonArray()) : rules);
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != versionKey && it.key() != rulesKey)
            probe(it.key(), it.value());
    }
    if (rulesIsArray && !tooManyRules) {
        const QJsonArray array = rules.toArray();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (!array.at(i).isObject()) {
                errors.append(QJsonObject {{QStringLiteral("rule"), qint64(i)},
                                           {QStringLiteral("field"), QJsonValue()},
                                           {QStringLiteral("message"),
                                            QStringLiteral("rule %1: must be an object").arg(i)}});
                continue;
            }
            if (auto rule = EgressRule::fromJson(array.at(i).toObject()); !rule)
                errors.append(policyError(i, rule.error().message));
        }
    }
    // A safety net: whatever the loader refuses must not be reported as valid.
    if (errors.isEmpty()) {
        if (auto ok = EgressPolicy::fromJson(object); !ok)
            errors.append(policyError(std::nullopt, ok.error().message));
    }
    return errors;
}

} // namespace

SandboxApi::SandboxApi(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
                       const ImageStore &images, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_sandboxes(sandboxes)
    , m_consoles(consoles)
    , m_images(images)
{
    registerMethods();
}

void SandboxApi::registerMethods()
{
    auto add = [this](const char *name, RpcServer::Handler handler) {
        m_server.addMethod(QString::fromLatin1(name), std::move(handler));
    };
    add(method::Hello, [this](const RpcContext &c, const QJsonObject &p) { return hello(c, p); });
    add(method::SandboxCreate,
        [this](const RpcContext &, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(spec, SandboxSpec::fromJson(params));
            return sandboxResult(m_sandboxes.create(*spec));
        });
    add(method::SandboxList, [this](const RpcContext &, const QJsonObject &) {
        QJsonArray sandboxes;
        for (const Sandbox &sandbox : m_sandboxes.list())
            sandboxes.append(sandbox.toJson());
        return Result<QJsonValue>(QJsonObject {{QStringLiteral("sandboxes"), sandboxes}});
    });
    add(method::SandboxGet,
        [this](const RpcContext &, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(name, nameParam(params));
            return sandboxResult(m_sandboxes.get(*name));
        });
    // Deferred: the VMM starts, and a guest started from a template answers its identity
    // refresh, from the event loop; the answer says whether it did.
    m_server.addDeferredMethod(
        QString::fromLatin1(method::SandboxStart),
        [this](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
            auto name = nameParam(params);
            if (!name)
                return reply(std::unexpected(name.error()));
            // Answered once the VMM runs: one slow VMM holds up no other client.
            m_sandboxes.start(*name, [this, name = *name, reply](const Result<Sandbox> &started) {
                if (!started)
                    return reply(std::unexpected(started.error()));
                m_sandboxes.whenSettled(
                    name, [this, name, reply] { reply(sandboxResult(m_sandboxes.get(name))); });
            });
        });
    add(method::SandboxStop,
        [this](const RpcContext &, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(name, nameParam(params));
            auto timeout = json::readInteger(params, QStringLiteral("timeoutMs"), 100, 600000,
                                             kDefaultStopTimeoutMs);
            AIRLOCK_TRY(timeout);
            return sandboxResult(m_sandboxes.stop(*name, int(*timeout)));
        });
    add(method::SandboxKill,
        [this](const RpcContext &, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(name, nameParam(params));
            return sandboxResult(m_sandboxes.kill(*name));
        });
    add(method::SandboxDelete,
        [this](const RpcContext &, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(name, nameParam(params));
            return emptyResult(m_sandboxes.remove(*name));
        });
    add(method::ImageList, [this](const RpcContext &, const QJsonObject &) { return imageList(); });
    add(method::ConsoleAttach,
        [this](const RpcContext &c, const QJsonObject &p) { return consoleAttach(c, p); });
    add(method::ConsoleDetach,
        [this](const RpcContext &c, const QJsonObject &p) { return consoleDetach(c, p); });
    add(method::ConsoleWrite,
        [this](const RpcContext &, const QJsonObject &p) { return consoleWrite(p); });
    add(method::PolicyGet,
        [this](const RpcContext &, const QJsonObject &p) { return policyGet(p); });
    // Deferred: answered once the sandbox's gateway confirmed the policy, so that "applied" in
    // a client means enforced (issue 16).
    m_server.addDeferredMethod(
        QString::fromLatin1(method::PolicySet),
        [this](const RpcContext &c, const QJsonObject &p, RpcServer::Reply reply) {
            policySet(c, p, std::move(reply));
        });
    add(method::PolicyHistory,
        [this](const RpcContext &, const QJsonObject &p) { return policyHistory(p); });
    add(method::PolicyValidate,
        [this](const RpcContext &, const QJsonObject &p) { return policyValidate(p); });
    add(method::PolicyDryRun,
        [this](const RpcContext &, const QJsonObject &p) { return policyDryRun(p); });
    add(method::EgressHistory,
        [this](const RpcContext &, const QJsonObject &p) { return egressHistory(p); });
}

Result<QJsonValue> SandboxApi::hello(const RpcContext &context, const QJsonObject &params)
{
    auto version = json::readInteger(params, QStringLiteral("protocol"), INT_MIN, INT_MAX);
    AIRLOCK_TRY(version);
    if (*version != protocol::kProtocolVersion)
        return fail(ErrorKind::InvalidRequest,
                    QStringLiteral("protocol version %1 is not supported; this airlockd speaks %2")
                        .arg(*version)
                        .arg(protocol::kProtocolVersion));
    auto client = json::readString(params, QStringLiteral("client"), QString());
    AIRLOCK_TRY(client);
    const SandboxServiceConfig &config = m_sandboxes.config();
    const GuestMemory::HostFigures memory = m_sandboxes.hostMemory();
    return QJsonObject {
        {QStringLiteral("protocol"), protocol::kProtocolVersion},
        {QStringLiteral("helper"), QStringLiteral("airlockd")},
        {QStringLiteral("version"), QStringLiteral(AIRLOCK_VERSION)},
        {QStringLiteral("capabilities"),
         QJsonArray {QStringLiteral("sandbox"), QStringLiteral("console"), QStringLiteral("events"),
                     QStringLiteral("images"), QStringLiteral("policy"), QStringLiteral("egress"),
                     QStringLiteral("credentials"), QStringLiteral("snapshot"),
                     // template.*, sandbox.create boot, snapshot.fork bindings, guest agent
                     QStringLiteral("templates"),
                     // exec.*, files.* (AgentApi) and workspace.* (WorkspaceApi) over
                     // the guest agent
                     QStringLiteral("exec"), QStringLiteral("files"), QStringLiteral("workspace")}},
        {QStringLiteral("acceleration"), accelerationName(config.acceleration)},
        {QStringLiteral("accelerationWarning"), config.accelerationWarning},
        // The VMM backends (docs/vmm.md): the default of sandbox.create, and each backend's
        // availability (a reason when it cannot run guests here).
        {QStringLiteral("vmm"), vmmKindName(config.defaultVmm)},
        {QStringLiteral("vmms"),
         QJsonObject {
             {QStringLiteral("qemu"), QJsonObject {{QStringLiteral("available"), true}}},
             {QStringLiteral("firecracker"),
              QJsonObject {{QStringLiteral("available"), config.firecrackerUnavailable.isEmpty()},
                           {QStringLiteral("reason"), config.firecrackerUnavailable},
                           {QStringLiteral("binary"), config.firecrackerBinary}}}}},
        {QStringLiteral("uid"), qint64(context.peer.uid)},
        // The most memory a sandbox may ask for (sandbox.create refuses more), and what the
        // host has available now (sandbox.start refuses more): the New dialog shows both.
        {QStringLiteral("hostMemoryMib"), memory.ceilingMib},
        {QStringLiteral("hostMemoryAvailableMib"), memory.availableMib},
    };
}

Result<QJsonValue> SandboxApi::consoleAttach(const RpcContext &context, const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    AIRLOCK_TRY(m_sandboxes.get(*name));
    // replay: false is for a client that only wants what comes next (piped `airlockctl
    // console`): old output, and the terminal queries in it, would reach a reader who cannot
    // tell them from the answer.
    AIRLOCK_TRY_INIT(wantReplay, json::readBool(params, QStringLiteral("replay"), true));
    const ConsoleHub::Replay replay =
        m_consoles.attach(*name, context.clientId, *wantReplay ? kMaxReplayBytes : 0);
    return QJsonObject {{QStringLiteral("sandbox"), *name},
                        {QStringLiteral("seq"), qint64(replay.seq)},
                        {QStringLiteral("data"), QString::fromLatin1(replay.data.toBase64())}};
}

Result<QJsonValue> SandboxApi::consoleDetach(const RpcContext &context, const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    AIRLOCK_TRY(m_sandboxes.get(*name));
    if (!m_consoles.detach(*name, context.clientId))
        return fail(ErrorKind::NotFound,
                    QStringLiteral("this connection is not attached to '%1'").arg(*name));
    return QJsonObject();
}

Result<QJsonValue> SandboxApi::consoleWrite(const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    auto data = json::readString(params, QStringLiteral("data"));
    AIRLOCK_TRY(data);
    // Bound before decoding: base64 of 64 KiB is at most 87,384 characters.
    if (data->size() > (kMaxConsoleWriteBytes + 2) / 3 * 4)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'data' decodes to more than %1 bytes")
                        .arg(kMaxConsoleWriteBytes));
    const auto decoded = QByteArray::fromBase64Encoding(
        data->toLatin1(), QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'data' must be base64"));
    if ((*decoded).size() > kMaxConsoleWriteBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'data' decodes to more than %1 bytes")
                        .arg(kMaxConsoleWriteBytes));
    AIRLOCK_TRY(m_sandboxes.writeConsole(*name, *decoded));
    return QJsonObject();
}

Result<QJsonValue> SandboxApi::imageList()
{
    QJsonArray images;
    for (const auto &image : m_images.list())
        images.append(image.toJson());
    return QJsonObject {{QStringLiteral("images"), images}};
}

Result<QJsonValue> SandboxApi::policyGet(const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    auto policy = m_sandboxes.policy(*name);
    AIRLOCK_TRY(policy);
    return QJsonObject {{QStringLiteral("name"), *name},
                        {kPolicy, policy->toJson()},
                        {kRevision, policy->revision()}};
}

void SandboxApi::policySet(const RpcContext &context, const QJsonObject &params,
                           RpcServer::Reply reply)
{
    auto name = nameParam(params);
    if (!name)
        return reply(std::unexpected(name.error()));
    auto value = policyParam(params);
    if (!value)
        return reply(std::unexpected(value.error()));
    // What the change came through, for the policy history: the client's word, checked for
    // shape only (who made it comes from the connection, not from here).
    auto source = json::readString(params, QStringLiteral("source"), QStringLiteral("client"));
    if (!source)
        return reply(std::unexpected(source.error()));
    static const QRegularExpression sourcePattern(QStringLiteral("^[a-z][a-z0-9-]{0,31}$"));
    if (!sourcePattern.match(*source).hasMatch())
        return reply(fail(ErrorKind::InvalidParams,
                          QStringLiteral("field 'source' must be 1 to 32 characters a-z, 0-9 "
                                         "and '-', starting with a letter")));
    // Check the name first so that an unknown sandbox is not_found whatever the policy.
    if (auto found = m_sandboxes.get(*name); !found)
        return reply(std::unexpected(found.error()));
    auto policy = EgressPolicy::fromJson(*value);
    if (!policy)
        return reply(fail(ErrorKind::InvalidParams,
                          QStringLiteral("policy: %1").arg(policy.error().message)));
    // Compare and set: a client that read revision R and changed it must not overwrite what
    // another client stored since (the window's "Allow?" answer is such a change).
    if (const QJsonValue expected = params.value(kIfRevision); !expected.isUndefined()) {
        if (!expected.isString())
            return reply(fail(ErrorKind::InvalidParams,
                              QStringLiteral("field 'ifRevision' must be a string")));
        auto current = m_sandboxes.policy(*name);
        if (!current)
            return reply(std::unexpected(current.error()));
        if (current->revision() != expected.toString())
            return reply(fail(ErrorKind::Conflict,
                              QStringLiteral("the policy of '%1' changed since revision %2 (it is "
                                             "%3 now); read it again")
                                  .arg(*name, expected.toString(), current->revision())));
    }
    const QJsonObject answer {{QStringLiteral("name"), *name},
                              {kPolicy, policy->toJson()},
                              {kRevision, policy->revision()}};
    auto stored = m_sandboxes.setPolicy(
        *name, *policy,
        [reply, answer](const Result<void> &done) {
            if (!done)
                return reply(std::unexpected(done.error()));
            reply(answer);
        },
        PolicyChangeOrigin {context.peer.uid, *source});
    if (!stored)
        reply(std::unexpected(stored.error()));
}

Result<QJsonValue> SandboxApi::policyHistory(const QJsonObject &params)
{
    AIRLOCK_TRY_INIT(name, nameParam(params));
    AIRLOCK_TRY_INIT(limit,
                     json::readInteger(params, QStringLiteral("limit"), 1, PolicyHistory::kMaxLimit,
                                       PolicyHistory::kDefaultLimit));
    AIRLOCK_TRY_INIT(entries, m_sandboxes.policyHistory(*name, int(*limit)));
    // Each entry may carry a whole policy (up to 64 KiB): the answer stays well inside one
    // message, and `more` says that older entries were left out.
    constexpr qsizetype kBudget = protocol::kMaxMessageBytes / 4 * 3;
    QJsonArray changes;
    qsizetype bytes = 0;
    bool more = false;
    for (const QJsonValue &entry : std::as_const(*entries)) {
        bytes += QJsonDocument(entry.toObject()).toJson(QJsonDocument::Compact).size();
        if (bytes > kBudget) {
            more = true;
            break;
        }
        changes.append(entry);
    }
    return QJsonObject {{QStringLiteral("name"), *name},
                        {QStringLiteral("changes"), changes},
                        {QStringLiteral("more"), more}};
}

Result<QJsonValue> SandboxApi::policyValidate(const QJsonObject &params)
{
    const QJsonValue value = params.value(kPolicy);
    if (value.isUndefined())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'policy' is missing"));
    const QJsonArray errors = policyErrors(value);
    return QJsonObject {{QStringLiteral("valid"), errors.isEmpty()},
                        {QStringLiteral("errors"), errors}};
}

Result<QJsonValue> SandboxApi::policyDryRun(const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    auto value = policyParam(params);
    AIRLOCK_TRY(value);
    PolicyDryRun::Window window;
    for (const auto &[key, slot] : {std::pair {QStringLiteral("since"), &window.since},
                                    std::pair {QStringLiteral("until"), &window.until}}) {
        const QJsonValue time = params.value(key);
        if (time.isUndefined() || time.isNull())
            continue;
        const QDateTime parsed = QDateTime::fromString(time.toString(), Qt::ISODateWithMs);
        if (!time.isString() || !parsed.isValid())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("field '%1' must be an ISO 8601 time").arg(key));
        *slot = parsed.toUTC();
    }
    auto applied = m_sandboxes.policy(*name);
    AIRLOCK_TRY(applied);
    auto edited = EgressPolicy::fromJson(*value);
    if (!edited)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("policy: %1").arg(edited.error().message));
    // The whole bounded history: a dry run is rare and the store holds at most this many.
    auto records =
        m_sandboxes.egressHistory(*name, std::nullopt, m_sandboxes.config().egressHistory);
    AIRLOCK_TRY(records);
    auto result = PolicyDryRun::evaluate(*applied, *edited, *records, window);
    AIRLOCK_TRY(result);
    QJsonObject answer = *result;
    answer.insert(QStringLiteral("name"), *name);
    return answer;
}

Result<QJsonValue> SandboxApi::egressHistory(const QJsonObject &params)
{
    auto name = nameParam(params);
    AIRLOCK_TRY(name);
    std::optional<qint64> since;
    if (params.contains(QStringLiteral("since"))) {
        auto value = json::readInteger(params, QStringLiteral("since"), 0,
                                       std::numeric_limits<qint64>::max());
        AIRLOCK_TRY(value);
        since = *value;
    }
    auto limit =
        json::readInteger(params, QStringLiteral("limit"), 1, kMaxEgressLimit, kDefaultEgressLimit);
    AIRLOCK_TRY(limit);
    auto records = m_sandboxes.egressHistory(*name, since, int(*limit));
    AIRLOCK_TRY(records);
    QJsonArray events;
    for (const EgressRecord &record : *records)
        events.append(QJsonObject {{QStringLiteral("seq"), record.seq},
                                   {QStringLiteral("event"), record.event}});
    return QJsonObject {{QStringLiteral("name"), *name}, {QStringLiteral("events"), events}};
}

} // namespace airlock
