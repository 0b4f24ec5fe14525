#include "core/e2b/controlapi.h"

#include "core/e2b/apierror.h"
#include "core/e2b/apikeystore.h"
#include "core/e2b/guestcommand.h"

#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>

#include <cmath>
#include <memory>

namespace airlock::e2b {

namespace {

// E2B's documented default lifetime of a sandbox (the SDK sends no timeout unless asked).
constexpr int kDefaultTimeoutSeconds = 300;
// E2B's ceiling for a sandbox's lifetime (24 hours, the Pro plan's).
constexpr int kMaxTimeoutSeconds = 24 * 3600;
// A cold boot on TCG takes tens of seconds; the guest agent answers once init started it.
constexpr int kStartTimeoutMs = 180000;
constexpr int kAgentWaitMs = 120000;
constexpr int kAgentRetryMs = 250;
// Bounds on what a client may store with a sandbox (E2B's own are similar in spirit).
constexpr qsizetype kMaxMetadataEntries = 64;
constexpr qsizetype kMaxValueBytes = 4096;

const QRegularExpression kSandboxPath(QStringLiteral(
    "^/(v2/)?sandboxes/([a-z0-9]{1,40})(/"
    "(timeout|connect|pause|resume|refreshes|snapshots|fork|metrics|logs|network))?$"));

// E2B deletes a snapshot as a template (DELETE /templates/{id}); Airlock's ids are 16 hex digits.
const QRegularExpression kTemplatePath(QStringLiteral("^/templates/([0-9a-f]{16})$"));
const QRegularExpression kSnapshotId(QStringLiteral("^[0-9a-f]{16}$"));
// Forks one POST /fork may ask for.
constexpr int kMaxForks = 8;

HttpResponse apiError(int status, const QString &message)
{
    HttpResponse response;
    response.status = status;
    response.body = apiErrorBody(status, message);
    return response;
}

void answer(const QPointer<HttpConnection> &connection, const HttpResponse &response)
{
    if (connection)
        connection->respond(response);
}

void answerError(const QPointer<HttpConnection> &connection, const Error &error)
{
    answer(connection, apiError(httpStatusFor(error.kind), error.message));
}

// A JSON object of string values (metadata, envVars), bounded; an error names the field.
Result<QJsonObject> stringMap(const QJsonValue &value, const QString &field)
{
    if (value.isUndefined() || value.isNull())
        return QJsonObject();
    if (!value.isObject())
        return fail(ErrorKind::InvalidParams, QStringLiteral("%1 must be an object").arg(field));
    const QJsonObject object = value.toObject();
    if (object.size() > kMaxMetadataEntries)
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("%1 has more than %2 entries").arg(field).arg(kMaxMetadataEntries));
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!it.value().isString() || it.key().isEmpty() || it.key().size() > kMaxValueBytes
            || it.value().toString().size() > kMaxValueBytes)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("%1.%2 must be a string of at most %3 characters")
                            .arg(field, it.key())
                            .arg(kMaxValueBytes));
    }
    return object;
}

Result<int> timeoutSeconds(const QJsonObject &body)
{
    const QJsonValue value = body.value(QStringLiteral("timeout"));
    if (value.isUndefined() || value.isNull())
        return kDefaultTimeoutSeconds;
    if (!value.isDouble() || value.toDouble() < 0 || value.toDouble() > kMaxTimeoutSeconds)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("timeout must be 0..%1 seconds").arg(kMaxTimeoutSeconds));
    return value.toInt();
}

Result<QJsonObject> jsonBody(const HttpRequest &request)
{
    if (request.body.trimmed().isEmpty())
        return QJsonObject();
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return fail(ErrorKind::InvalidParams, QStringLiteral("the body must be a JSON object"));
    return document.object();
}

// What airlock-e2b cannot do yet, refused by name rather than ignored.
QString unsupportedCreateField(const QJsonObject &body)
{
    if (body.value(QStringLiteral("autoPause")).toBool())
        return QStringLiteral("autoPause is not supported by airlock-e2b yet");
    if (!body.value(QStringLiteral("volumeMounts")).toArray().isEmpty())
        return QStringLiteral("volumeMounts are not supported by airlock-e2b");
    if (body.contains(QStringLiteral("mcp")) && !body.value(QStringLiteral("mcp")).isNull())
        return QStringLiteral("mcp is not supported by airlock-e2b");
    return {};
}

bool isAddressOrRange(const QString &entry)
{
    return entry.contains(u'/') || !QHostAddress(entry).isNull();
}

// E2B knows two states: a sandbox that is not running is paused.
QString e2bState(const E2bSandbox &sandbox, const QString &airlockState)
{
    return airlockState == QLatin1String("running") && sandbox.pausedSnapshot.isEmpty()
        ? QStringLiteral("running")
        : QStringLiteral("paused");
}

// The metadata filter of GET /v2/sandboxes: `metadata` is the URL-encoded form of key=value
// pairs whose keys and values the SDK percent-encoded once more (SandboxPaginator.nextItems).
QList<std::pair<QString, QString>> metadataFilter(const QUrlQuery &query)
{
    QList<std::pair<QString, QString>> filter;
    const QString encoded = query.queryItemValue(QStringLiteral("metadata"), QUrl::FullyDecoded);
    if (encoded.isEmpty())
        return filter;
    const QUrlQuery pairs(encoded);
    for (const auto &[key, value] : pairs.queryItems(QUrl::FullyDecoded)) {
        filter.append(
            {QUrl::fromPercentEncoding(key.toUtf8()), QUrl::fromPercentEncoding(value.toUtf8())});
    }
    return filter;
}

} // namespace

