#include "ui/sandboxdetailsview.h"

#include "ui/sandboxtablemodel.h"

#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace airlock {

SandboxDetailsView::SandboxDetailsView(QWidget *parent)
    : QWidget(parent)
    , m_fields(new QLabel(this))
    , m_warning(new QLabel(this))
    , m_restart(new QPushButton(tr("Re&start Sandbox"), this))
{
    m_restart->setAccessibleName(tr("Restart the sandbox to give its guest its own identity"));
    m_restart->setVisible(false);
    connect(m_restart, &QPushButton::clicked, this, [this] { Q_EMIT restartRequested(m_sandbox); });
    m_fields->setTextFormat(Qt::RichText);
    m_fields->setWordWrap(true);
    m_fields->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_fields->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fields->setAccessibleName(tr("Sandbox details"));
    m_fields->setObjectName(QStringLiteral("sandboxDetailsFields"));
    // The helper's warning is anyone's text: plain, never markup.
    m_warning->setTextFormat(Qt::PlainText);
    m_warning->setWordWrap(true);
    m_warning->setAccessibleName(tr("Identity warning"));
    m_warning->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; "
                                            "border: 1px solid #e0b000; border-radius: 3px; "
                                            "padding: 4px; }"));
    m_warning->setVisible(false);
    // The warning first: it is what needs doing. A narrow pane scrolls rather than cuts.
    auto *content = new QWidget;
    auto *contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(6, 4, 6, 4);
    contentLayout->addWidget(m_warning);
    contentLayout->addWidget(m_restart, 0, Qt::AlignLeft);
    contentLayout->addWidget(m_fields);
    contentLayout->addStretch(1);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
    setSandbox(nullptr);
}

void SandboxDetailsView::setSandbox(const Sandbox *sandbox)
{
    m_sandbox = sandbox ? sandbox->spec.name : QString();
    if (!sandbox) {
        m_restart->setVisible(false);
        m_plain = tr("Select a sandbox to see its details.");
        m_fields->setText(m_plain.toHtmlEscaped());
        m_warning->clear();
        m_warning->setVisible(false);
        setAccessibleDescription(m_plain);
        return;
    }
    const bool running = sandbox->state != SandboxState::Stopped;
    QString state = SandboxTableModel::stateText(sandbox->state);
    if (!sandbox->stateReason.isEmpty())
        state = tr("%1 (%2)").arg(state, sandbox->stateReason);
    const QString started = running && sandbox->startedAt.isValid()
        ? QLocale().toString(sandbox->startedAt.toLocalTime(), QLocale::ShortFormat)
        : QString();
    // Why KVM is not used is in the acceleration column's tooltip and the status bar.
    const QList<std::pair<QString, QString>> rows {
        {tr("Name"), sandbox->spec.name},
        {tr("State"), state},
        {tr("Started"),
         running ? SandboxTableModel::startSourceText(sandbox->startedFrom) : QString()},
        {tr("Started at"), started},
        {tr("Image"), sandbox->spec.image},
        {tr("vCPUs"), QString::number(sandbox->spec.vcpus)},
        {tr("Memory"), tr("%1 MiB").arg(sandbox->spec.memoryMib)},
        {tr("VMM"), SandboxTableModel::vmmText(sandbox->spec.vmm)},
        {tr("Acceleration"), SandboxTableModel::accelerationText(sandbox->acceleration)},
    };
    // The client's labels (airlock-e2b: the E2B sandbox's metadata), one "key = value" line
    // each, sorted by key: untrusted text, escaped like every value here.
    QStringList labels;
    for (auto it = sandbox->spec.labels.begin(); it != sandbox->spec.labels.end(); ++it)
        labels.append(tr("%1 = %2").arg(it.key(), it.value()));
    QStringList plain;
    QString html = QStringLiteral("<table cellspacing=\"0\" cellpadding=\"1\">");
    for (const auto &[field, value] : rows) {
        if (value.isEmpty())
            continue;
        plain.append(tr("%1: %2").arg(field, value));
        html += QStringLiteral("<tr><td><b>%1:</b>&nbsp;</td><td>%2</td></tr>")
                    .arg(field.toHtmlEscaped(), value.toHtmlEscaped());
    }
    if (!labels.isEmpty()) {
        plain.append(tr("%1: %2").arg(tr("Labels"), labels.join(QStringLiteral("; "))));
        QStringList escaped;
        for (const QString &label : labels)
            escaped.append(label.toHtmlEscaped());
        html += QStringLiteral("<tr><td valign=\"top\"><b>%1:</b>&nbsp;</td><td>%2</td></tr>")
                    .arg(tr("Labels").toHtmlEscaped(), escaped.join(QStringLiteral("<br>")));
    }
    html += QStringLiteral("</table>");
    m_fields->setText(html);
    const QString warning = SandboxTableModel::identityWarningText(sandbox->identityWarning);
    m_warning->setText(warning.isEmpty() ? QString() : QStringLiteral("⚠ ") + warning);
    m_warning->setVisible(!warning.isEmpty());
    // Only a running guest can be restarted; a stopping one is on its way already.
    m_restart->setVisible(!warning.isEmpty() && sandbox->state == SandboxState::Running);
    if (!warning.isEmpty())
        plain.prepend(warning);
    m_plain = plain.join(QLatin1Char('\n'));
    setAccessibleDescription(m_plain);
}

QString SandboxDetailsView::text() const
{
    return m_plain;
}

QString SandboxDetailsView::identityWarningText() const
{
    return m_warning->text();
}

} // namespace airlock
