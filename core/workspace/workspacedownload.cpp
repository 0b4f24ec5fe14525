#include "core/workspace/workspacedownload.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonObject>
#include <QPointer>

namespace airlock::workspace {

namespace {

namespace method = protocol::method;
constexpr qint64 kChunkBytes = 512 * 1024;
constexpr int kMaxInFlight = 2;
/// A read waits for the guest, which a busy TCG guest may keep a while.
constexpr int kCallTimeoutMs = 120000;

} // namespace

WorkspaceDownload::WorkspaceDownload(HelperClient *client, QString sandbox, QString guestFolder,
                                     Consumer consumer, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_guestFolder(std::move(guestFolder))
    , m_consumer(std::move(consumer))
{ }

WorkspaceDownload::~WorkspaceDownload()
{
    if (!m_stopped)
        cancel();
}

void WorkspaceDownload::start()
{
    QPointer<WorkspaceDownload> self(this);
    m_client->call(QString::fromLatin1(method::WorkspacePullStart),
                   {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("path"), m_guestFolder}},
                   [self](const Result<QJsonValue> &answer) {
                       if (!self || self->m_stopped)
                           return;
                       if (!answer)
                           return self->stop(answer.error());
                       self->m_transfer =
                           answer->toObject().value(QStringLiteral("transfer")).toInteger();
                       self->readMore();
                   });
}

void WorkspaceDownload::cancel()
{
    if (m_stopped)
        return;
    m_stopped = true;
    if (m_transfer > 0 && !m_eof)
        m_client->call(QString::fromLatin1(method::WorkspaceCancel),
                       {{QStringLiteral("transfer"), m_transfer}},
                       [](const Result<QJsonValue> &) {});
}

void WorkspaceDownload::readMore()
{
    QPointer<WorkspaceDownload> self(this);
    while (!m_stopped && !m_eof && m_inFlight < kMaxInFlight) {
        ++m_inFlight;
        m_client->call(
            QString::fromLatin1(method::WorkspacePullRead),
            {{QStringLiteral("transfer"), m_transfer}, {QStringLiteral("length"), kChunkBytes}},
            [self](const Result<QJsonValue> &answer) {
                if (!self || self->m_stopped)
                    return;
                --self->m_inFlight;
                // A read that was in flight when the stream ended is answered "ended".
                if (self->m_eof)
                    return;
                if (!answer)
                    return self->stop(answer.error());
                const QJsonObject object = answer->toObject();
                const QByteArray data = QByteArray::fromBase64(
                    object.value(QStringLiteral("data")).toString().toLatin1());
                self->m_eof = object.value(QStringLiteral("eof")).toBool();
                if (!data.isEmpty()) {
                    if (const auto why = self->m_consumer(data))
                        return self->stop(Error {ErrorKind::OperationFailed, *why});
                    self->m_received += quint64(data.size());
                    emit self->progress(self->m_received);
                }
                if (self->m_eof) {
                    self->m_stopped = true;
                    emit self->finished();
                    return;
                }
                self->readMore();
            },
            kCallTimeoutMs);
    }
}

void WorkspaceDownload::stop(const Error &error)
{
    if (m_stopped)
        return;
    cancel();
    emit failed(error);
}

} // namespace airlock::workspace
