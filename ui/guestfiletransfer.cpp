#include "ui/guestfiletransfer.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QSaveFile>

namespace airlock {

namespace {

QString method(const char *name)
{
    return QString::fromLatin1(name);
}

/// Reads can take long on a busy guest; the agent answers or the helper times out first.
constexpr int kCallTimeoutMs = 60000;

} // namespace

GuestFileTransfer::GuestFileTransfer(HelperClient *client, QString sandbox, Direction direction,
                                     QString hostPath, QString guestPath, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_direction(direction)
    , m_hostPath(std::move(hostPath))
    , m_guestPath(std::move(guestPath))
{ }

GuestFileTransfer::~GuestFileTransfer()
{
    if (m_target)
        m_target->cancelWriting();
}

void GuestFileTransfer::start()
{
    if (m_direction == Direction::Upload) {
        m_source = std::make_unique<QFile>(m_hostPath);
        if (!m_source->open(QIODevice::ReadOnly)) {
            stop({ErrorKind::OperationFailed,
                  tr("cannot open %1: %2").arg(m_hostPath, m_source->errorString())});
            return;
        }
        m_total = m_source->size();
        writeNext();
        return;
    }
    // The size first, for the progress bar (and a folder is refused before a file is made).
    QPointer<GuestFileTransfer> self(this);
    m_client->call(
        method(protocol::method::FilesStat),
        {{QStringLiteral("name"), m_sandbox},
         {QStringLiteral("path"), m_guestPath},
         {QStringLiteral("follow"), true}},
        [self](const Result<QJsonValue> &answer) {
            if (!self || self->m_stopped)
                return;
            if (!answer)
                return self->stop(answer.error());
            const QJsonObject info = answer->toObject();
            const QString type = info.value(QStringLiteral("type")).toString();
            if (type == u"directory")
                return self->stop(
                    {ErrorKind::IsADirectory, tr("%1 is a folder").arg(self->m_guestPath)});
            self->m_total = info.value(QStringLiteral("size")).toInteger();
            self->m_target = std::make_unique<QSaveFile>(self->m_hostPath);
            if (!self->m_target->open(QIODevice::WriteOnly))
                return self->stop({ErrorKind::OperationFailed,
                                   tr("cannot write %1: %2")
                                       .arg(self->m_hostPath, self->m_target->errorString())});
            emit self->progress(0, self->m_total);
            self->readNext();
        },
        kCallTimeoutMs);
}

void GuestFileTransfer::cancel()
{
    m_stopped = true;
    if (m_target)
        m_target->cancelWriting();
    m_target.reset();
    m_source.reset();
}

void GuestFileTransfer::readNext()
{
    QPointer<GuestFileTransfer> self(this);
    m_client->call(
        method(protocol::method::FilesRead),
        {{QStringLiteral("name"), m_sandbox},
         {QStringLiteral("path"), m_guestPath},
         {QStringLiteral("offset"), m_done},
         {QStringLiteral("length"), kChunkBytes}},
        [self](const Result<QJsonValue> &answer) {
            if (!self || self->m_stopped)
                return;
            if (!answer)
                return self->stop(answer.error());
            const QJsonObject result = answer->toObject();
            const QByteArray data =
                QByteArray::fromBase64(result.value(QStringLiteral("data")).toString().toLatin1());
            if (self->m_target->write(data) != data.size())
                return self->stop({ErrorKind::OperationFailed,
                                   tr("cannot write %1: %2")
                                       .arg(self->m_hostPath, self->m_target->errorString())});
            self->m_done += data.size();
            // The file may have grown since the stat: the bar follows what came.
            if (self->m_done > self->m_total)
                self->m_total = self->m_done;
            emit self->progress(self->m_done, self->m_total);
            if (!result.value(QStringLiteral("eof")).toBool() && !data.isEmpty())
                return self->readNext();
            if (!self->m_target->commit())
                return self->stop({ErrorKind::OperationFailed,
                                   tr("cannot write %1: %2")
                                       .arg(self->m_hostPath, self->m_target->errorString())});
            self->m_target.reset();
            self->m_stopped = true;
            emit self->finished();
        },
        kCallTimeoutMs);
}

void GuestFileTransfer::writeNext()
{
    const bool first = m_source->pos() == 0;
    const QByteArray data = m_source->read(kChunkBytes);
    if (data.isEmpty() && !first) {
        if (m_source->error() != QFileDevice::NoError)
            return stop({ErrorKind::OperationFailed,
                         tr("cannot read %1: %2").arg(m_hostPath, m_source->errorString())});
        m_source.reset();
        m_stopped = true;
        emit finished();
        return;
    }
    const bool executable = QFileInfo(m_hostPath).permissions() & QFileDevice::ExeOwner;
    QJsonObject params {{QStringLiteral("name"), m_sandbox},
                        {QStringLiteral("path"), m_guestPath},
                        {QStringLiteral("data"), QString::fromLatin1(data.toBase64())}};
    if (first)
        params.insert(QStringLiteral("mode"), executable ? 0755 : 0644);
    else
        params.insert(QStringLiteral("append"), true);
    QPointer<GuestFileTransfer> self(this);
    const qint64 size = data.size();
    m_client->call(
        method(protocol::method::FilesWrite), params,
        [self, size](const Result<QJsonValue> &answer) {
            if (!self || self->m_stopped)
                return;
            if (!answer)
                return self->stop(answer.error());
            self->m_done += size;
            emit self->progress(self->m_done, self->m_total);
            if (size == 0) { // an empty file: the first call made it
                self->m_stopped = true;
                emit self->finished();
                return;
            }
            self->writeNext();
        },
        kCallTimeoutMs);
}

void GuestFileTransfer::stop(const Error &error)
{
    if (m_stopped)
        return;
    m_stopped = true;
    if (m_target)
        m_target->cancelWriting();
    m_target.reset();
    m_source.reset();
    emit failed(error);
}

} // namespace airlock
