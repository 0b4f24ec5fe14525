#pragma once

#include "core/model/error.h"

#include <QObject>
#include <QPointer>

namespace airlock {

class HelperClient;
class TerminalFeeder;
class TerminalSession;

/// Connects one sandbox's console on the helper to a TerminalSession: `console.attach` with
/// scrollback replay, `console.output` notifications into the session, keys from the session
/// out as `console.write`. Attaches again every time the client becomes ready, so the console
/// survives a helper restart: a replay from the same helper replaces the screen, one from a
/// restarted helper (sequence numbers start again) is appended to what is already shown.
/// Output reaches the session through a TerminalFeeder, a slice per event-loop turn, so a
/// guest cannot freeze the window with output that is slow to draw.
class ConsoleController final : public QObject
{
    Q_OBJECT
public:
    /// The session is created as a child of this controller.
    ConsoleController(HelperClient *client, const QString &sandbox, QObject *parent = nullptr);
    ~ConsoleController() override;

    QString sandbox() const { return m_sandbox; }
    TerminalSession *session() const { return m_session; }
    TerminalFeeder *feeder() const { return m_feeder; }
    bool isAttached() const { return m_attached; }

    /// Attaches (or re-attaches) now; the screen is reset and the replay fed in.
    void attach();
    /// Detaches on the helper; output stops arriving.
    void detach();

Q_SIGNALS:
    void attached();
    void attachFailed(const airlock::Error &error);
    /// Keys could not be delivered (e.g. the sandbox is not running).
    void writeFailed(const airlock::Error &error);
    /// The connection dropped; attach() runs again on the next ready().
    void detached();
    /// The guest wrote faster than the console could draw; `bytes` of its oldest output
    /// were dropped (TerminalFeeder::kMaxBacklog).
    void outputSkipped(qint64 bytes);

private:
    void onNotification(const QString &method, const QJsonObject &params);
    void write(const QByteArray &bytes);

    QPointer<HelperClient> m_client;
    QString m_sandbox;
    TerminalSession *m_session;
    TerminalFeeder *m_feeder;
    qint64 m_lastSeq = 0;
    bool m_attached = false;
    bool m_everAttached = false;
    // Counts attach() calls so an older attach answer cannot overwrite a newer replay.
    quint64 m_attachGeneration = 0;
};

} // namespace airlock
