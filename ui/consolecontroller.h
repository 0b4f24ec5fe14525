#pragma once

#include "core/model/error.h"

#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <QSize>
#include <QTimer>

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
    /// The sandbox's last known state; empty before the first answer.
    QString sandboxState() const { return m_state; }
    /// The size (cols x rows) the guest's console tty was last set to; invalid when not yet.
    QSize guestSize() const { return m_guestSize; }
    /// The line put into the terminal when a new VMM runs the guest (without the colours).
    static QString markerText(const QString &startedFrom, const QDateTime &at);

    /// Attaches (or re-attaches) now; the screen is reset and the replay fed in.
    void attach();
    /// Detaches on the helper; output stops arriving.
    void detach();
    /// Tells the guest the session's size (`console.resize`) soon: coalesces a burst of
    /// resizes into one call, and retries while the guest's agent is not up yet.
    void requestGuestSize();

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
    /// The sandbox's state as the helper reports it (`stopped`, `starting`, `running`,
    /// `stopping`, `paused`): after every attach (sandbox.get) and every `sandbox.changed`.
    void sandboxStateChanged(const QString &state);
    /// A new VMM runs the guest (a start, or a restore that replaced the running one); a
    /// marker line saying so has been queued into the terminal after the output before it.
    /// `startedFrom` is the Sandbox field (`boot`, `template`, `snapshot`).
    void guestReplaced(const QString &startedFrom);
    /// The guest's console tty now has this size (`console.resize` answered).
    void guestSizeSet(int rows, int cols);

private:
    void onNotification(const QString &method, const QJsonObject &params);
    /// Takes in a Sandbox object; `live`: from a notification (may add a marker).
    void updateSandbox(const QJsonObject &sandbox, bool live);
    void sendGuestSize();
    void write(const QByteArray &bytes);

    QPointer<HelperClient> m_client;
    QString m_sandbox;
    TerminalSession *m_session;
    TerminalFeeder *m_feeder;
    qint64 m_lastSeq = 0;
    QString m_state;
    QTimer *m_resizeTimer;
    int m_resizeRetries = 0;
    QSize m_guestSize; // what the guest was last told
    // Which VMM ran the guest when we last looked: a different one means a start or restore.
    QString m_instance;
    bool m_attached = false;
    bool m_everAttached = false;
    // Counts attach() calls so an older attach answer cannot overwrite a newer replay.
    quint64 m_attachGeneration = 0;
};

} // namespace airlock
