#include "ui/probingmonitor.h"

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
    m_denials[entry.sandbox].append(now);
    if (!m_timer.isActive())
        m_timer.start();
    evaluate(now);
}

void ProbingMonitor::evaluate(const QDateTime &now)
{
    const QDateTime cutoff = now.addSecs(-60);
    for (auto it = m_denials.begin(); it != m_denials.end();) {
        QList<QDateTime> &times = it.value();
        while (!times.isEmpty() && times.constFirst() < cutoff)
            times.removeFirst();
        const QString sandbox = it.key();
        const int count = int(times.size());
        if (count >= m_threshold && !m_probing.contains(sandbox)) {
            m_probing.insert(sandbox);
            Q_EMIT probingStarted(sandbox, count);
        } else if (count < m_threshold && m_probing.contains(sandbox)) {
            m_probing.remove(sandbox);
            Q_EMIT probingEnded(sandbox);
        }
        if (times.isEmpty())
            it = m_denials.erase(it);
        else
            ++it;
    }
    if (m_denials.isEmpty())
        m_timer.stop();
}

int ProbingMonitor::deniedLastMinute(const QString &sandbox) const
{
    return int(m_denials.value(sandbox).size());
}

} // namespace airlock