ControlApi::ControlApi(E2bContext context, QObject *parent)
    : QObject(parent), m_context(context) { }

bool ControlApi::handles(const HttpRequest &request)
{
    return request.path.startsWith(QStringLiteral("/sandboxes"))
        || request.path.startsWith(QStringLiteral("/v2/sandboxes"))
        || request.path == QLatin1String("/snapshots")
        || request.path.startsWith(QStringLiteral("/templates/"));
}

void ControlApi::handle(const QPointer<HttpConnection> &connection, const HttpRequest &request)
{
    const QString &path = request.path;
    const QByteArray &method = request.method;
    if (path == QLatin1String("/sandboxes") || path == QLatin1String("/v2/sandboxes")) {
        if (method == "POST")
            return create(connection, request);
        if (method == "GET")
            return list(connection, request);
        return answer(connection, apiError(405, QStringLiteral("method not allowed")));
    }
    if (path == QLatin1String("/snapshots")) {
        if (method == "GET")
            return listSnapshots(connection, request);
        return answer(connection, apiError(405, QStringLiteral("method not allowed")));
    }
    if (const auto snapshot = kTemplatePath.match(path); snapshot.hasMatch() && method == "DELETE")
        return deleteSnapshot(connection, snapshot.captured(1));
    const QRegularExpressionMatch match = kSandboxPath.match(path);
    if (!match.hasMatch())
        return answer(connection, apiError(404, QStringLiteral("no such endpoint: %1").arg(path)));
    const QString id = match.captured(2);
    const QString action = match.captured(4);
    if (!m_context.registry->find(id))
        return answer(connection, apiError(404, QStringLiteral("sandbox %1 not found").arg(id)));
    if (action.isEmpty() && method == "GET")
        return info(connection, id);
    if (action.isEmpty() && method == "DELETE") {
        return kill(id, [connection](const Result<void> &result) {
            if (!result)
                return answerError(connection, result.error());
            answer(connection, emptyResponse(204));
        });
    }
    if (action == QLatin1String("timeout") && method == "POST")
        return setTimeout(connection, id, request);
    if (action == QLatin1String("connect") && method == "POST")
        return connectTo(connection, id, request);
    if (action == QLatin1String("pause") && method == "POST")
        return pause(connection, id);
    if (action == QLatin1String("snapshots") && method == "POST")
        return createSnapshot(connection, id, request);
    if (action == QLatin1String("fork") && method == "POST")
        return fork(connection, id, request);
    if (action == QLatin1String("metrics") && method == "GET")
        return metrics(connection, id);
    if (action == QLatin1String("network") && method == "PUT")
        return updateNetwork(connection, id, request);
    answer(connection,
           apiError(501,
                    QStringLiteral("%1 %2 is not supported by airlock-e2b (docs/e2b.md)")
                        .arg(QString::fromLatin1(method), path)));
}

void ControlApi::create(const QPointer<HttpConnection> &connection, const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    QString templateId = body->value(QStringLiteral("templateID")).toString();
    if (templateId.isEmpty())
        templateId = QStringLiteral("base");
    const auto metadata =
        stringMap(body->value(QStringLiteral("metadata")), QStringLiteral("metadata"));
    if (!metadata)
        return answerError(connection, metadata.error());
    const auto envVars =
        stringMap(body->value(QStringLiteral("envVars")), QStringLiteral("envVars"));
    if (!envVars)
        return answerError(connection, envVars.error());
    const auto timeout = timeoutSeconds(*body);
    if (!timeout)
        return answerError(connection, timeout.error());
    if (const QString refused = unsupportedCreateField(*body); !refused.isEmpty())
        return answer(connection, apiError(400, refused));
    QStringList hosts;
    const auto policy = policyFromNetwork(*body, &hosts);
    if (!policy)
        return answerError(connection, policy.error());

    E2bSandbox sandbox;
    sandbox.id = SandboxRegistry::newId();
    sandbox.templateId = templateId;
    // E2B's stock template is `base`; Airlock's stock image is `default`.
    sandbox.image = templateId == QLatin1String("base") ? QStringLiteral("default") : templateId;
    sandbox.metadata = *metadata;
    sandbox.envVars = *envVars;
    sandbox.accessToken = ApiKeyStore::randomToken("e2bt_");
    sandbox.allowOut = hosts;
    const QString name = sandbox.airlockName();
    if (kSnapshotId.match(templateId).hasMatch()) {
        // A snapshot of createSnapshot as the template: snapshot.fork starts it.
        return forkInto(
            sandbox, templateId, *timeout, *policy, [connection](const Result<E2bSandbox> &forked) {
                if (!forked) {
                    if (forked.error().kind == ErrorKind::NotFound)
                        return answer(connection, apiError(404, forked.error().message));
                    return answerError(connection, forked.error());
                }
                answer(connection, jsonResponse(201, sandboxBody(*forked)));
            });
    }
    m_context.call(
        QStringLiteral("sandbox.create"),
        // The metadata goes with the sandbox into airlockd, so the window and `airlockctl
        // info` show it (it stays in the registry too: Sandbox.list filters by it).
        {{QStringLiteral("name"), name},
         {QStringLiteral("image"), sandbox.image},
         {QStringLiteral("labels"), sandbox.metadata}},
        [this, connection, sandbox, name, seconds = *timeout,
         policy = *policy](const Result<QJsonObject> &created) mutable {
            if (!created) {
                // Not an Airlock image: the SDK shows "404: template ... not found".
                if (created.error().kind == ErrorKind::NotFound)
                    return answer(
                        connection,
                        apiError(
                            404,
                            QStringLiteral("template '%1' not found: it must be "
                                           "an Airlock image id (airlockctl image list) or 'base'")
                                .arg(sandbox.templateId)));
                return answerError(connection, created.error());
            }
            sandbox.cpuCount = created->value(QStringLiteral("vcpus")).toInt(1);
            sandbox.memoryMb = created->value(QStringLiteral("memoryMib")).toInt(256);
            if (policy.isEmpty())
                return boot(connection, sandbox, seconds);
            // The policy is in place before the guest runs a single instruction.
            m_context.call(
                QStringLiteral("policy.set"),
                {{QStringLiteral("name"), name}, {QStringLiteral("policy"), policy}},
                [this, connection, sandbox, name, seconds](const Result<QJsonObject> &set) {
                    if (set)
                        return boot(connection, sandbox, seconds);
                    m_context.call(QStringLiteral("sandbox.delete"),
                                   {{QStringLiteral("name"), name}},
                                   [](const Result<QJsonObject> &) {});
                    answer(
                        connection,
                        apiError(400,
                                 QStringLiteral("network.allowOut: %1").arg(set.error().message)));
                });
        });
}

