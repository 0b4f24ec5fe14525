#include "core/daemon/agentapi.h"

#include "core/agent/agentclient.h"
#include "core/agent/agentprocess.h"
#include "core/agent/agentreadstream.h"
#include "core/agent/agentwritestream.h"
#include "core/daemon/agentjson.h"
#include "core/daemon/execsession.h"
#include "core/daemon/oncereply.h"
#include "core/daemon/watchsession.h"
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
using agent::AgentProcess;
using agent::AgentStream;
template<typename T>
using AgentResult = agent::AgentResult<T>;

Result<QJsonValue> emptyAnswer(const AgentResult<void> &result)
{
    if (!result)
        return std::unexpected(agentjson::toError(result.error()));
    return QJsonValue(QJsonObject());
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
    for (const QList<WatchSession *> &watches : std::as_const(m_watches))
        qDeleteAll(watches);
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
                                 Result<void> (AgentApi::*handler)(const QJsonObject &,
                                                                   const RpcServer::Reply &)) {
        m_server.addDeferredMethod(
            QString::fromLatin1(name),
            [this, handler](const RpcContext &, const QJsonObject &params, RpcServer::Reply reply) {
                // A handler's own error (a bad parameter, no agent) is the answer too.
                const OnceReply once(std::move(reply));
                if (auto started = (this->*handler)(params, once); !started)
                    once(std::unexpected(started.error()));
            });
    };
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecStart),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            if (auto started = startSession(context, params, false, once); !started)
                once(std::unexpected(started.error()));
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecConnect),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            if (auto started = startSession(context, params, true, once); !started)
                once(std::unexpected(started.error()));
        });
    deferred(method::ExecList, &AgentApi::list);
    deferred(method::ConsoleResize, &AgentApi::consoleResize);
    m_server.addDeferredMethod(
        QString::fromLatin1(method::ExecInput),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const auto queued = [&]() -> Result<void> {
                AIRLOCK_TRY_INIT(session, sessionFor(context.clientId, params));
                AIRLOCK_TRY_INIT(
                    data, agentjson::base64Param(params, QStringLiteral("data"), kMaxInputBytes));
                AIRLOCK_TRY_INIT(eof, json::readBool(params, QStringLiteral("eof"), false));
                (*session)->input(*data, *eof, reply); // answers once the guest took it
                return {};
            }();
            if (!queued)
                reply(std::unexpected(queued.error()));
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
    m_server.addDeferredMethod(
        QString::fromLatin1(method::FilesWatch),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            if (auto started = watch(context, params, once); !started)
                once(std::unexpected(started.error()));
        });
    m_server.addMethod(QString::fromLatin1(method::FilesUnwatch),
                       [this](const RpcContext &context, const QJsonObject &params) {
                           return unwatch(context, params);
                       });
}

