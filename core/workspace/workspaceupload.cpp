#include "core/workspace/workspaceupload.h"

#include "core/agentwire/archivewalker.h"
#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonArray>
#include <QPointer>

namespace airlock::workspace {

namespace {

namespace method = protocol::method;
constexpr qsizetype kChunkBytes = 512 * 1024;
constexpr int kMaxInFlight = 2;
/// A chunk waits for the guest's credit, which a busy TCG guest may take a while to give.
constexpr int kCallTimeoutMs = 120000;

} // namespace

WorkspaceUpload::WorkspaceUpload(HelperClient *client, QString sandbox, QString hostFolder,
                                 QString guestFolder, QString guestUser, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_hostFolder(std::move(hostFolder))
    , m_guestFolder(std::move(guestFolder))
    , m_guestUser(std::move(guestUser))
{ }

WorkspaceUpload::~WorkspaceUpload()
{
    if (!m_stopped)
        cancel();
}

void WorkspaceUpload::start()
{
    auto walker = agentwire::ArchiveWalker::open(m_hostFolder.toStdString());
    if (!walker) {
        const QString why = QString::fromStdString(walker.error().message);
        QMetaObject::invokeMethod(
            this,
            [this, why] {
                stop(Error {ErrorKind::InvalidParams, why});
            },
            Qt::QueuedConnection);
        return;
    }
    m_walker = std::move(*walker);
    QPointer<WorkspaceUpload> self(this);
    m_client->call(QString::fromLatin1(method::WorkspacePushStart),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("path"), m_guestFolder},
                    {QStringLiteral("user"), m_guestUser}},
                   [self](const Result<QJsonValue> &answer) {
                       if (!self || self->m_stopped)
                           return;
                       if (!answer)
                           return self->stop(answer.error());
                       self->m_transfer =
                           answer->toObject().value(QStringLiteral("transfer")).toInteger();
                       self->sendMore();
                   });
}

void WorkspaceUpload::cancel()
{
    if (m_stopped)
        return;
    m_stopped = true;
    if (m_transfer > 0)
        m_client->call(QString::fromLatin1(method::WorkspaceCancel),
                       {{QStringLiteral("transfer"), m_transfer}},
                       [](const Result<QJsonValue> &) {});
}

void WorkspaceUpload::sendMore()
{
    QPointer<WorkspaceUpload> self(this);
    while (!m_stopped && !m_produced && m_inFlight < kMaxInFlight) {
        agentwire::Bytes chunk;
        auto more = m_walker->produce(chunk, kChunkBytes);
        if (!more)
            return stop(
                Error {ErrorKind::OperationFailed,
                       QStringLiteral("cannot read %1: %2")
                           .arg(m_hostFolder, QString::fromStdString(more.error().message))});
        m_produced = !*more;
        const QByteArray data(reinterpret_cast<const char *>(chunk.data()),
                              qsizetype(chunk.size()));
        ++m_inFlight;
        m_client->call(
            QString::fromLatin1(method::WorkspacePushData),
            {{QStringLiteral("transfer"), m_transfer},
             {QStringLiteral("data"), QString::fromLatin1(data.toBase64())}},
            [self, size = quint64(data.size())](const Result<QJsonValue> &answer) {
                if (!self || self->m_stopped)
                    return;
                --self->m_inFlight;
                if (!answer)
                    return self->stop(answer.error());
                self->m_sent += size;
                emit self->progress(self->m_sent);
                self->sendMore();
            },
            kCallTimeoutMs);
    }
    if (!m_stopped && m_produced && m_inFlight == 0)
        finish();
}

void WorkspaceUpload::finish()
{
    QPointer<WorkspaceUpload> self(this);
    m_client->call(
        QString::fromLatin1(method::WorkspacePushFinish),
        {{QStringLiteral("transfer"), m_transfer}},
        [self](const Result<QJsonValue> &answer) {
            if (!self || self->m_stopped)
                return;
            if (!answer)
                return self->stop(answer.error());
            self->m_stopped = true;
            const QJsonObject object = answer->toObject();
            PushResult result;
            result.entries = quint64(object.value(QStringLiteral("entries")).toInteger());
            result.bytes = quint64(object.value(QStringLiteral("bytes")).toInteger());
            result.refusedCount = quint64(object.value(QStringLiteral("refusedCount")).toInteger());
            for (const QJsonValue &refusal : object.value(QStringLiteral("refused")).toArray())
                result.refused.append({refusal[QStringLiteral("path")].toString(),
                                       refusal[QStringLiteral("reason")].toString()});
            emit self->finished(result);
        },
        kCallTimeoutMs);
}

void WorkspaceUpload::stop(const Error &error)
{
    if (m_stopped)
        return;
    cancel();
    emit failed(error);
}

} // namespace airlock::workspace
