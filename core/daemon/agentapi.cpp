#include "core/daemon/agentapi.h"

#include "core/agent/agentclient.h"
#include "core/agent/agentprocess.h"
#include "core/agent/agentreadstream.h"
#include "core/agent/agentwritestream.h"
#include "core/daemon/agentjson.h"
#include "core/daemon/execsession.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <memory>

namespace airlock {

namespace {

namespace method = protocol::method;
using agent::AgentClient;
using agent::AgentError;
template<typename T>
using AgentResult = agent::AgentResult<T>;

/// A Reply answered exactly once: by its first call, or, when the last copy goes unanswered
/// (the agent client was destroyed with the request in it, which drops its callbacks without
/// calling them), with agent_unavailable.
class OnceReply
{
public:
    explicit OnceReply(RpcServer::Reply reply) : m_state(std::make_shared<State>(std::move(reply)))
    { }
    void operator()(const Result<QJsonValue> &result) const
    {
        if (RpcServer::Reply reply = std::exchange(m_state->reply, nullptr))
            reply(result);
    }

private:
    struct State
    {
        explicit State(RpcServer::Reply r) : reply(std::move(r)) { }
        ~State()
        {
            if (reply)
                reply(fail(ErrorKind::AgentUnavailable,
                           QStringLiteral("the sandbox's agent channel closed")));
        }
        RpcServer::Reply reply;
    };
    std::shared_ptr<State> m_state;
};

Result<QJsonValue> emptyAnswer(const AgentResult<void> &result)
{
    if (!result)
        return std::unexpected(agentjson::toError(result.error()));
    return QJsonValue(QJsonObject());
}

/// A `data` field: base64 of at most `maxBytes`.
Result<QByteArray> dataParam(const QJsonObject &params, qint64 maxBytes)
{
    AIRLOCK_TRY_INIT(text, json::readString(params, QStringLiteral("data"), QString()));
    auto decoded =
        QByteArray::fromBase64Encoding(text->toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || text->size() != text->toLatin1().size())
        return fail(ErrorKind::InvalidParams, QStringLiteral("data is not base64"));
    if (decoded.decoded.size() > maxBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("data holds more than %1 bytes").arg(maxBytes));
    return decoded.decoded;
}

Result<quint32> pidParam(const QJsonObject &params)
{
    AIRLOCK_TRY_INIT(
        pid,
        json::readInteger(params, QStringLiteral("pid"), 1, std::numeric_limits<qint32>::max()));
    return quint32(*pid);
}

} // namespace

AgentApi::AgentApi(RpcServer &server, ClientLookup lookup, QObject *parent)
    : QObject(parent), m_server(server), m_lookup(std::move(lookup))
{
    registerMethods();
}

AgentApi::~AgentApi()
{
    for (const QList<ExecSession *> &sessions : std::as_const(m_sessions))
        qDeleteAll(sessions);
}

int AgentApi::sessionCount() const
{
    int count = 0;
    for (const QList<ExecSession *> &sessions : m_sessions)
        count += int(sessions.size());
    return count;
}

Result<AgentClient *> AgentApi::agentFor(const QJsonObject &params, QString *sandbox)
{
    AIRLOCK_TRY_INIT(name, json::readString(params, QStringLiteral("name")));
    AIRLOCK_TRY(validateName(*name));
    if (sandbox)
        *sandbox = *name;
    return m_lookup(*name);
}

Result<ExecSession *> AgentApi::sessionFor(quint64 client, const QJsonObject &params)
{
    QString sandbox;
    AIRLOCK_TRY_INIT(name, json::readString(params, QStringLiteral("name")));
    AIRLOCK_TRY_INIT(pid, pidParam(params));
    for (ExecSession *session : m_sessions.value(client)) {
        if (session->sandbox() == *name && session->pid() == *pid)
            return session;
    }
    return fail(ErrorKind::NotFound,
                QStringLiteral("this connection follows no process %1 in '%2' (exec.connect)")
                    .arg(*pid)
                    .arg(*name));
}

void AgentApi::registerMethods()
{
    const auto deferred = [this](const char *name,
                                 void (AgentApi::*handler)(const QJsonObject &, RpcServer::Reply)) {
        m_server.addDeferredMethod(
            QString::fromLatin1(name),
            [this, handler](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
                (this->*handler)(params, OnceReply(std::move(reply)));
            });
    };
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecStart),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            startSession(context, params, false, OnceReply(std::move(reply)));
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecConnect),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            startSession(context, params, true, OnceReply(std::move(reply)));
        });
    deferred(method::ExecList, &AgentApi::list);
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecInput),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            auto session = sessionFor(context.clientId, params);
            if (!session)
                return reply(std::unexpected(session.error()));
            auto data = dataParam(params, kMaxInputBytes);
            if (!data)
                return reply(std::unexpected(data.error()));
            auto eof = json::readBool(params, QStringLiteral("eof"), false);
            if (!eof)
                return reply(std::unexpected(eof.error()));
            (*session)->input(*data, *eof, std::move(reply));
        });
    m_server.addMethod(
        QString::fromLatin1(method::ExecSignal),
        [this](const RpcContext &context, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(session, sessionFor(context.clientId, params));
            AIRLOCK_TRY_INIT(signal, json::readInteger(params, QStringLiteral("signal"), 1, 64));
            (*session)->process()->sendSignal(int(*signal));
            return QJsonValue(QJsonObject());
        });
    m_server.addMethod(
        QString::fromLatin1(method::ExecResize),
        [this](const RpcContext &context, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(session, sessionFor(context.clientId, params));
            AIRLOCK_TRY_INIT(rows, json::readInteger(params, QStringLiteral("rows"), 1, 1000));
            AIRLOCK_TRY_INIT(cols, json::readInteger(params, QStringLiteral("cols"), 1, 1000));
            (*session)->process()->resize(quint16(*rows), quint16(*cols));
            return QJsonValue(QJsonObject());
        });
    m_server.addMethod(
        QString::fromLatin1(method::ExecDetach),
        [this](const RpcContext &context, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(session, sessionFor(context.clientId, params));
            (*session)->detach();
            return QJsonValue(QJsonObject());
        });
    deferred(method::FilesStat, &AgentApi::stat);
    deferred(method::FilesList, &AgentApi::listFiles);
    deferred(method::FilesRead, &AgentApi::read);
    deferred(method::FilesWrite, &AgentApi::write);
    deferred(method::FilesMkdir, &AgentApi::mkdir);
    deferred(method::FilesRemove, &AgentApi::remove);
    deferred(method::FilesRename, &AgentApi::rename);
}