void ControlApi::boot(const QPointer<HttpConnection> &connection, E2bSandbox sandbox, int seconds)
{
    const QString name = sandbox.airlockName();
    startAndWait(
        name, [this, connection, sandbox, name, seconds](const Result<void> &started) mutable {
            if (!started) {
                // Leave nothing half made behind.
                m_context.call(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), name}},
                               [context = m_context, name](const Result<QJsonObject> &) {
                                   context.call(QStringLiteral("sandbox.delete"),
                                                {{QStringLiteral("name"), name}},
                                                [](const Result<QJsonObject> &) {});
                               });
                return answerError(connection, started.error());
            }
            sandbox.startedAt = QDateTime::currentDateTimeUtc();
            sandbox.endAt = sandbox.startedAt.addSecs(seconds);
            m_context.registry->insert(sandbox);
            answer(connection, jsonResponse(201, sandboxBody(sandbox)));
        });
}

Result<QJsonObject> ControlApi::policyFromNetwork(const QJsonObject &body, QStringList *hosts)
{
    const QJsonObject network = body.value(QStringLiteral("network")).toObject();
    const QJsonValue rules = network.value(QStringLiteral("rules"));
    if (!rules.toObject().isEmpty() || !rules.toArray().isEmpty())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("network.rules carry values from the client into the "
                                   "sandbox's traffic; Airlock keeps secrets out of the client: "
                                   "store the value with `airlockctl secret set` and bind it to "
                                   "the host with `airlockctl binding add` (docs/credentials.md)"));
    if (!network.value(QStringLiteral("egressProxy")).isUndefined()
        && !network.value(QStringLiteral("egressProxy")).isNull())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("network.egressProxy is not supported: Airlock's own gateway "
                                   "carries every sandbox's egress (docs/gateway.md)"));
    for (const QJsonValue &value : network.value(QStringLiteral("denyOut")).toArray()) {
        // Denying everything is what an Airlock policy does to what it does not allow.
        if (value.toString() != QLatin1String("0.0.0.0/0"))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("network.denyOut '%1': an Airlock policy is an allowlist "
                                       "(anything not allowed is denied); leave out denyOut and "
                                       "list what to allow in allowOut")
                            .arg(value.toString()));
    }
    QJsonArray policyRules;
    for (const QJsonValue &value : network.value(QStringLiteral("allowOut")).toArray()) {
        const QString entry = value.toString().trimmed();
        if (entry.isEmpty())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("network.allowOut entries must be host names"));
        if (isAddressOrRange(entry))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("network.allowOut '%1': IP addresses and CIDR ranges "
                                       "cannot be allowed: Airlock's gateway allows host names "
                                       "(pkg.test, *.example.com), so that the name the guest "
                                       "asked for is the one checked (docs/policy.md)")
                            .arg(entry));
        // E2B's host rules are for HTTP and HTTPS.
        policyRules.append(
            QJsonObject {{QStringLiteral("host"), entry},
                         {QStringLiteral("ports"), QJsonArray {80, 443}},
                         {QStringLiteral("comment"), QStringLiteral("E2B allowOut")}});
        hosts->append(entry);
    }
    if (policyRules.isEmpty())
        return QJsonObject();
    return QJsonObject {{QStringLiteral("version"), 1}, {QStringLiteral("rules"), policyRules}};
}

