#pragma once

#include "core/model/egressevent.h"

#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <map>
#include <tuple>

class QTimer;

namespace airlock::gateway {

/// Bounds the egress events one gateway (one sandbox) sends to airlockd (docs/gateway.md,
/// "Event rate"; docs/reviews/2026-12-01-credentials-redteam.md#f6: one guest connection made ~23k
/// events/s, more than airlockd stores, so alerts were dropped and the history and audit flushed).
///
/// Two token buckets: one for ordinary events (kRate per second, kBurst at once) and one for
/// alerts (kAlertRate, kAlertBurst), so a flood of ordinary decisions never takes an alert's
/// place. An event within its bucket is passed on at once (passed()). Above it the event is not
/// lost: decisions alike (layer, verdict, reason, name, port, method, binding, alert) are
/// counted, and flush() (every kFlushMs) passes one summary per kind with `count`, summed
/// byte and scrub counts, and the path and status when all had the same. At most kMaxKinds
/// kinds are kept apart; beyond that, decisions are merged by layer, verdict, reason and alert
/// alone (the name cleared when it differs). So airlockd sees at most about
/// kRate + kAlertRate + kMaxKinds events per second per gateway, and every decision is in the
/// counts. Single-threaded.
class EventRateLimiter final : public QObject
{
    Q_OBJECT
public:
    static constexpr double kRate = 200; ///< ordinary events per second, sustained
    static constexpr double kBurst = 2000;
    static constexpr double kAlertRate = 20;
    static constexpr double kAlertBurst = 200;
    static constexpr int kFlushMs = 1000;
    static constexpr int kMaxKinds = 256;

    /// `clockMs`: a monotonic clock in milliseconds (tests pass their own); null: the
    /// system's steady clock. With `timer` false no timer runs (tests call flush()).
    explicit EventRateLimiter(std::function<qint64()> clockMs = {}, bool timer = true,
                              QObject *parent = nullptr);
    ~EventRateLimiter() override;

    /// One decision: passed() now, or counted into the next summary.
    void submit(const EgressEvent &event);
    /// Passes the pending summaries (one per kind), oldest kind first.
    void flush();
    /// Decisions counted and not yet summarized.
    qint64 pendingDecisions() const;

Q_SIGNALS:
    /// An event for airlockd: a single decision, or a summary (EgressEvent::count set).
    void passed(const EgressEvent &event);

private:
    struct Bucket
    {
        double tokens = 0;
        qint64 lastMs = 0;
    };
    using Key = std::tuple<int, bool, QString, QString, int, QString, qint64, bool>;
    struct Summary
    {
        EgressEvent event; ///< the first decision of its kind, the sums added up
        qint64 count = 0;
        qint64 order = 0;
        bool mixedPath = false;
        bool mixedStatus = false;
        bool mixedName = false;
    };

    bool take(Bucket &bucket, double rate, double burst);
    static Key keyOf(const EgressEvent &event, bool coarse);
    void aggregate(const EgressEvent &event);

    std::function<qint64()> m_clock;
    Bucket m_ordinary;
    Bucket m_alerts;
    std::map<Key, Summary> m_pending;
    qint64 m_order = 0;
    QTimer *m_timer = nullptr;
};

} // namespace airlock::gateway
