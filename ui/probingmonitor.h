#pragma once

#include "ui/egressentry.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QTimer>

namespace airlock {

/// Watches live egress decisions for probing: a sandbox whose denials within the last minute
/// reach the threshold is "probing" until its rate falls below the threshold again. Only live
/// events count (recorded history is old news).
class ProbingMonitor final : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDefaultThreshold = 20; ///< denials per minute

    explicit ProbingMonitor(QObject *parent = nullptr);

    void setThreshold(int deniedPerMinute);
    int threshold() const { return m_threshold; }
    /// Counts a live decision; allowed ones are ignored.
    void record(const EgressEntry &entry);
    /// Drops denials older than a minute before `now` and updates every sandbox's state.
    void evaluate(const QDateTime &now = QDateTime::currentDateTimeUtc());
    bool isProbing(const QString &sandbox) const { return m_probing.contains(sandbox); }
    /// Denials of `sandbox` within the minute before the last evaluation or record.
    int deniedLastMinute(const QString &sandbox) const;

Q_SIGNALS:
    void probingStarted(const QString &sandbox, int deniedLastMinute);
    void probingEnded(const QString &sandbox);

private:
    /// A live denial's arrival time and how many decisions it stands for (a summary's count).
    struct Denial
    {
        QDateTime arrived;
        qint64 count = 1;
    };
    /// Denials per sandbox, oldest first, with their sum.
    struct Window
    {
        QList<Denial> denials;
        qint64 total = 0;
    };
    QHash<QString, Window> m_denials;
    QSet<QString> m_probing;
    QTimer m_timer;
    int m_threshold = kDefaultThreshold;
};

} // namespace airlock