void ControlApi::startAndWait(const QString &name, std::function<void(const Result<void> &)> done)
{
    m_context.call(
        QStringLiteral("sandbox.start"), {{QStringLiteral("name"), name}},
        [this, name, done = std::move(done)](const Result<QJsonObject> &started) {
            if (!started)
                return done(std::unexpected(started.error()));
            waitForAgent(name, QDateTime::currentDateTimeUtc().addMSecs(kAgentWaitMs), done);
        },
        kStartTimeoutMs);
}

void ControlApi::waitForAgent(const QString &name, QDateTime deadline,
                              std::function<void(const Result<void> &)> done)
{
    m_context.call(
        QStringLiteral("exec.list"), {{QStringLiteral("name"), name}},
        [this, name, deadline, done](const Result<QJsonObject> &listed) {
            if (listed)
                return done({});
            const ErrorKind kind = listed.error().kind;
            const bool booting = kind == ErrorKind::AgentUnavailable || kind == ErrorKind::Timeout;
            if (!booting || QDateTime::currentDateTimeUtc() > deadline)
                return done(std::unexpected(listed.error()));
            QTimer::singleShot(kAgentRetryMs, this, [this, name, deadline, done] {
                waitForAgent(name, deadline, done);
            });
        },
        30000);
}

void ControlApi::kill(const QString &id, std::function<void(const Result<void> &)> done)
{
    const E2bSandbox *sandbox = m_context.registry->find(id);
    if (!sandbox)
        return done(fail(ErrorKind::NotFound, QStringLiteral("sandbox %1 not found").arg(id)));
    m_cpuSamples.remove(id);
    const QString name = sandbox->airlockName();
    m_context.call(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), name}},
                   [this, id, name, done = std::move(done)](const Result<QJsonObject> &killed) {
                       // Already stopped is fine; gone already is fine too.
                       if (!killed && killed.error().kind != ErrorKind::InvalidState
                           && killed.error().kind != ErrorKind::NotFound)
                           return done(std::unexpected(killed.error()));
                       m_context.call(
                           QStringLiteral("sandbox.delete"), {{QStringLiteral("name"), name}},
                           [this, id, done](const Result<QJsonObject> &deleted) {
                               if (!deleted && deleted.error().kind != ErrorKind::NotFound)
                                   return done(std::unexpected(deleted.error()));
                               m_context.registry->remove(id);
                               done({});
                           });
                   });
}

void ControlApi::info(const QPointer<HttpConnection> &connection, const QString &id)
{
    const E2bSandbox sandbox = *m_context.registry->find(id);
    m_context.call(
        QStringLiteral("sandbox.get"), {{QStringLiteral("name"), sandbox.airlockName()}},
        [this, connection, sandbox](const Result<QJsonObject> &got) {
            if (!got && got.error().kind == ErrorKind::NotFound) {
                // Deleted behind our back (airlockctl, the window).
                m_context.registry->remove(sandbox.id);
                return answer(
                    connection,
                    apiError(404, QStringLiteral("sandbox %1 not found").arg(sandbox.id)));
            }
            if (!got)
                return answerError(connection, got.error());
            const QString state = got->value(QStringLiteral("state")).toString();
            answer(connection, jsonResponse(200, detailBody(sandbox, e2bState(sandbox, state))));
        });
}

void ControlApi::list(const QPointer<HttpConnection> &connection, const HttpRequest &request)
{
    const auto filter = metadataFilter(request.query);
    const QStringList states =
        request.query.queryItemValue(QStringLiteral("state"), QUrl::FullyDecoded)
            .split(u',', Qt::SkipEmptyParts);
    bool limitOk = false;
    int limit = request.query.queryItemValue(QStringLiteral("limit")).toInt(&limitOk);
    if (!limitOk || limit <= 0)
        limit = 100;
    const int offset = request.query.queryItemValue(QStringLiteral("nextToken")).toInt();
    m_context.call(
        QStringLiteral("sandbox.list"), {},
        [this, connection, filter, states, limit, offset](const Result<QJsonObject> &listed) {
            if (!listed)
                return answerError(connection, listed.error());
            QHash<QString, QString> airlockStates;
            for (const QJsonValue &value : listed->value(QStringLiteral("sandboxes")).toArray()) {
                const QJsonObject object = value.toObject();
                airlockStates.insert(object.value(QStringLiteral("name")).toString(),
                                     object.value(QStringLiteral("state")).toString());
            }
            QJsonArray matching;
            for (const E2bSandbox &sandbox : m_context.registry->all()) {
                const auto it = airlockStates.constFind(sandbox.airlockName());
                if (it == airlockStates.cend())
                    continue;
                const QString state = e2bState(sandbox, *it);
                if (!states.isEmpty() && !states.contains(state))
                    continue;
                bool matches = true;
                for (const auto &[key, value] : filter)
                    matches = matches && sandbox.metadata.value(key).toString() == value;
                if (matches)
                    matching.append(detailBody(sandbox, state));
            }
            QJsonArray page;
            for (int i = offset; i < matching.size() && page.size() < limit; ++i)
                page.append(matching[i]);
            HttpResponse response = jsonResponse(200, page);
            if (offset + page.size() < matching.size())
                response.headers.append({"X-Next-Token", QByteArray::number(offset + page.size())});
            answer(connection, response);
        });
}

