#pragma once

#include "core/model/snapshot.h"

#include <QDialog>

class QCheckBox;
class QSpinBox;

namespace airlock {

/// Edits a sandbox's automatic snapshots (`snapshot.schedule`): on or off, the interval in
/// minutes, and the rolling retention (newest per hour for N hours, newest per day for N days;
/// manual, safety and pinned snapshots are never removed). Ranges as SnapshotSchedule::fromJson.
class ScheduleDialog final : public QDialog
{
    Q_OBJECT
public:
    ScheduleDialog(const QString &sandbox, const SnapshotSchedule &current,
                   QWidget *parent = nullptr);

    /// The edited schedule (interval 0 when automatic snapshots are off).
    SnapshotSchedule schedule() const;
    QCheckBox *enabledBox() const { return m_enabled; }
    QSpinBox *intervalBox() const { return m_interval; }
    QSpinBox *hourlyBox() const { return m_hourly; }
    QSpinBox *dailyBox() const { return m_daily; }

private:
    QCheckBox *m_enabled;
    QSpinBox *m_interval;
    QSpinBox *m_hourly;
    QSpinBox *m_daily;
};

} // namespace airlock