void AgentApi::startSession(const RpcContext &context, const QJsonObject &params, bool attach,
                            RpcServer::Reply reply)
{
    QString sandbox;
    auto client = agentFor(params, &sandbox);
    if (!client)
        return reply(std::unexpected(client.error()));
    if (m_sessions.value(context.clientId).size() >= kMaxSessionsPerClient)
        return reply(fail(ErrorKind::Busy,
                          QStringLiteral("this connection follows %1 processes "
                                         "already")
                              .arg(kMaxSessionsPerClient)));
    agent::AgentProcess *process = nullptr;
    bool acceptsInput = true;
    if (attach) {
        auto pid = pidParam(params);
        if (!pid)
            return reply(std::unexpected(pid.error()));
        process = (*client)->attach(*pid);
    } else {
        auto request = agentjson::execRequest(params);
        if (!request)
            return reply(std::unexpected(request.error()));
        acceptsInput = request->stdinOpen || request->pty;
        process = (*client)->exec(*request);
    }
    auto *session =
        new ExecSession(m_server, context.clientId, sandbox, process, acceptsInput, this);
    m_sessions[context.clientId].append(session);
    connect(session, &ExecSession::started, this, [reply](quint32 pid) {
        reply(QJsonValue(QJsonObject {{QStringLiteral("pid"), qint64(pid)}}));
    });
    connect(session, &ExecSession::startFailed, this,
            [reply](const Error &error) { reply(std::unexpected(error)); });
    connect(session, &ExecSession::ended, this, [this, session] { forget(session); });
}