void ControlApi::setTimeout(const QPointer<HttpConnection> &connection, const QString &id,
                            const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    if (!body->value(QStringLiteral("timeout")).isDouble())
        return answer(connection, apiError(400, QStringLiteral("timeout (seconds) is required")));
    const auto seconds = timeoutSeconds(*body);
    if (!seconds)
        return answerError(connection, seconds.error());
    m_context.registry->setEndAt(id, QDateTime::currentDateTimeUtc().addSecs(*seconds));
    answer(connection, emptyResponse(204));
}

void ControlApi::connectTo(const QPointer<HttpConnection> &connection, const QString &id,
                           const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    const E2bSandbox sandbox = *m_context.registry->find(id);
    // connect extends the lifetime, never shortens it (SandboxApi.connect's docs).
    if (body->value(QStringLiteral("timeout")).isDouble()) {
        const auto seconds = timeoutSeconds(*body);
        if (!seconds)
            return answerError(connection, seconds.error());
        const QDateTime end = QDateTime::currentDateTimeUtc().addSecs(*seconds);
        if (end > sandbox.endAt)
            m_context.registry->setEndAt(id, end);
    }
    const QString name = sandbox.airlockName();
    m_context.call(
        QStringLiteral("sandbox.get"), {{QStringLiteral("name"), name}},
        [this, connection, id, name](const Result<QJsonObject> &got) {
            if (!got)
                return answerError(connection, got.error());
            const E2bSandbox *current = m_context.registry->find(id);
            if (!current)
                return answer(connection,
                              apiError(404, QStringLiteral("sandbox %1 not found").arg(id)));
            const auto reply = [this, connection, id](int status) {
                if (const E2bSandbox *now = m_context.registry->find(id))
                    answer(connection, jsonResponse(status, sandboxBody(*now)));
                else
                    answer(connection,
                           apiError(404, QStringLiteral("sandbox %1 not found").arg(id)));
            };
            const QString state = got->value(QStringLiteral("state")).toString();
            if (state == QLatin1String("running") && current->pausedSnapshot.isEmpty())
                return reply(200);
            const auto resumed = [this, connection, id, reply](const Result<void> &result) {
                if (!result)
                    return answerError(connection, result.error());
                if (const E2bSandbox *again = m_context.registry->find(id)) {
                    m_context.registry->setPaused(id, {});
                    // A sandbox whose end passed while it was paused gets the default lifetime.
                    const QDateTime fresh =
                        QDateTime::currentDateTimeUtc().addSecs(kDefaultTimeoutSeconds);
                    if (again->endAt < fresh)
                        m_context.registry->setEndAt(id, fresh);
                }
                reply(201);
            };
            if (!current->pausedSnapshot.isEmpty()) {
                // E2B's resume: the pause snapshot, restored into the stopped sandbox.
                m_context.call(
                    QStringLiteral("snapshot.restore"),
                    {{QStringLiteral("name"), name},
                     {QStringLiteral("snapshot"), current->pausedSnapshot}},
                    [this, name, resumed](const Result<QJsonObject> &restored) {
                        if (!restored)
                            return resumed(std::unexpected(restored.error()));
                        waitForAgent(name, QDateTime::currentDateTimeUtc().addMSecs(kAgentWaitMs),
                                     resumed);
                    },
                    kStartTimeoutMs);
                return;
            }
            if (state == QLatin1String("paused")) {
                m_context.call(QStringLiteral("vm.resume"), {{QStringLiteral("name"), name}},
                               [resumed](const Result<QJsonObject> &result) {
                                   resumed(result ? Result<void>()
                                                  : std::unexpected(result.error()));
                               });
                return;
            }
            if (state == QLatin1String("stopped"))
                return startAndWait(name, resumed);
            answer(connection,
                   apiError(409, QStringLiteral("sandbox is %1; try again").arg(state)));
        });
}

void ControlApi::pause(const QPointer<HttpConnection> &connection, const QString &id)
{
    const E2bSandbox sandbox = *m_context.registry->find(id);
    if (!sandbox.pausedSnapshot.isEmpty())
        return answer(connection,
                      apiError(409, QStringLiteral("sandbox %1 is already paused").arg(id)));
    const QString name = sandbox.airlockName();
    // E2B's pause keeps memory and disk: an Airlock snapshot holds both; then the VMM goes.
    m_context.call(
        QStringLiteral("snapshot.create"),
        {{QStringLiteral("name"), name}, {QStringLiteral("label"), QStringLiteral("e2b pause")}},
        [this, connection, id, name](const Result<QJsonObject> &snapshot) {
            if (!snapshot)
                return answerError(connection, snapshot.error());
            m_context.registry->setPaused(id, snapshot->value(QStringLiteral("id")).toString());
            m_context.call(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), name}},
                           [connection](const Result<QJsonObject> &killed) {
                               if (!killed && killed.error().kind != ErrorKind::InvalidState)
                                   return answerError(connection, killed.error());
                               answer(connection, emptyResponse(204));
                           });
        },
        kStartTimeoutMs);
}

