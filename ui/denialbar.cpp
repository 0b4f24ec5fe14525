#include "ui/denialbar.h"

#include "ui/denialnotifier.h"

#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>

namespace airlock {

DenialBar::DenialBar(DenialNotifier *notifier, QWidget *parent)
    : QFrame(parent)
    , m_notifier(notifier)
    , m_icon(new QLabel(this))
    , m_text(new QLabel(this))
    , m_prompt(new QPushButton(tr("Allo&w?…"), this))
    , m_keepAll(new QPushButton(tr("Keep All &Denied"), this))
{
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::ToolTipBase);
    setForegroundRole(QPalette::ToolTipText);
    setAccessibleName(tr("Denied destinations waiting for an answer"));
    m_icon->setPixmap(QIcon(QStringLiteral(":/icons/alert.svg")).pixmap(20, 20));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::PlainText);
    m_prompt->setAccessibleName(tr("Answer the oldest denied destination"));
    m_prompt->setToolTip(tr("Decide whether the sandbox may reach it; it stays denied until "
                            "you allow it"));
    m_keepAll->setToolTip(tr("Stop asking about these destinations; they stay denied"));
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(8, 4, 8, 4);
    row->addWidget(m_icon, 0, Qt::AlignVCenter);
    row->addWidget(m_text, 1);
    row->addWidget(m_prompt, 0, Qt::AlignVCenter);
    row->addWidget(m_keepAll, 0, Qt::AlignVCenter);

    connect(m_prompt, &QPushButton::clicked, this, [this] {
        if (!m_notifier)
            return;
        const QList<DeniedDestination> open = m_notifier->open();
        if (!open.isEmpty())
            Q_EMIT promptRequested(open.constFirst().sandbox, open.constFirst().name);
    });
    connect(m_keepAll, &QPushButton::clicked, this, [this] {
        if (!m_notifier)
            return;
        for (const DeniedDestination &destination : m_notifier->open())
            m_notifier->keepDenied(destination.sandbox, destination.name);
    });
    if (notifier)
        connect(notifier, &DenialNotifier::openChanged, this, &DenialBar::update);
    update();
}

void DenialBar::setTrayAvailable(bool available)
{
    m_trayAvailable = available;
    update();
}

QString DenialBar::text() const
{
    return m_text->text();
}

void DenialBar::update()
{
    const QList<DeniedDestination> open =
        m_notifier ? m_notifier->open() : QList<DeniedDestination> {};
    QStringList names;
    for (const DeniedDestination &destination :
         open.first(std::min<qsizetype>(open.size(), kNamesShown)))
        names.append(tr("%1 (%2)").arg(destination.name, destination.sandbox));
    const qsizetype more = open.size() - names.size();
    m_text->setText(
        open.isEmpty() ? QString()
            : more > 0
            ? tr("Denied, waiting for your answer: %1 and %n more.", "", int(more))
                  .arg(names.join(QStringLiteral(", ")))
            : tr("Denied, waiting for your answer: %1.").arg(names.join(QStringLiteral(", "))));
    setVisible(!open.isEmpty() && !m_trayAvailable);
}

} // namespace airlock
