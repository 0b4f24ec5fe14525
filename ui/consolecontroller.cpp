#include "ui/consolecontroller.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "core/terminal/terminalfeeder.h"
#include "core/terminal/terminalsession.h"

#include <QJsonObject>

namespace airlock {

ConsoleController::ConsoleController(HelperClient *client, const QString &sandbox, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_session(new TerminalSession(24, 80, this))
    , m_feeder(new TerminalFeeder(m_session, this))
{
    connect(m_session, &TerminalSession::outputReady, this, &ConsoleController::write);
    connect(m_feeder, &TerminalFeeder::skipped, this, &ConsoleController::outputSkipped);
    if (!client)
        return;
    connect(client, &HelperClient::notificationReceived, this, &ConsoleController::onNotification);
    connect(client, &HelperClient::ready, this, &ConsoleController::attach);
    connect(client, &HelperClient::connectionLost, this, [this] {
        if (!m_attached)
            return;
        m_attached = false;
        Q_EMIT detached();
    });
}

ConsoleController::~ConsoleController()
{
    if (m_attached && m_client && m_client->state() == HelperClient::State::Ready)
        m_client->call(QString::fromLatin1(protocol::method::ConsoleDetach),
                       {{QStringLiteral("name"), m_sandbox}}, [](const Result<QJsonValue> &) {});
}

void ConsoleController::attach()
{
    if (!m_client)
        return;
    m_attached = false;
    const quint64 generation = ++m_attachGeneration;
    QPointer<ConsoleController> self(this);
    m_client->call(
        QString::fromLatin1(protocol::method::ConsoleAttach), {{QStringLiteral("name"), m_sandbox}},
        [self, generation](const Result<QJsonValue> &result) {
            if (!self || generation != self->m_attachGeneration)
                return;
            if (!result) {
                Q_EMIT self->attachFailed(result.error());
                return;
            }
            const QJsonObject answer = result->toObject();
            const qint64 seq = answer.value(QStringLiteral("seq")).toInteger();
            const QByteArray replay =
                QByteArray::fromBase64(answer.value(QStringLiteral("data")).toString().toLatin1());
            // Same helper (sequence numbers continued): its replay holds everything we showed,
            // so start from a clean screen instead of showing it twice. A restarted helper
            // counts from zero again and only has what the guest wrote since; keep our screen
            // and append that.
            const bool helperRestarted = self->m_everAttached && seq < self->m_lastSeq;
            if (!helperRestarted) {
                self->m_feeder->clear();
                self->m_session->reset();
            }
            self->m_feeder->enqueue(replay);
            self->m_lastSeq = seq;
            self->m_everAttached = true;
            self->m_attached = true;
            Q_EMIT self->attached();
        });
}

void ConsoleController::detach()
{
    if (!m_client || !m_attached)
        return;
    m_attached = false;
    ++m_attachGeneration;
    m_client->call(QString::fromLatin1(protocol::method::ConsoleDetach),
                   {{QStringLiteral("name"), m_sandbox}}, [](const Result<QJsonValue> &) {});
}

void ConsoleController::onNotification(const QString &method, const QJsonObject &params)
{
    if (!m_attached || method != QLatin1String(protocol::notification::ConsoleOutput)
        || params.value(QStringLiteral("sandbox")).toString() != m_sandbox)
        return;
    const qint64 seq = params.value(QStringLiteral("seq")).toInteger();
    if (seq <= m_lastSeq)
        return; // already part of the replay
    m_lastSeq = seq;
    m_feeder->enqueue(
        QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1()));
}

void ConsoleController::write(const QByteArray &bytes)
{
    if (!m_client || bytes.isEmpty())
        return;
    QPointer<ConsoleController> self(this);
    m_client->call(QString::fromLatin1(protocol::method::ConsoleWrite),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("data"), QString::fromLatin1(bytes.toBase64())}},
                   [self](const Result<QJsonValue> &result) {
                       if (self && !result)
                           Q_EMIT self->writeFailed(result.error());
                   });
}

} // namespace airlock
