#include "core/daemon/egressrecorder.h"

#include "core/daemon/registry.h"
#include "core/model/egressevent.h"

#include <QJsonDocument>
#include <QLoggingCategory>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcEgress, "airlock.daemon.sandbox")
}

EgressRecorder::EgressRecorder(Registry &registry, int history, QObject *parent)
    : QObject(parent), m_registry(registry), m_history(history)
{ }

EgressRecorder::~EgressRecorder()
{
    if (!m_pending.isEmpty())
        (void)m_registry.appendEgressBatch(m_pending, m_history);
}

bool EgressRecorder::record(const QString &name, const QJsonObject &object)
{
    auto parsed = EgressEvent::fromJson(object);
    if (!parsed) {
        qCWarning(lcEgress, "%s: ignoring an invalid egress event from the gateway: %s",
                  qPrintable(name), qPrintable(parsed.error().message));
        return false;
    }
    parsed->sandbox = name;
    const QJsonObject event = parsed->toJson();
    if (QJsonDocument(event).toJson(QJsonDocument::Compact).size() > kMaxEventBytes) {
        qCWarning(lcEgress, "%s: dropping an egress event over %lld bytes", qPrintable(name),
                  static_cast<long long>(kMaxEventBytes));
        return false;
    }
    m_pending.append({name, event});
    if (!m_flushQueued) {
        m_flushQueued = true;
        QMetaObject::invokeMethod(this, &EgressRecorder::flush, Qt::QueuedConnection);
    }
    return true;
}

QJsonObject EgressRecorder::gatewayRestartedEvent(const QString &name, const QString &reason,
                                                  int attempt)
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.sandbox = name;
    event.layer = EgressLayer::Tcp;
    event.allowed = false;
    event.reason = wireName(EgressReason::GatewayRestarted);
    event.detail =
        QStringLiteral("%1; guest connections were refused until the restart (attempt %2)")
            .arg(reason)
            .arg(attempt);
    return event.toJson();
}

void EgressRecorder::forget(const QString &name)
{
    m_pending.removeIf([&name](const auto &pending) { return pending.first == name; });
}

void EgressRecorder::flush()
{
    m_flushQueued = false;
    if (m_pending.isEmpty())
        return;
    const QList<std::pair<QString, QJsonObject>> events = std::exchange(m_pending, {});
    auto seqs = m_registry.appendEgressBatch(events, m_history);
    if (!seqs) {
        qCWarning(lcEgress, "%lld egress event(s) not stored: %s",
                  static_cast<long long>(events.size()), qPrintable(seqs.error().message));
        return;
    }
    for (qsizetype i = 0; i < events.size(); ++i)
        Q_EMIT recorded(events.at(i).first, seqs->at(i), events.at(i).second);
}

} // namespace airlock