void ControlApi::forkInto(E2bSandbox sandbox, const QString &snapshot, int seconds,
                          const QJsonObject &policy,
                          std::function<void(const Result<E2bSandbox> &)> done)
{
    const QString name = sandbox.airlockName();
    m_context.call(
        QStringLiteral("snapshot.fork"),
        // The new sandbox's own metadata, not that of the snapshot's sandbox.
        {{QStringLiteral("snapshot"), snapshot},
         {QStringLiteral("name"), name},
         {QStringLiteral("labels"), sandbox.metadata}},
        [this, sandbox, name, seconds, policy, done](const Result<QJsonObject> &forked) mutable {
            if (!forked)
                return done(std::unexpected(forked.error()));
            sandbox.image = forked->value(QStringLiteral("image")).toString();
            sandbox.cpuCount = forked->value(QStringLiteral("vcpus")).toInt(1);
            sandbox.memoryMb = forked->value(QStringLiteral("memoryMib")).toInt(256);
            auto ready = [this, sandbox, name, seconds, done]() mutable {
                waitForAgent(name, QDateTime::currentDateTimeUtc().addMSecs(kAgentWaitMs),
                             [this, sandbox, name, seconds, done](const Result<void> &up) mutable {
                                 if (!up) {
                                     m_context.call(
                                         QStringLiteral("sandbox.kill"),
                                         {{QStringLiteral("name"), name}},
                                         [context = m_context, name](const Result<QJsonObject> &) {
                                             context.call(QStringLiteral("sandbox.delete"),
                                                          {{QStringLiteral("name"), name}},
                                                          [](const Result<QJsonObject> &) {});
                                         });
                                     return done(std::unexpected(up.error()));
                                 }
                                 sandbox.startedAt = QDateTime::currentDateTimeUtc();
                                 sandbox.endAt = sandbox.startedAt.addSecs(seconds);
                                 m_context.registry->insert(sandbox);
                                 done(sandbox);
                             });
            };
            if (policy.isEmpty())
                return ready();
            // The fork carries its parent's policy; allowOut replaces it.
            m_context.call(QStringLiteral("policy.set"),
                           {{QStringLiteral("name"), name}, {QStringLiteral("policy"), policy}},
                           [ready, done](const Result<QJsonObject> &set) mutable {
                               if (!set)
                                   return done(std::unexpected(set.error()));
                               ready();
                           });
        },
        kStartTimeoutMs);
}

void ControlApi::createSnapshot(const QPointer<HttpConnection> &connection, const QString &id,
                                const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    const QString label = body->value(QStringLiteral("name")).toString();
    const E2bSandbox sandbox = *m_context.registry->find(id);
    m_context.call(
        QStringLiteral("snapshot.create"),
        {{QStringLiteral("name"), sandbox.airlockName()},
         {QStringLiteral("label"), label.isEmpty() ? QStringLiteral("e2b snapshot") : label}},
        [connection, label](const Result<QJsonObject> &snapshot) {
            if (!snapshot)
                return answerError(connection, snapshot.error());
            QJsonArray names;
            if (!label.isEmpty())
                names.append(label);
            answer(connection,
                   jsonResponse(201,
                                QJsonObject {{QStringLiteral("snapshotID"),
                                              snapshot->value(QStringLiteral("id"))},
                                             {QStringLiteral("names"), names}}));
        },
        kStartTimeoutMs);
}

void ControlApi::metrics(const QPointer<HttpConnection> &connection, const QString &id)
{
    const E2bSandbox sandbox = *m_context.registry->find(id);
    if (!sandbox.pausedSnapshot.isEmpty())
        return answer(connection, jsonResponse(200, QJsonArray()));
    // One shell line, as root: the three sources E2B's envd samples (gopsutil reads the same).
    GuestCommand::run(
        m_context, sandbox.airlockName(),
        {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
         QStringLiteral("cat /proc/stat /proc/meminfo; df -kP / 2>/dev/null; true")},
        [this, connection, id](const Result<QByteArray> &output) {
            if (!output)
                return answerError(connection, output.error());
            if (!m_context.registry->find(id))
                return answer(connection,
                              apiError(404, QStringLiteral("sandbox %1 not found").arg(id)));
            answer(connection, jsonResponse(200, QJsonArray {metricFrom(id, *output)}));
        });
}

QJsonObject ControlApi::metricFrom(const QString &id, const QByteArray &output)
{
    quint64 busy = 0;
    quint64 total = 0;
    int cpus = 0;
    QHash<QByteArray, qint64> memory; // kB
    qint64 diskTotal = 0;
    qint64 diskUsed = 0;
    for (const QByteArray &line : output.split('\n')) {
        const QList<QByteArray> fields = line.simplified().split(' ');
        if (fields.isEmpty() || fields.first().isEmpty())
            continue;
        const QByteArray &key = fields.first();
        if (key == "cpu" && fields.size() >= 5) {
            // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
            for (qsizetype i = 1; i < std::min<qsizetype>(fields.size(), 9); ++i) {
                const quint64 value = fields[i].toULongLong();
                total += value;
                if (i != 4 && i != 5)
                    busy += value;
            }
        } else if (key.startsWith("cpu") && key.size() > 3) {
            ++cpus;
        } else if (key.endsWith(':') && fields.size() >= 2) {
            memory.insert(key.chopped(1), fields[1].toLongLong());
        } else if (fields.size() >= 6 && fields[5] == "/") {
            // df -kP: Filesystem 1024-blocks Used Available Capacity Mounted-on
            diskTotal = fields[1].toLongLong() * 1024;
            diskUsed = fields[2].toLongLong() * 1024;
        }
    }
    const auto previous = m_cpuSamples.value(id, {0, 0});
    m_cpuSamples.insert(id, {busy, total});
    const quint64 spanTotal = total > previous.second ? total - previous.second : total;
    const quint64 spanBusy =
        busy >= previous.first && total > previous.second ? busy - previous.first : busy;
    const double cpuPct = spanTotal > 0 ? 100.0 * double(spanBusy) / double(spanTotal) : 0.0;
    const qint64 memTotal = memory.value("MemTotal") * 1024;
    const qint64 available = memory.value("MemAvailable", memory.value("MemFree")) * 1024;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    return {{QStringLiteral("timestamp"), now.toString(Qt::ISODateWithMs)},
            {QStringLiteral("timestampUnix"), now.toSecsSinceEpoch()},
            {QStringLiteral("cpuCount"), std::max(cpus, 1)},
            {QStringLiteral("cpuUsedPct"), std::round(cpuPct * 100.0) / 100.0},
            {QStringLiteral("memTotal"), memTotal},
            {QStringLiteral("memUsed"), std::max<qint64>(0, memTotal - available)},
            {QStringLiteral("memCache"), (memory.value("Cached") + memory.value("Buffers")) * 1024},
            {QStringLiteral("diskTotal"), diskTotal},
            {QStringLiteral("diskUsed"), diskUsed}};
}

