#include "core/client/consolestream.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonValue>
#include <QPointer>

namespace airlock {

namespace {

const QString kName = QStringLiteral("name");
const QString kData = QStringLiteral("data");
const QString kSeq = QStringLiteral("seq");

} // namespace

ConsoleStream::ConsoleStream(HelperClient *client, const QString &sandbox, QObject *parent)
    : QObject(parent), m_client(client), m_sandbox(sandbox)
{
    connect(m_client, &HelperClient::notificationReceived, this, &ConsoleStream::onNotification);
    connect(m_client, &HelperClient::ready, this, [this] {
        // A new connection (e.g. the helper restarted) has no attachment: make it again.
        if (m_wanted)
            sendAttach();
    });
    connect(m_client, &HelperClient::connectionLost, this, [this] {
        m_attached = false;
        m_attachPending = false;
        m_early.clear();
    });
}

ConsoleStream::~ConsoleStream() = default;

void ConsoleStream::attach()
{
    m_wanted = true;
    if (m_client->state() != HelperClient::State::Disconnected)
        sendAttach();
}

void ConsoleStream::sendAttach()
{
    if (m_attachPending)
        return;
    m_attachPending = true;
    m_attached = false;
    m_early.clear();
    const QPointer<ConsoleStream> self(this);
    QJsonObject params {{kName, m_sandbox}};
    if (!m_replay)
        params.insert(QStringLiteral("replay"), false);
    m_client->call(QString::fromLatin1(protocol::method::ConsoleAttach), params,
                   [self](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       self->m_attachPending = false;
                       if (!self->m_wanted)
                           return;
                       if (!result) {
                           Q_EMIT self->failed(result.error());
                           return;
                       }
                       const QJsonObject answer = result->toObject();
                       self->m_attached = true;
                       self->m_lastSeq = -1;
                       Q_EMIT self->attached();
                       if (!self)
                           return;
                       const QByteArray replay =
                           QByteArray::fromBase64(answer.value(kData).toString().toLatin1());
                       self->deliver(answer.value(kSeq).toInteger(), replay);
                       const auto early = std::exchange(self->m_early, {});
                       for (const auto &[seq, bytes] : early) {
                           if (!self)
                               return;
                           self->deliver(seq, bytes);
                       }
                   });
}

void ConsoleStream::detach(std::function<void()> done)
{
    m_wanted = false;
    m_attached = false;
    m_early.clear();
    m_client->call(QString::fromLatin1(protocol::method::ConsoleDetach), {{kName, m_sandbox}},
                   [done = std::move(done)](const Result<QJsonValue> &) {
                       if (done)
                           done();
                   });
}

void ConsoleStream::write(const QByteArray &bytes)
{
    const QPointer<ConsoleStream> self(this);
    // The helper runs calls of one connection in order, so the pieces arrive in order.
    for (qsizetype offset = 0; offset < bytes.size(); offset += kMaxWriteBytes) {
        const QByteArray piece = bytes.mid(offset, kMaxWriteBytes);
        ++m_pendingWrites;
        m_client->call(QString::fromLatin1(protocol::method::ConsoleWrite),
                       {{kName, m_sandbox}, {kData, QString::fromLatin1(piece.toBase64())}},
                       [self](const Result<QJsonValue> &result) {
                           if (!self)
                               return;
                           --self->m_pendingWrites;
                           if (!result)
                               Q_EMIT self->failed(result.error());
                           if (self && self->m_pendingWrites == 0)
                               Q_EMIT self->writesDone();
                       });
    }
}

void ConsoleStream::onNotification(const QString &method, const QJsonObject &params)
{
    if (method != QLatin1String(protocol::notification::ConsoleOutput)
        || params.value(QStringLiteral("sandbox")).toString() != m_sandbox || !m_wanted)
        return;
    const qint64 seq = params.value(kSeq).toInteger();
    QByteArray bytes = QByteArray::fromBase64(params.value(kData).toString().toLatin1());
    if (m_attachPending) {
        m_early.append({seq, std::move(bytes)});
        return;
    }
    if (m_attached)
        deliver(seq, bytes);
}

void ConsoleStream::deliver(qint64 seq, const QByteArray &bytes)
{
    // The replay already holds every chunk up to its seq; live chunks that raced it are skipped.
    if (m_lastSeq >= 0 && seq <= m_lastSeq)
        return;
    m_lastSeq = seq;
    if (!bytes.isEmpty())
        Q_EMIT output(bytes);
}

} // namespace airlock