void AgentApi::forget(ExecSession *session)
{
    auto it = m_sessions.find(session->client());
    if (it != m_sessions.end()) {
        it->removeOne(session);
        if (it->isEmpty())
            m_sessions.erase(it);
    }
    session->deleteLater();
}

void AgentApi::list(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    (*client)->listProcesses([reply](const AgentResult<agentwire::ProcessList> &result) {
        if (!result)
            return reply(std::unexpected(agentjson::toError(result.error())));
        QJsonArray processes;
        for (const agentwire::ProcessInfo &info : result->processes) {
            processes.append(QJsonObject {
                {QStringLiteral("pid"), qint64(info.pid)},
                {QStringLiteral("running"), info.running},
                {QStringLiteral("attached"), info.attached},
                {QStringLiteral("pty"), info.pty},
                {QStringLiteral("user"), QString::fromStdString(info.user)},
                {QStringLiteral("command"), QString::fromStdString(info.command)},
            });
        }
        reply(QJsonValue(QJsonObject {{QStringLiteral("processes"), processes}}));
    });
}

void AgentApi::stat(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto follow = json::readBool(params, QStringLiteral("follow"), false);
    if (!follow)
        return reply(std::unexpected(follow.error()));
    (*client)->stat({*path, *follow}, [reply](const AgentResult<agentwire::FileInfo> &result) {
        if (!result)
            return reply(std::unexpected(agentjson::toError(result.error())));
        reply(QJsonValue(agentjson::fileInfo(*result)));
    });
}

void AgentApi::listFiles(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto depth = json::readInteger(params, QStringLiteral("depth"), 1, 64, 1);
    if (!depth)
        return reply(std::unexpected(depth.error()));
    auto maxEntries =
        json::readInteger(params, QStringLiteral("maxEntries"), 1, kMaxListEntries, 1000);
    if (!maxEntries)
        return reply(std::unexpected(maxEntries.error()));
    agentwire::ListRequest request {*path, quint16(*depth), quint32(*maxEntries)};
    (*client)->list(request, [reply](const AgentResult<agentwire::ListResult> &result) {
        if (!result)
            return reply(std::unexpected(agentjson::toError(result.error())));
        QJsonArray entries;
        bool truncated = result->truncated;
        qint64 bytes = 0;
        for (const agentwire::FileInfo &info : result->entries) {
            QJsonObject entry = agentjson::fileInfo(info);
            // A guest may send names up to 4 KiB each: the answer must still fit one message.
            bytes += QJsonDocument(entry).toJson(QJsonDocument::Compact).size() + 1;
            if (bytes > kMaxListAnswerBytes) {
                truncated = true;
                break;
            }
            entries.append(entry);
        }
        reply(QJsonValue(QJsonObject {{QStringLiteral("entries"), entries},
                                      {QStringLiteral("truncated"), truncated}}));
    });
}

void AgentApi::read(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto offset = json::readInteger(params, QStringLiteral("offset"), 0,
                                    std::numeric_limits<qint64>::max(), 0);
    if (!offset)
        return reply(std::unexpected(offset.error()));
    auto length = json::readInteger(params, QStringLiteral("length"), 1, kMaxFileChunkBytes,
                                    kMaxFileChunkBytes);
    if (!length)
        return reply(std::unexpected(length.error()));
    agent::AgentReadStream *stream =
        (*client)->readFile({*path, quint64(*offset), quint64(*length)});
    auto data = std::make_shared<QByteArray>();
    connect(stream, &agent::AgentReadStream::readyRead, stream,
            [stream, data] { data->append(stream->read()); });
    connect(stream, &agent::AgentReadStream::finished, stream,
            [stream, data, reply, length = *length] {
                data->append(stream->read());
                // The guest sends the range that exists: fewer bytes than asked for means the
                // file ends here.
                reply(QJsonValue(QJsonObject {
                    {QStringLiteral("data"), QString::fromLatin1(data->toBase64())},
                    {QStringLiteral("eof"), data->size() < length},
                }));
                stream->deleteLater();
            });
    connect(stream, &agent::AgentStream::failed, stream, [stream, reply](const AgentError &error) {
        reply(std::unexpected(agentjson::toError(error)));
        stream->deleteLater();
    });
}

