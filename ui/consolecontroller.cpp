#include "ui/consolecontroller.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "core/terminal/terminalfeeder.h"
#include "core/terminal/terminalsession.h"

#include <QJsonObject>
#include <QLocale>

namespace airlock {

namespace {

constexpr int kResizeCoalesceMs = 100;
constexpr int kResizeRetryMs = 2000;
constexpr int kResizeRetries = 60; // two minutes: a cold boot on TCG

} // namespace

ConsoleController::ConsoleController(HelperClient *client, const QString &sandbox, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_session(new TerminalSession(24, 80, this))
    , m_feeder(new TerminalFeeder(m_session, this))
    , m_resizeTimer(new QTimer(this))
{
    m_resizeTimer->setSingleShot(true);
    connect(m_resizeTimer, &QTimer::timeout, this, &ConsoleController::sendGuestSize);
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
            if (!self)
                return;
            // The notes above the terminal follow the sandbox's state from here on.
            self->m_client->call(QString::fromLatin1(protocol::method::SandboxGet),
                                 {{QStringLiteral("name"), self->m_sandbox}},
                                 [self, generation](const Result<QJsonValue> &sandbox) {
                                     if (self && generation == self->m_attachGeneration && sandbox)
                                         self->updateSandbox(sandbox->toObject(), false);
                                 });
        });
}

void ConsoleController::requestGuestSize()
{
    m_resizeRetries = 0;
    // A window being dragged resizes many times a second; the guest needs the last size.
    m_resizeTimer->start(kResizeCoalesceMs);
}

void ConsoleController::sendGuestSize()
{
    if (!m_client || !m_attached || m_state != QLatin1String("running"))
        return; // sent again when it runs (updateSandbox)
    const QSize size(m_session->cols(), m_session->rows());
    if (size == m_guestSize)
        return;
    QPointer<ConsoleController> self(this);
    m_client->call(QString::fromLatin1(protocol::method::ConsoleResize),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("rows"), size.height()},
                    {QStringLiteral("cols"), size.width()}},
                   [self, size](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (result) {
                           self->m_guestSize = size;
                           Q_EMIT self->guestSizeSet(size.height(), size.width());
                           // The view may have changed again while the call was under way.
                           if (QSize(self->m_session->cols(), self->m_session->rows()) != size)
                               self->m_resizeTimer->start(kResizeCoalesceMs);
                           return;
                       }
                       // Booting: the agent comes up a little after the VMM runs.
                       if (result.error().kind == ErrorKind::AgentUnavailable
                           && ++self->m_resizeRetries <= kResizeRetries)
                           self->m_resizeTimer->start(kResizeRetryMs);
                   });
}

QString ConsoleController::markerText(const QString &startedFrom, const QDateTime &at)
{
    const QString time = QLocale().toString(at.toLocalTime().time(), QLocale::ShortFormat);
    if (startedFrom == QLatin1String("snapshot"))
        return tr("── %1: the guest was restored from a snapshot; what follows is its state "
                  "then ──")
            .arg(time);
    if (startedFrom == QLatin1String("template"))
        return tr("── %1: the sandbox started from its image's template ──").arg(time);
    return tr("── %1: the sandbox started ──").arg(time);
}

void ConsoleController::updateSandbox(const QJsonObject &sandbox, bool live)
{
    const QString state = sandbox.value(QStringLiteral("state")).toString();
    const qint64 pid = sandbox.value(QStringLiteral("vmmPid")).toInteger();
    const QString instance = pid == 0 ? QString()
                                      : QString::number(pid) + QLatin1Char('@')
            + sandbox.value(QStringLiteral("startedAt")).toString();
    if (live && !instance.isEmpty() && instance != m_instance) {
        const QString from = sandbox.value(QStringLiteral("startedFrom")).toString();
        // Reverse video on a line of its own, after whatever the old guest wrote last.
        m_feeder->enqueue("\r\n\x1b[7m" + markerText(from, QDateTime::currentDateTime()).toUtf8()
                          + "\x1b[0m\r\n");
        m_instance = instance;
        m_guestSize = {}; // a restored guest has the size it had when it was saved
        requestGuestSize();
        Q_EMIT guestReplaced(from);
    }
    if (!instance.isEmpty())
        m_instance = instance;
    if (state != m_state) {
        m_state = state;
        if (state != QLatin1String("running") && state != QLatin1String("paused"))
            m_guestSize = {}; // a new guest knows nothing of the old one's size
        if (state == QLatin1String("running"))
            requestGuestSize();
        Q_EMIT sandboxStateChanged(state);
    }
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
    if (method == QLatin1String(protocol::notification::SandboxChanged)) {
        const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
        if (sandbox.value(QStringLiteral("name")).toString() == m_sandbox)
            updateSandbox(sandbox, m_everAttached);
        return;
    }
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
