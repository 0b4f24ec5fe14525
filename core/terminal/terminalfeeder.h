#pragma once

#include <QByteArray>
#include <QObject>
#include <QTimer>

namespace airlock {

class TerminalSession;

/// Feeds a guest's console bytes into a TerminalSession a slice at a time from the event loop,
/// so a guest that writes what is expensive to draw (DECALN `ESC # 8` fills the screen, every
/// line feed at the bottom scrolls it: about 1.6 s for 64 KiB of DECALN at 60×200 with
/// libvterm 0.1.4) cannot freeze the window's thread
/// (docs/reviews/2026-12-01-guest-channels-round4.md#f4).
///
/// Each turn feeds slices of kSliceBytes until the turn's budget (16 ms by default) is spent,
/// then yields to the event loop. What waits is bounded by kMaxBacklog: beyond it the oldest
/// bytes are dropped, kKeepOnOverflow of the newest stay, and skipped() says how many went.
/// Slicing does not change what the screen shows: libvterm keeps its parser state between
/// feeds, so escape sequences and UTF-8 may be split anywhere.
class TerminalFeeder final : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kSliceBytes = 1024;
    static constexpr qsizetype kMaxBacklog = 4 * 1024 * 1024;
    static constexpr qsizetype kKeepOnOverflow = 256 * 1024;
    static constexpr int kDefaultBudgetMs = 16;

    explicit TerminalFeeder(TerminalSession *session, QObject *parent = nullptr);

    /// Queues bytes; they reach the session from the event loop, in order.
    void enqueue(const QByteArray &bytes);
    /// Forgets what waits (before a replay replaces the screen).
    void clear();
    /// Bytes queued and not yet fed.
    qsizetype backlog() const { return m_pending.size() - m_offset; }
    /// Milliseconds of feeding per event-loop turn; at least one slice is fed per turn.
    void setBudgetMs(int ms) { m_budgetMs = ms; }
    /// One turn: feeds slices until the budget is spent or nothing waits. Returns bytes fed.
    qsizetype step();

Q_SIGNALS:
    /// `bytes` of the oldest output were dropped because the backlog exceeded kMaxBacklog.
    void skipped(qint64 bytes);

private:
    TerminalSession *m_session;
    QByteArray m_pending;
    qsizetype m_offset = 0;
    int m_budgetMs = kDefaultBudgetMs;
    QTimer m_timer;
};

} // namespace airlock
