#include "core/daemon/workspaceapi.h"

#include "core/agent/agentclient.h"
#include "core/daemon/agentjson.h"
#include "core/daemon/oncereply.h"
#include "core/daemon/workspacepullstream.h"
#include "core/daemon/workspacepushstream.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <limits>

namespace airlock {

namespace {

namespace method = protocol::method;

const QString kDefaultFolder = QStringLiteral("/workspace");

/// `path` with the workspace default, checked as a guest path.
Result<std::string> folderParam(const QJsonObject &params)
{
    if (!params.contains(QStringLiteral("path")))
        return kDefaultFolder.toStdString();
    return agentjson::guestPath(params, QStringLiteral("path"));
}

} // namespace

WorkspaceApi::WorkspaceApi(RpcServer &server, AgentApi::ClientLookup lookup, QObject *parent)
    : QObject(parent), m_server(server), m_lookup(std::move(lookup))
{
    registerMethods();
    connect(&m_server, &RpcServer::clientDisconnected, this, [this](quint64 client) {
        // Deleting a stream cancels it in the guest.
        qDeleteAll(m_transfers.take(client));
    });
}

WorkspaceApi::~WorkspaceApi()
{
    for (const auto &transfers : std::as_const(m_transfers))
        qDeleteAll(transfers);
}

int WorkspaceApi::transferCount() const
{
    int count = 0;
    for (const auto &transfers : m_transfers)
        count += int(transfers.size());
    return count;
}

void WorkspaceApi::registerMethods()
{
    m_server.addMethod(QString::fromLatin1(method::WorkspacePushStart),
                       [this](const RpcContext &context, const QJsonObject &params) {
                           return start(context.clientId, params, true);
                       });
    m_server.addMethod(QString::fromLatin1(method::WorkspacePullStart),
                       [this](const RpcContext &context, const QJsonObject &params) {
                           return start(context.clientId, params, false);
                       });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::WorkspacePushData),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            const auto queued = [&]() -> Result<void> {
                AIRLOCK_TRY_INIT(push, transferOf<WorkspacePushStream>(context.clientId, params));
                AIRLOCK_TRY_INIT(
                    data, agentjson::base64Param(params, QStringLiteral("data"), kMaxChunkBytes));
                return (*push)->data(*data, once);
            }();
            if (!queued)
                once(std::unexpected(queued.error()));
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::WorkspacePushFinish),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            const auto queued = [&]() -> Result<void> {
                AIRLOCK_TRY_INIT(push, transferOf<WorkspacePushStream>(context.clientId, params));
                return (*push)->finish(once);
            }();
            if (!queued)
                once(std::unexpected(queued.error()));
        });
    m_server.addDeferredMethod(
        QString::fromLatin1(method::WorkspacePullRead),
        [this](const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply) {
            const OnceReply once(std::move(reply));
            const auto queued = [&]() -> Result<void> {
                AIRLOCK_TRY_INIT(pull, transferOf<WorkspacePullStream>(context.clientId, params));
                AIRLOCK_TRY_INIT(length,
                                 json::readInteger(params, QStringLiteral("length"), 1,
                                                   kMaxChunkBytes, kMaxChunkBytes));
                return (*pull)->read(*length, once);
            }();
            if (!queued)
                once(std::unexpected(queued.error()));
        });
    m_server.addMethod(
        QString::fromLatin1(method::WorkspaceCancel),
        [this](const RpcContext &context, const QJsonObject &params) -> Result<QJsonValue> {
            AIRLOCK_TRY_INIT(id,
                             json::readInteger(params, QStringLiteral("transfer"), 1,
                                               std::numeric_limits<qint64>::max()));
            QObject *transfer = m_transfers[context.clientId].take(*id);
            if (!transfer)
                return fail(ErrorKind::NotFound,
                            QStringLiteral("no transfer %1 on this connection").arg(*id));
            transfer->deleteLater();
            return QJsonValue(QJsonObject());
        });
}

Result<QJsonValue> WorkspaceApi::start(quint64 client, const QJsonObject &params, bool push)
{
    AIRLOCK_TRY_INIT(name, json::readString(params, QStringLiteral("name")));
    AIRLOCK_TRY(validateName(*name));
    AIRLOCK_TRY_INIT(folder, folderParam(params));
    AIRLOCK_TRY_INIT(user,
                     json::readString(params, QStringLiteral("user"), QStringLiteral("agent")));
    QHash<qint64, QObject *> &transfers = m_transfers[client];
    if (transfers.size() >= kMaxTransfersPerClient)
        return fail(ErrorKind::Busy,
                    QStringLiteral("this connection has %1 workspace transfers open already")
                        .arg(kMaxTransfersPerClient));
    AIRLOCK_TRY_INIT(agent, m_lookup(*name));
    const qint64 id = m_nextId++;
    QObject *transfer = nullptr;
    if (push) {
        const agentwire::ArchiveInRequest request {*folder, user->toStdString()};
        if (const auto invalid = request.validate())
            return fail(ErrorKind::InvalidParams, QString::fromStdString(*invalid));
        auto *stream = new WorkspacePushStream((*agent)->archiveIn(request), this);
        connect(stream, &WorkspacePushStream::ended, this,
                [this, client, id] { forget(client, id); });
        transfer = stream;
    } else {
        auto *stream = new WorkspacePullStream((*agent)->archiveOut({*folder}), this);
        connect(stream, &WorkspacePullStream::ended, this,
                [this, client, id] { forget(client, id); });
        transfer = stream;
    }
    transfers.insert(id, transfer);
    return QJsonValue(QJsonObject {{QStringLiteral("transfer"), id}});
}

template<typename Stream>
Result<Stream *> WorkspaceApi::transferOf(quint64 client, const QJsonObject &params)
{
    AIRLOCK_TRY_INIT(id,
                     json::readInteger(params, QStringLiteral("transfer"), 1,
                                       std::numeric_limits<qint64>::max()));
    if (auto *stream = qobject_cast<Stream *>(m_transfers.value(client).value(*id)))
        return stream;
    return fail(ErrorKind::NotFound,
                QStringLiteral("no %1 transfer %2 on this connection (workspace.%1Start)")
                    .arg(std::is_same_v<Stream, WorkspacePushStream> ? QStringLiteral("push")
                                                                     : QStringLiteral("pull"))
                    .arg(*id));
}

void WorkspaceApi::forget(quint64 client, qint64 id)
{
    auto found = m_transfers.find(client);
    if (found == m_transfers.end())
        return;
    if (QObject *transfer = found->take(id))
        transfer->deleteLater();
    if (found->isEmpty())
        m_transfers.erase(found);
}

} // namespace airlock
