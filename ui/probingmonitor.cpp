#include "ui/probingmonitor.h"

#include <algorithm>
#include <climits>

namespace airlock {

ProbingMonitor::ProbingMonitor(QObject *parent) : QObject(parent)
{
    // Ends alerts when a sandbox goes quiet (no event arrives to trigger an evaluation).
    m_timer.setInterval(5000);
    connect(&m_timer, &QTimer::timeout, this, [this] { evaluate(); });
}

void ProbingMonitor::setThreshold(int deniedPerMinute)
{
    m_threshold = std::max(1, deniedPerMinute);
    evaluate();
}

void ProbingMonitor::record(const EgressEntry &entry)
{
    if (entry.allowed)
        return;
    // Arrival time, not the event's: a sandbox whose clock or gateway lags still alerts now.
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Window &window = m_denials[entry.sandbox];
    window.denials.append({now, entry.count});
    window.total += entry.count;
    if (!m_timer.isActive())
        m_timer.start();
    evaluate(now);
}

void ProbingMonitor::evaluate(const QDateTime &now)
{
    const QDateTime cutoff = now.addSecs(-60);
    for (auto it = m_denials.begin(); it != m_denials.end();) {
        Window &window = it.value();
        while (!window.denials.isEmpty() && window.denials.constFirst().arrived < cutoff)
            window.total -= window.denials.takeFirst().count;
        const QString sandbox = it.key();
        const int count = int(std::min<qint64>(window.total, INT_MAX));
        if (count >= m_threshold && !m_probing.contains(sandbox)) {
            m_probing.insert(sandbox);
            Q_EMIT probingStarted(sandbox, count);
        } else if (count < m_threshold && m_probing.contains(sandbox)) {
            m_probing.remove(sandbox);
            Q_EMIT probingEnded(sandbox);
        }
        if (window.denials.isEmpty())
            it = m_denials.erase(it);
        else
            ++it;
    }
    if (m_denials.isEmpty())
        m_timer.stop();
}

int ProbingMonitor::deniedLastMinute(const QString &sandbox) const
{
    return int(std::min<qint64>(m_denials.value(sandbox).total, INT_MAX));
}

} // namespace airlock
