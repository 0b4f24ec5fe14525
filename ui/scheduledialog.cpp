#include "ui/scheduledialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

namespace airlock {

ScheduleDialog::ScheduleDialog(const QString &sandbox, const SnapshotSchedule &current,
                               QWidget *parent)
    : QDialog(parent)
    , m_enabled(new QCheckBox(tr("&Take automatic snapshots while %1 runs").arg(sandbox), this))
    , m_interval(new QSpinBox(this))
    , m_hourly(new QSpinBox(this))
    , m_daily(new QSpinBox(this))
{
    setWindowTitle(tr("Automatic Snapshots of %1").arg(sandbox));
    m_enabled->setChecked(current.intervalMinutes > 0);
    m_enabled->setAccessibleName(tr("Take automatic snapshots"));
    m_interval->setRange(1, SnapshotSchedule::kMaxIntervalMinutes);
    m_interval->setValue(current.intervalMinutes > 0 ? current.intervalMinutes : 60);
    m_interval->setSuffix(tr(" min"));
    m_interval->setAccessibleName(tr("Interval in minutes"));
    m_hourly->setRange(0, 720);
    m_hourly->setValue(current.hourlyHours);
    m_hourly->setSuffix(tr(" h"));
    m_hourly->setAccessibleName(tr("Keep one per hour for this many hours"));
    m_daily->setRange(0, 3660);
    m_daily->setValue(current.dailyDays);
    m_daily->setSuffix(tr(" d"));
    m_daily->setAccessibleName(tr("Keep one per day for this many days"));

    auto *form = new QFormLayout;
    auto add = [this, form](const QString &text, QSpinBox *box) {
        auto *label = new QLabel(text, this);
        label->setBuddy(box);
        form->addRow(label, box);
    };
    add(tr("&Every:"), m_interval);
    add(tr("Keep one per &hour for:"), m_hourly);
    add(tr("Keep one per &day for:"), m_daily);
    auto *note = new QLabel(tr("Older automatic snapshots are deleted; the newest one always "
                               "stays. Manual, safety and pinned snapshots are never deleted "
                               "by retention."),
                            this);
    note->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto update = [this] { m_interval->setEnabled(m_enabled->isChecked()); };
    connect(m_enabled, &QCheckBox::toggled, this, update);
    update();

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_enabled);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    resize(440, sizeHint().height());
}

SnapshotSchedule ScheduleDialog::schedule() const
{
    SnapshotSchedule schedule;
    schedule.intervalMinutes = m_enabled->isChecked() ? m_interval->value() : 0;
    schedule.hourlyHours = m_hourly->value();
    schedule.dailyDays = m_daily->value();
    return schedule;
}

} // namespace airlock
