#include "core/e2b/controlapi.h"

#include "core/e2b/apierror.h"
#include "core/e2b/apikeystore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>

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
    const QJsonObject network = body.value(QStringLiteral("network")).toObject();
    if (!network.value(QStringLiteral("allowOut")).toArray().isEmpty()
        || !network.value(QStringLiteral("denyOut")).toArray().isEmpty()
        || network.contains(QStringLiteral("rules")))
        return QStringLiteral("network rules are not mapped onto Airlock policies yet; the sandbox "
                              "gets Airlock's deny-all policy. Set its policy with `airlockctl "
                              "policy set` and give credentials as secret bindings (docs/e2b.md)");
    if (body.value(QStringLiteral("autoPause")).toBool())
        return QStringLiteral("autoPause is not supported by airlock-e2b yet");
    if (!body.value(QStringLiteral("volumeMounts")).toArray().isEmpty())
        return QStringLiteral("volumeMounts are not supported by airlock-e2b");
    if (body.contains(QStringLiteral("mcp")) && !body.value(QStringLiteral("mcp")).isNull())
        return QStringLiteral("mcp is not supported by airlock-e2b");
    return {};
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
        || request.path.startsWith(QStringLiteral("/v2/sandboxes"));
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

    E2bSandbox sandbox;
    sandbox.id = SandboxRegistry::newId();
    sandbox.templateId = templateId;
    // E2B's stock template is `base`; Airlock's stock image is `default`.
    sandbox.image = templateId == QLatin1String("base") ? QStringLiteral("default") : templateId;
    sandbox.metadata = *metadata;
    sandbox.envVars = *envVars;
    sandbox.accessToken = ApiKeyStore::randomToken("e2bt_");
    const QString name = sandbox.airlockName();
    m_context.call(
        QStringLiteral("sandbox.create"),
        {{QStringLiteral("name"), name}, {QStringLiteral("image"), sandbox.image}},
        [this, connection, sandbox, name,
         seconds = *timeout](const Result<QJsonObject> &created) mutable {
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
            startAndWait(
                name,
                [this, connection, sandbox, name, seconds](const Result<void> &started) mutable {
                    if (!started) {
                        // Leave nothing half made behind.
                        m_context.call(QStringLiteral("sandbox.kill"),
                                       {{QStringLiteral("name"), name}},
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
        });
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
            answer(connection,
                   jsonResponse(200,
                                detailBody(sandbox,
                                           state == QLatin1String("running")
                                               ? QStringLiteral("running")
                                               : QStringLiteral("paused"))));
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
                const QString state = *it == QLatin1String("running") ? QStringLiteral("running")
                                                                      : QStringLiteral("paused");
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
            const auto reply = [this, connection, id](int status) {
                if (const E2bSandbox *current = m_context.registry->find(id))
                    answer(connection, jsonResponse(status, sandboxBody(*current)));
                else
                    answer(connection,
                           apiError(404, QStringLiteral("sandbox %1 not found").arg(id)));
            };
            const QString state = got->value(QStringLiteral("state")).toString();
            if (state == QLatin1String("running"))
                return reply(200);
            const auto resumed = [connection, reply](const Result<void> &result) {
                if (!result)
                    return answerError(connection, result.error());
                reply(201);
            };
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
    return {{QStringLiteral("sandboxID"), sandbox.id},
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
}

} // namespace airlock::e2b