Result<void> AgentApi::watch(const RpcContext &context, const QJsonObject &params,
                             const RpcServer::Reply &reply)
{
    QString sandbox;
    AIRLOCK_TRY_INIT(client, agentFor(params, &sandbox));
    AIRLOCK_TRY_INIT(path, json::readString(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(recursive, json::readBool(params, QStringLiteral("recursive"), false));
    if (m_watches.value(context.clientId).size() >= kMaxWatchesPerClient)
        return fail(
            ErrorKind::Busy,
            QStringLiteral("this connection watches %1 folders already").arg(kMaxWatchesPerClient));
    agentwire::WatchRequest request {path->toStdString(), *recursive};
    if (const auto why = request.validate())
        return fail(ErrorKind::InvalidParams, QString::fromStdString(*why));
    auto *session = new WatchSession(m_server, context.clientId, sandbox, m_nextWatch++,
                                     (*client)->watch(request), this);
    m_watches[context.clientId].append(session);
    connect(session, &WatchSession::started, this, [reply, session] {
        reply(QJsonValue(QJsonObject {{QStringLiteral("watch"), qint64(session->id())}}));
    });
    connect(session, &WatchSession::startFailed, this,
            [reply](const Error &error) { reply(std::unexpected(error)); });
    connect(session, &WatchSession::ended, this, [this, session] { forget(session); });
    return {};
}

Result<QJsonValue> AgentApi::unwatch(const RpcContext &context, const QJsonObject &params)
{
    AIRLOCK_TRY_INIT(name, json::readString(params, QStringLiteral("name")));
    AIRLOCK_TRY_INIT(
        id,
        json::readInteger(params, QStringLiteral("watch"), 1, std::numeric_limits<qint64>::max()));
    for (WatchSession *session : m_watches.value(context.clientId)) {
        if (session->sandbox() == *name && session->id() == quint64(*id)) {
            session->stop();
            return QJsonValue(QJsonObject());
        }
    }
    return fail(ErrorKind::NotFound,
                QStringLiteral("this connection has no watch %1 in '%2'").arg(*id).arg(*name));
}

void AgentApi::forget(WatchSession *session)
{
    auto it = m_watches.find(session->client());
    if (it != m_watches.end()) {
        it->removeOne(session);
        if (it->isEmpty())
            m_watches.erase(it);
    }
    session->deleteLater();
}

Result<void> AgentApi::startSession(const RpcContext &context, const QJsonObject &params,
                                    bool attach, const RpcServer::Reply &reply)
{
    QString sandbox;
    AIRLOCK_TRY_INIT(client, agentFor(params, &sandbox));
    if (m_sessions.value(context.clientId).size() >= kMaxSessionsPerClient)
        return fail(ErrorKind::Busy,
                    QStringLiteral("this connection follows %1 processes already")
                        .arg(kMaxSessionsPerClient));
    agent::AgentProcess *process = nullptr;
    bool acceptsInput = true;
    if (attach) {
        AIRLOCK_TRY_INIT(pid, pidParam(params));
        process = (*client)->attach(*pid);
    } else {
        AIRLOCK_TRY_INIT(request, agentjson::execRequest(params));
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
    return {};
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

Result<void> AgentApi::consoleResize(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(rows, json::readInteger(params, QStringLiteral("rows"), 1, 1000));
    AIRLOCK_TRY_INIT(cols, json::readInteger(params, QStringLiteral("cols"), 1, 1000));
    AIRLOCK_TRY_INIT(client, agentFor(params));
    // The serial console is a tty like any other: TIOCSWINSZ on it (what stty does) sets the
    // size its shell reads and sends that shell SIGWINCH. /dev/console opens the tty of the
    // kernel's console= device (ttyS0), whatever it is named. No new agent request needed.
    agentwire::ExecRequest request;
    request.argv = {
        "stty", "-F", "/dev/console", "rows", std::to_string(*rows), "cols", std::to_string(*cols)};
    request.timeoutMs = 10000;
    AgentProcess *process = (*client)->exec(request);
    const OnceReply once(reply);
    connect(process, &AgentStream::failed, this, [process, once](const AgentError &error) {
        once(std::unexpected(agentjson::toError(error)));
        process->deleteLater();
    });
    connect(process, &AgentProcess::finished, this,
            [process, once](const agentwire::ExitStatus &status) {
                const QByteArray why = process->readStderr(4096).trimmed();
                process->deleteLater();
                if (status.signaled || status.value != 0)
                    return once(std::unexpected(
                        Error {ErrorKind::OperationFailed,
                               QStringLiteral("stty in the guest failed: %1")
                                   .arg(why.isEmpty() ? QStringLiteral("exit %1").arg(status.value)
                                                      : QString::fromUtf8(why))}));
                once(QJsonValue(QJsonObject()));
            });
    // Output must be taken for the process to finish (credit); there is little of it.
    connect(process, &AgentProcess::readyReadStdout, process, [process] { process->readStdout(); });
    return {};
}

Result<void> AgentApi::list(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
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
    return {};
}

Result<void> AgentApi::stat(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(follow, json::readBool(params, QStringLiteral("follow"), false));
    (*client)->stat({*path, *follow}, [reply](const AgentResult<agentwire::FileInfo> &result) {
        if (!result)
            return reply(std::unexpected(agentjson::toError(result.error())));
        reply(QJsonValue(agentjson::fileInfo(*result)));
    });
    return {};
}

Result<void> AgentApi::listFiles(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(depth, json::readInteger(params, QStringLiteral("depth"), 1, 64, 1));
    AIRLOCK_TRY_INIT(
        maxEntries,
        json::readInteger(params, QStringLiteral("maxEntries"), 1, kMaxListEntries, 1000));
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
    return {};
}

Result<void> AgentApi::read(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(offset,
                     json::readInteger(params, QStringLiteral("offset"), 0,
                                       std::numeric_limits<qint64>::max(), 0));
    AIRLOCK_TRY_INIT(length,
                     json::readInteger(params, QStringLiteral("length"), 1, kMaxFileChunkBytes,
                                       kMaxFileChunkBytes));
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
    return {};
}

Result<void> AgentApi::write(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(data,
                     agentjson::base64Param(params, QStringLiteral("data"), kMaxFileChunkBytes));
    agentwire::WriteRequest request;
    request.path = *path;
    const auto flag = [&params](const char *key, bool &out) -> Result<void> {
        AIRLOCK_TRY_INIT(value, json::readBool(params, QString::fromLatin1(key), false));
        out = *value;
        return {};
    };
    AIRLOCK_TRY_INIT(mode, json::readInteger(params, QStringLiteral("mode"), 0, 07777, 0644));
    request.mode = quint32(*mode);
    for (auto result : {flag("createParents", request.createParents),
                        flag("append", request.append), flag("exclusive", request.exclusive)}) {
        AIRLOCK_TRY(result);
    }
    agent::AgentWriteStream *stream = (*client)->writeFile(request);
    const qint64 total = data->size();
    stream->writeAllAndFinish(*data);
    connect(stream, &agent::AgentWriteStream::finished, stream, [stream, reply, total] {
        reply(QJsonValue(QJsonObject {{QStringLiteral("written"), total}}));
        stream->deleteLater();
    });
    connect(stream, &agent::AgentStream::failed, stream, [stream, reply](const AgentError &error) {
        reply(std::unexpected(agentjson::toError(error)));
        stream->deleteLater();
    });
    return {};
}

Result<void> AgentApi::mkdir(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(parents, json::readBool(params, QStringLiteral("parents"), false));
    AIRLOCK_TRY_INIT(mode, json::readInteger(params, QStringLiteral("mode"), 0, 07777, 0755));
    agentwire::MkdirRequest request;
    request.path = *path;
    request.parents = *parents;
    request.mode = quint32(*mode);
    (*client)->mkdir(request,
                     [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
    return {};
}

Result<void> AgentApi::remove(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(path, agentjson::guestPath(params, QStringLiteral("path")));
    AIRLOCK_TRY_INIT(recursive, json::readBool(params, QStringLiteral("recursive"), false));
    (*client)->remove({*path, *recursive},
                      [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
    return {};
}

Result<void> AgentApi::rename(const QJsonObject &params, const RpcServer::Reply &reply)
{
    AIRLOCK_TRY_INIT(client, agentFor(params));
    AIRLOCK_TRY_INIT(from, agentjson::guestPath(params, QStringLiteral("from")));
    AIRLOCK_TRY_INIT(to, agentjson::guestPath(params, QStringLiteral("to")));
    AIRLOCK_TRY_INIT(noReplace, json::readBool(params, QStringLiteral("noReplace"), false));
    (*client)->rename({*from, *to, *noReplace},
                      [reply](const AgentResult<void> &result) { reply(emptyAnswer(result)); });
    return {};
}

} // namespace airlock