void AgentApi::write(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto data = dataParam(params, kMaxFileChunkBytes);
    if (!data)
        return reply(std::unexpected(data.error()));
    agentwire::WriteRequest request;
    request.path = *path;
    const auto flag = [&params](const char *key, bool &out) -> Result<void> {
        AIRLOCK_TRY_INIT(value, json::readBool(params, QString::fromLatin1(key), false));
        out = *value;
        return {};
    };
    auto mode = json::readInteger(params, QStringLiteral("mode"), 0, 07777, 0644);
    if (!mode)
        return reply(std::unexpected(mode.error()));
    request.mode = quint32(*mode);
    for (auto result : {flag("createParents", request.createParents),
                        flag("append", request.append), flag("exclusive", request.exclusive)}) {
        if (!result)
            return reply(std::unexpected(result.error()));
    }
    agent::AgentWriteStream *stream = (*client)->writeFile(request);
    auto rest = std::make_shared<QByteArray>(*data);
    const qint64 total = data->size();
    const auto feed = [stream, rest] {
        while (!rest->isEmpty()) {
            const qint64 taken = stream->write(*rest);
            if (taken == 0)
                return;
            rest->remove(0, taken);
        }
        stream->finish();
    };
    feed();
    connect(stream, &agent::AgentWriteStream::bytesWritten, stream, feed);
    connect(stream, &agent::AgentWriteStream::finished, stream, [stream, reply, total] {
        reply(QJsonValue(QJsonObject {{QStringLiteral("written"), total}}));
        stream->deleteLater();
    });
    connect(stream, &agent::AgentStream::failed, stream, [stream, reply](const AgentError &error) {
        reply(std::unexpected(agentjson::toError(error)));
        stream->deleteLater();
    });
}

void AgentApi::mkdir(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto parents = json::readBool(params, QStringLiteral("parents"), false);
    if (!parents)
        return reply(std::unexpected(parents.error()));
    auto mode = json::readInteger(params, QStringLiteral("mode"), 0, 07777, 0755);
    if (!mode)
        return reply(std::unexpected(mode.error()));
    agentwire::MkdirRequest request;
    request.path = *path;
    request.parents = *parents;
    request.mode = quint32(*mode);
    (*client)->mkdir(request,
                     [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
}

void AgentApi::remove(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto path = agentjson::guestPath(params, QStringLiteral("path"));
    if (!path)
        return reply(std::unexpected(path.error()));
    auto recursive = json::readBool(params, QStringLiteral("recursive"), false);
    if (!recursive)
        return reply(std::unexpected(recursive.error()));
    (*client)->remove({*path, *recursive},
                      [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
}

void AgentApi::rename(const QJsonObject &params, RpcServer::Reply reply)
{
    auto client = agentFor(params);
    if (!client)
        return reply(std::unexpected(client.error()));
    auto from = agentjson::guestPath(params, QStringLiteral("from"));
    if (!from)
        return reply(std::unexpected(from.error()));
    auto to = agentjson::guestPath(params, QStringLiteral("to"));
    if (!to)
        return reply(std::unexpected(to.error()));
    auto noReplace = json::readBool(params, QStringLiteral("noReplace"), false);
    if (!noReplace)
        return reply(std::unexpected(noReplace.error()));
    (*client)->rename({*from, *to, *noReplace},
                      [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
}

} // namespace airlock
