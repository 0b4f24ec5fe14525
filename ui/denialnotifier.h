#pragma once

#include "ui/denieddestination.h"
#include "ui/egressentry.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QObject>
#include <QTimer>

#include <functional>

namespace airlock {

/// One desktop notification about new denied destinations of one sandbox.
struct DenialNotification
{
    QString sandbox;
    QStringList names; ///< the new names, in the order they were first denied
};

/// Decides what to tell the person about denied destinations, OpenSnitch-style, without
/// widgets: live denials a rule could change are grouped per sandbox and name
/// (DeniedDestination); a name seen for the first time is news, its repeats only count. News
/// of one sandbox goes out at most once per interval: what arrives meanwhile is held and sent
/// as one notification when the interval is over. Nothing here allows anything: an open
/// destination waits for the person's answer, and stays denied whatever happens to it.
class DenialNotifier final : public QObject
{
    Q_OBJECT
public:
    using Clock = std::function<QDateTime()>;
    static constexpr int kDefaultIntervalMs = 30000;
    /// Destinations kept at most (a sandbox that probes thousands of names is the probing
    /// alert's business; the egress view keeps every decision).
    static constexpr int kMaxDestinations = 500;

    /// `clock` gives the current UTC time (default: the system clock); tests pass their own.
    explicit DenialNotifier(Clock clock = {}, QObject *parent = nullptr);

    /// The shortest time between two notifications of one sandbox.
    void setInterval(int milliseconds);
    int interval() const { return m_intervalMs; }
    /// Counts a live decision; allowed ones and denials no rule decides are ignored.
    void record(const EgressEntry &entry);
    /// Sends every notification that is due at the clock's time (the timer calls it).
    void flush();
    /// When the next held notification is due; invalid when none is held.
    QDateTime nextDue() const;
    /// The destinations waiting for an answer, in the order they were first denied.
    QList<DeniedDestination> open() const;
    /// The destination of `sandbox` and `name`, open or answered; nullptr when not known.
    const DeniedDestination *find(const QString &sandbox, const QString &name) const;
    bool isOpen(const QString &sandbox, const QString &name) const;
    /// The person kept it denied (or closed the prompt, or it timed out): no more news about
    /// it in this session; its later denials still count.
    void keepDenied(const QString &sandbox, const QString &name);
    /// The person allowed it: forgotten, so a later denial (another port or path) is news.
    void forget(const QString &sandbox, const QString &name);
    /// The sandbox is gone: forgets its destinations and held news.
    void forgetSandbox(const QString &sandbox);
    /// The notification's text, e.g. "agent was denied pkg.test." or "agent was denied 3 new
    /// destinations: a.test, b.test, c.test."
    static QString text(const DenialNotification &notification);

Q_SIGNALS:
    void notificationDue(const airlock::DenialNotification &notification);
    /// The open destinations changed (one was added, answered or forgotten).
    void openChanged();

private:
    struct Entry
    {
        DeniedDestination destination;
        bool open = true;
    };
    struct SandboxNews
    {
        QDateTime lastSent; ///< invalid: never sent
        QStringList held;
    };
    static QString key(const QString &sandbox, const QString &name);
    QDateTime now() const;
    void reschedule();

    Clock m_clock;
    int m_intervalMs = kDefaultIntervalMs;
    QList<QString> m_order; ///< keys, first denied first
    QHash<QString, Entry> m_entries;
    QHash<QString, SandboxNews> m_news;
    QTimer m_timer;
};

} // namespace airlock

Q_DECLARE_METATYPE(airlock::DenialNotification)
