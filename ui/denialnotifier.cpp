#include "ui/denialnotifier.h"

#include <QCoreApplication>

#include <algorithm>

namespace airlock {

DenialNotifier::DenialNotifier(Clock clock, QObject *parent)
    : QObject(parent), m_clock(std::move(clock))
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &DenialNotifier::flush);
}

QString DenialNotifier::key(const QString &sandbox, const QString &name)
{
    return sandbox + QLatin1Char('\n') + name;
}

QDateTime DenialNotifier::now() const
{
    return m_clock ? m_clock() : QDateTime::currentDateTimeUtc();
}

void DenialNotifier::setInterval(int milliseconds)
{
    m_intervalMs = std::max(0, milliseconds);
    reschedule();
}

void DenialNotifier::record(const EgressEntry &entry)
{
    const QString name = DeniedDestination::nameOf(entry);
    if (name.isEmpty())
        return;
    const QString k = key(entry.sandbox, name);
    auto found = m_entries.find(k);
    // Arrival time, not the event's: a gateway whose clock lags still counts as now.
    const QDateTime arrived = now();
    if (found != m_entries.end()) {
        found->destination.add(entry, arrived);
        return;
    }
    if (m_entries.size() >= kMaxDestinations)
        return;
    Entry fresh;
    fresh.destination.sandbox = entry.sandbox;
    fresh.destination.name = name;
    fresh.destination.add(entry, arrived);
    m_entries.insert(k, fresh);
    m_order.append(k);
    m_news[entry.sandbox].held.append(name);
    Q_EMIT openChanged();
    flush();
}

void DenialNotifier::flush()
{
    const QDateTime at = now();
    for (auto it = m_news.begin(); it != m_news.end(); ++it) {
        SandboxNews &news = it.value();
        if (news.held.isEmpty())
            continue;
        if (news.lastSent.isValid() && news.lastSent.msecsTo(at) < m_intervalMs)
            continue;
        // Only what is still open: an answer given meanwhile needs no news.
        QStringList names;
        for (const QString &name : std::as_const(news.held)) {
            if (isOpen(it.key(), name))
                names.append(name);
        }
        news.held.clear();
        if (names.isEmpty())
            continue;
        news.lastSent = at;
        Q_EMIT notificationDue({it.key(), names});
    }
    reschedule();
}

QDateTime DenialNotifier::nextDue() const
{
    QDateTime due;
    for (const SandboxNews &news : m_news) {
        if (news.held.isEmpty())
            continue;
        const QDateTime at = news.lastSent.isValid() ? news.lastSent.addMSecs(m_intervalMs) : now();
        if (!due.isValid() || at < due)
            due = at;
    }
    return due;
}

void DenialNotifier::reschedule()
{
    const QDateTime due = nextDue();
    if (!due.isValid()) {
        m_timer.stop();
        return;
    }
    m_timer.start(int(std::clamp<qint64>(now().msecsTo(due), 0, m_intervalMs)));
}

QList<DeniedDestination> DenialNotifier::open() const
{
    QList<DeniedDestination> result;
    for (const QString &k : m_order) {
        const Entry &entry = m_entries[k];
        if (entry.open)
            result.append(entry.destination);
    }
    return result;
}

const DeniedDestination *DenialNotifier::find(const QString &sandbox, const QString &name) const
{
    const auto found = m_entries.constFind(key(sandbox, name));
    return found == m_entries.constEnd() ? nullptr : &found->destination;
}

bool DenialNotifier::isOpen(const QString &sandbox, const QString &name) const
{
    const auto found = m_entries.constFind(key(sandbox, name));
    return found != m_entries.constEnd() && found->open;
}

void DenialNotifier::keepDenied(const QString &sandbox, const QString &name)
{
    auto found = m_entries.find(key(sandbox, name));
    if (found == m_entries.end() || !found->open)
        return;
    found->open = false;
    Q_EMIT openChanged();
}

void DenialNotifier::forget(const QString &sandbox, const QString &name)
{
    const QString k = key(sandbox, name);
    if (!m_entries.remove(k))
        return;
    m_order.removeOne(k);
    Q_EMIT openChanged();
}

void DenialNotifier::forgetSandbox(const QString &sandbox)
{
    const qsizetype before = m_order.size();
    m_order.removeIf([&](const QString &k) {
        if (!k.startsWith(sandbox + QLatin1Char('\n')))
            return false;
        m_entries.remove(k);
        return true;
    });
    m_news.remove(sandbox);
    reschedule();
    if (m_order.size() != before)
        Q_EMIT openChanged();
}

QString DenialNotifier::text(const DenialNotification &notification)
{
    if (notification.names.size() == 1)
        return QCoreApplication::translate("DenialNotifier", "%1 was denied %2.")
            .arg(notification.sandbox, notification.names.constFirst());
    // Two or more: no plural form of one is needed in any language.
    return QCoreApplication::translate("DenialNotifier", "%1 was denied %2 new destinations: %3.")
        .arg(notification.sandbox, QString::number(notification.names.size()),
             notification.names.join(QStringLiteral(", ")));
}

} // namespace airlock