void ControlApi::listSnapshots(const QPointer<HttpConnection> &connection,
                               const HttpRequest &request)
{
    const QString only = request.query.queryItemValue(QStringLiteral("sandboxID"));
    const QString name = request.query.queryItemValue(QStringLiteral("name"), QUrl::FullyDecoded);
    bool limitOk = false;
    int limit = request.query.queryItemValue(QStringLiteral("limit")).toInt(&limitOk);
    if (!limitOk || limit <= 0)
        limit = 100;
    const int offset = request.query.queryItemValue(QStringLiteral("nextToken")).toInt();
    m_context.call(
        QStringLiteral("snapshot.list"), {},
        [this, connection, only, name, limit, offset](const Result<QJsonObject> &listed) {
            if (!listed)
                return answerError(connection, listed.error());
            QHash<QString, QString> mine; // Airlock name → E2B id
            for (const E2bSandbox &sandbox : m_context.registry->all())
                mine.insert(sandbox.airlockName(), sandbox.id);
            QJsonArray matching;
            // Newest first, as E2B lists them.
            const QJsonArray all = listed->value(QStringLiteral("snapshots")).toArray();
            for (qsizetype i = all.size() - 1; i >= 0; --i) {
                const QJsonObject snapshot = all.at(i).toObject();
                const QString of = snapshot.value(QStringLiteral("sandbox")).toString();
                const QString label = snapshot.value(QStringLiteral("label")).toString();
                // createSnapshot's are manual; the pause and fork snapshots are airlock-e2b's
                // own means, and automatic or safety ones Airlock's.
                if (!mine.contains(of) || (!only.isEmpty() && mine.value(of) != only)
                    || snapshot.value(QStringLiteral("kind")).toString() != QLatin1String("manual")
                    || label == QLatin1String("e2b pause") || label == QLatin1String("e2b fork"))
                    continue;
                QJsonArray names;
                if (label != QLatin1String("e2b snapshot") && !label.isEmpty())
                    names.append(label);
                if (!name.isEmpty() && !names.contains(QJsonValue(name)))
                    continue;
                matching.append(QJsonObject {
                    {QStringLiteral("snapshotID"), snapshot.value(QStringLiteral("id"))},
                    {QStringLiteral("names"), names}});
            }
            QJsonArray page;
            for (int i = offset; i < matching.size() && page.size() < limit; ++i)
                page.append(matching[i]);
            HttpResponse response = jsonResponse(200, page);
            if (offset + page.size() < matching.size())
                response.headers.append({"X-Next-Token", QByteArray::number(offset + page.size())});
            answer(connection, response);
        });
}

void ControlApi::updateNetwork(const QPointer<HttpConnection> &connection, const QString &id,
                               const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    if (body->value(QStringLiteral("allow_internet_access")).toBool())
        return answer(connection,
                      apiError(400,
                               QStringLiteral("allowInternetAccess: an Airlock policy is an "
                                              "allowlist of host names; list them in "
                                              "allowOut (docs/policy.md)")));
    QStringList hosts;
    auto policy = policyFromNetwork(QJsonObject {{QStringLiteral("network"), *body}}, &hosts);
    if (!policy)
        return answerError(connection, policy.error());
    // "Fields that are omitted are cleared": no allowOut is no egress at all.
    if (policy->isEmpty())
        policy =
            QJsonObject {{QStringLiteral("version"), 1}, {QStringLiteral("rules"), QJsonArray()}};
    const E2bSandbox sandbox = *m_context.registry->find(id);
    m_context.call(
        QStringLiteral("policy.set"),
        {{QStringLiteral("name"), sandbox.airlockName()}, {QStringLiteral("policy"), *policy}},
        [this, connection, id, hosts](const Result<QJsonObject> &set) {
            if (!set)
                return answerError(connection, set.error());
            if (const E2bSandbox *found = m_context.registry->find(id)) {
                E2bSandbox updated = *found;
                updated.allowOut = hosts;
                m_context.registry->insert(updated);
            }
            answer(connection, emptyResponse(204));
        });
}

