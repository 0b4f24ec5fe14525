#include "core/gateway/eventratelimiter.h"

#include <QTimer>

#include <algorithm>
#include <chrono>

namespace airlock::gateway {

namespace {

qint64 steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

EventRateLimiter::EventRateLimiter(std::function<qint64()> clockMs, bool timer, QObject *parent)
    : QObject(parent), m_clock(clockMs ? std::move(clockMs) : std::function<qint64()>(steadyMs))
{
    const qint64 now = m_clock();
    m_ordinary = {kBurst, now};
    m_alerts = {kAlertBurst, now};
    if (timer) {
        m_timer = new QTimer(this);
        m_timer->setInterval(kFlushMs);
        connect(m_timer, &QTimer::timeout, this, &EventRateLimiter::flush);
    }
}

EventRateLimiter::~EventRateLimiter() = default;

bool EventRateLimiter::take(Bucket &bucket, double rate, double burst)
{
    const qint64 now = m_clock();
    bucket.tokens = std::min(burst, bucket.tokens + double(now - bucket.lastMs) * rate / 1000.0);
    bucket.lastMs = now;
    if (bucket.tokens < 1)
        return false;
    bucket.tokens -= 1;
    return true;
}

EventRateLimiter::Key EventRateLimiter::keyOf(const EgressEvent &event, bool coarse)
{
    if (coarse)
        return {int(event.layer), event.allowed, event.reason, {}, 0, {}, 0, event.alert};
    return {int(event.layer),
            event.allowed,
            event.reason,
            event.name,
            int(event.port.value_or(0)),
            event.method,
            event.binding.value_or(0),
            event.alert};
}

void EventRateLimiter::submit(const EgressEvent &event)
{
    const bool fits =
        event.alert ? take(m_alerts, kAlertRate, kAlertBurst) : take(m_ordinary, kRate, kBurst);
    if (fits) {
        Q_EMIT passed(event);
        return;
    }
    aggregate(event);
    if (m_timer && !m_timer->isActive())
        m_timer->start();
}

void EventRateLimiter::aggregate(const EgressEvent &event)
{
    Key key = keyOf(event, false);
    auto it = m_pending.find(key);
    if (it == m_pending.end() && m_pending.size() >= size_t(kMaxKinds)) {
        key = keyOf(event, true);
        it = m_pending.find(key);
    }
    if (it == m_pending.end()) {
        Summary summary;
        summary.event = event;
        summary.count = 1;
        summary.order = m_order++;
        m_pending.emplace(key, std::move(summary));
        return;
    }
    Summary &summary = it->second;
    EgressEvent &sum = summary.event;
    ++summary.count;
    sum.time = event.time;
    summary.mixedPath = summary.mixedPath || sum.path != event.path;
    summary.mixedStatus = summary.mixedStatus || sum.status != event.status;
    summary.mixedName = summary.mixedName || sum.name != event.name || sum.host != event.host
        || sum.sni != event.sni || sum.destination != event.destination;
    auto add = [](std::optional<qint64> &total, const std::optional<qint64> &more) {
        if (more)
            total = total.value_or(0) + *more;
    };
    add(sum.bytesUp, event.bytesUp);
    add(sum.bytesDown, event.bytesDown);
    add(sum.scrubbed, event.scrubbed);
}

void EventRateLimiter::flush()
{
    std::vector<Summary> summaries;
    summaries.reserve(m_pending.size());
    for (auto &[key, summary] : m_pending)
        summaries.push_back(std::move(summary));
    m_pending.clear();
    std::sort(summaries.begin(), summaries.end(),
              [](const Summary &a, const Summary &b) { return a.order < b.order; });
    for (Summary &summary : summaries) {
        EgressEvent event = std::move(summary.event);
        if (summary.count > 1) {
            event.count = summary.count;
            if (summary.mixedPath)
                event.path.clear();
            if (summary.mixedStatus)
                event.status.reset();
            if (summary.mixedName) {
                event.name.clear();
                event.host.clear();
                event.sni.clear();
                event.destination.clear();
            }
            event.detail = QStringLiteral("%1 decisions like this one within %2 ms, over the "
                                          "gateway's event rate (%3/s, alerts %4/s); the "
                                          "first: %5")
                               .arg(summary.count)
                               .arg(kFlushMs)
                               .arg(kRate)
                               .arg(kAlertRate)
                               .arg(event.detail);
        }
        Q_EMIT passed(event);
    }
    if (m_timer && m_pending.empty())
        m_timer->stop();
}

qint64 EventRateLimiter::pendingDecisions() const
{
    qint64 total = 0;
    for (const auto &[key, summary] : m_pending)
        total += summary.count;
    return total;
}

} // namespace airlock::gateway