void ControlApi::fork(const QPointer<HttpConnection> &connection, const QString &id,
                      const HttpRequest &request)
{
    const auto body = jsonBody(request);
    if (!body)
        return answerError(connection, body.error());
    const auto seconds = timeoutSeconds(*body);
    if (!seconds)
        return answerError(connection, seconds.error());
    const int count = body->value(QStringLiteral("count")).toInt(1);
    if (count < 1 || count > kMaxForks)
        return answer(connection,
                      apiError(400, QStringLiteral("count must be 1..%1").arg(kMaxForks)));
    const E2bSandbox parent = *m_context.registry->find(id);
    m_context.call(
        QStringLiteral("snapshot.create"),
        {{QStringLiteral("name"), parent.airlockName()},
         {QStringLiteral("label"), QStringLiteral("e2b fork")}},
        [this, connection, parent, count, seconds = *seconds](const Result<QJsonObject> &snapshot) {
            if (!snapshot)
                return answerError(connection, snapshot.error());
            const QString snapshotId = snapshot->value(QStringLiteral("id")).toString();
            // One fork after the other; each answer names its sandbox or its error.
            auto results = std::make_shared<QJsonArray>();
            auto next = std::make_shared<std::function<void()>>();
            *next = [this, connection, parent, count, seconds, snapshotId, results,
                     weakNext = std::weak_ptr<std::function<void()>>(next)] {
                const auto self = weakNext.lock();
                if (results->size() == count)
                    return answer(connection, jsonResponse(200, *results));
                E2bSandbox child = parent;
                child.id = SandboxRegistry::newId();
                child.accessToken = ApiKeyStore::randomToken("e2bt_");
                child.pausedSnapshot.clear();
                forkInto(
                    child, snapshotId, seconds, {},
                    [results, self](const Result<E2bSandbox> &forked) {
                        if (forked) {
                            results->append(
                                QJsonObject {{QStringLiteral("sandbox"), sandboxBody(*forked)}});
                        } else {
                            results->append(QJsonObject {
                                {QStringLiteral("error"),
                                 QJsonObject {
                                     {QStringLiteral("code"), httpStatusFor(forked.error().kind)},
                                     {QStringLiteral("message"), forked.error().message}}}});
                        }
                        (*self)();
                    });
            };
            (*next)();
        },
        kStartTimeoutMs);
}

void ControlApi::deleteSnapshot(const QPointer<HttpConnection> &connection, const QString &snapshot)
{
    // Only a snapshot of one of this user's E2B sandboxes.
    m_context.call(
        QStringLiteral("snapshot.list"), {},
        [this, connection, snapshot](const Result<QJsonObject> &listed) {
            if (!listed)
                return answerError(connection, listed.error());
            bool ours = false;
            for (const QJsonValue &value : listed->value(QStringLiteral("snapshots")).toArray()) {
                const QJsonObject object = value.toObject();
                const QString owner = object.value(QStringLiteral("sandbox")).toString();
                ours = ours
                    || (object.value(QStringLiteral("id")).toString() == snapshot
                        && owner.startsWith(QLatin1String("e2b-"))
                        && m_context.registry->find(owner.mid(4)));
            }
            if (!ours)
                return answer(connection,
                              apiError(404, QStringLiteral("snapshot %1 not found").arg(snapshot)));
            m_context.call(QStringLiteral("snapshot.delete"),
                           {{QStringLiteral("snapshot"), snapshot}},
                           [connection](const Result<QJsonObject> &deleted) {
                               if (!deleted)
                                   return answerError(connection, deleted.error());
                               answer(connection, emptyResponse(204));
                           });
        });
}

QJsonObject ControlApi::sandboxBody(const E2bSandbox &sandbox)
{
    return {{QStringLiteral("sandboxID"), sandbox.id},
            {QStringLiteral("templateID"), sandbox.templateId},
            {QStringLiteral("clientID"), QStringLiteral("airlock")},
            {QStringLiteral("envdVersion"), QLatin1String(E2bContext::kEnvdVersion)},
            {QStringLiteral("envdAccessToken"), QString::fromLatin1(sandbox.accessToken)},
            {QStringLiteral("domain"), QJsonValue::Null}};
}

QJsonObject ControlApi::detailBody(const E2bSandbox &sandbox, const QString &state)
{
    QJsonObject detail {
        {QStringLiteral("sandboxID"), sandbox.id},
        {QStringLiteral("templateID"), sandbox.templateId},
        {QStringLiteral("alias"), sandbox.image},
        {QStringLiteral("clientID"), QStringLiteral("airlock")},
        {QStringLiteral("startedAt"), sandbox.startedAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("endAt"), sandbox.endAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("cpuCount"), sandbox.cpuCount},
        {QStringLiteral("memoryMB"), sandbox.memoryMb},
        {QStringLiteral("diskSizeMB"), 0},
        {QStringLiteral("metadata"), sandbox.metadata},
        {QStringLiteral("state"), state},
        {QStringLiteral("envdVersion"), QLatin1String(E2bContext::kEnvdVersion)},
        {QStringLiteral("domain"), QJsonValue::Null}};
    if (!sandbox.allowOut.isEmpty()) {
        detail.insert(QStringLiteral("network"),
                      QJsonObject {{QStringLiteral("allowOut"),
                                    QJsonArray::fromStringList(sandbox.allowOut)}});
    }
    return detail;
}

} // namespace airlock::e2b
