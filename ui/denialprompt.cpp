#include "ui/denialprompt.h"

#include "ui/policyamendment.h"
#include "ui/policydiff.h"
#include "ui/policytext.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

namespace airlock {

namespace {

QString timeText(const QDateTime &time)
{
    return QLocale().toString(time.toLocalTime(), QStringLiteral("HH:mm:ss"));
}

QString listOrAny(const QStringList &items, const QString &any)
{
    return items.isEmpty() ? any : joinListCell(items);
}

} // namespace

DenialPrompt::DenialPrompt(HelperClient *client, const DeniedDestination &destination,
                           QWidget *parent)
    : QDialog(parent)
    , m_client(client)
    , m_decision(new AllowDecision(destination, this))
    , m_name(new QRadioButton(this))
    , m_seen(new QRadioButton(this))
    , m_change(new QLabel(this))
    , m_status(new QLabel(this))
    , m_allow(new QPushButton(tr("&Allow"), this))
    , m_keepDenied(new QPushButton(tr("&Keep Denied"), this))
    , m_edit(new QPushButton(tr("&Edit in Policy Editor…"), this))
{
    setWindowTitle(tr("Allow %1 for %2?").arg(destination.name, destination.sandbox));
    QStringList ports;
    for (quint16 port : destination.ports)
        ports.append(QString::number(port));
    // Counted first: lupdate reads tr() calls, and a template argument inside one confuses it.
    const int count = int(std::min<qint64>(destination.count, INT_MAX));
    auto *what = new QLabel(
        tr("<b>%1</b> was denied <b>%2</b> %n time(s), first at %3, last at %4. It stays "
           "denied while you decide, and unless you allow it.",
           "", count)
            .arg(destination.sandbox.toHtmlEscaped(), destination.name.toHtmlEscaped(),
                 timeText(destination.first), timeText(destination.last)),
        this);
    what->setWordWrap(true);
    what->setTextFormat(Qt::RichText);
    auto *seen = new QLabel(tr("Seen: ports %1; methods %2; paths %3")
                                .arg(listOrAny(ports, tr("none (a lookup only)")),
                                     listOrAny(destination.methods, tr("none")),
                                     listOrAny(destination.paths, tr("none"))),
                            this);
    seen->setWordWrap(true);
    seen->setTextFormat(Qt::PlainText);

    const QString portText = listOrAny(ports, QString::number(EgressRule::kDefaultPort));
    m_name->setText(tr("Allow %1 for %2 (port %3, any method and path)")
                        .arg(destination.name, destination.sandbox, portText));
    m_seen->setText(tr("Allow only what was seen (port %1, methods %2, paths %3)")
                        .arg(portText, listOrAny(destination.methods, tr("any")),
                             listOrAny(destination.paths, tr("any"))));
    m_seen->setChecked(true);
    m_change->setWordWrap(true);
    m_change->setTextFormat(Qt::PlainText);
    m_change->setAccessibleName(tr("Policy change"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setAccessibleName(tr("Prompt status"));

    auto *buttons = new QDialogButtonBox(this);
    buttons->addButton(m_keepDenied, QDialogButtonBox::RejectRole);
    buttons->addButton(m_edit, QDialogButtonBox::ActionRole);
    buttons->addButton(m_allow, QDialogButtonBox::AcceptRole);
    // Enter must not allow: the safe answer is the default.
    m_allow->setAutoDefault(false);
    m_edit->setAutoDefault(false);
    m_keepDenied->setDefault(true);
    m_allow->setToolTip(tr("Add the rule shown to the sandbox's policy now"));
    m_keepDenied->setToolTip(tr("Leave the policy as it is; the destination stays denied"));

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(what);
    layout->addWidget(seen);
    layout->addWidget(m_name);
    layout->addWidget(m_seen);
    auto *changeTitle = new QLabel(tr("Change to the policy:"), this);
    layout->addWidget(changeTitle);
    layout->addWidget(m_change);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    connect(m_name, &QRadioButton::toggled, this, &DenialPrompt::updateChange);
    connect(m_allow, &QPushButton::clicked, this, &DenialPrompt::allow);
    connect(m_keepDenied, &QPushButton::clicked, m_decision, &AllowDecision::keepDenied);
    connect(m_edit, &QPushButton::clicked, this, [this] {
        const EgressRule rule = m_decision->ruleFor(choice(), QDateTime::currentDateTimeUtc());
        const QString sandbox = m_decision->destination().sandbox;
        m_decision->keepDenied(); // denied until applied in the editor; closes the prompt
        Q_EMIT editRequested(sandbox, rule);
    });
    // Keep Denied, closing and the timeout (an unanswered prompt) all end here.
    connect(m_decision, &AllowDecision::answered, this, [this](AllowDecision::Answer answer) {
        if (answer == AllowDecision::Answer::KeepDenied)
            QDialog::reject();
    });
    m_decision->setTimeout(kDefaultTimeoutMs);
    updateChange();
}

AllowDecision::Answer DenialPrompt::choice() const
{
    return m_name->isChecked() ? AllowDecision::Answer::AllowName
                               : AllowDecision::Answer::AllowSeen;
}

void DenialPrompt::setChoice(AllowDecision::Answer answer)
{
    (answer == AllowDecision::Answer::AllowName ? m_name : m_seen)->setChecked(true);
}

QString DenialPrompt::changeText() const
{
    return m_change->text();
}

QString DenialPrompt::statusText() const
{
    return m_status->text();
}

void DenialPrompt::updateChange()
{
    const EgressRule rule = m_decision->ruleFor(choice(), QDateTime::currentDateTimeUtc());
    m_change->setText(tr("+ %1 (in %2's policy)")
                          .arg(PolicyDiff::ruleSummary(rule), m_decision->destination().sandbox));
}

void DenialPrompt::allow()
{
    if (m_amendment || !m_decision->isPending())
        return;
    const AllowDecision::Answer answer = choice();
    const EgressRule rule = m_decision->ruleFor(answer, QDateTime::currentDateTimeUtc());
    // Deciding now: no timeout while the helper applies.
    m_decision->setTimeout(0);
    for (QWidget *widget : {static_cast<QWidget *>(m_allow), static_cast<QWidget *>(m_keepDenied),
                            static_cast<QWidget *>(m_edit), static_cast<QWidget *>(m_name),
                            static_cast<QWidget *>(m_seen)})
        widget->setEnabled(false);
    m_status->setText(tr("Applying…"));
    m_amendment = new PolicyAmendment(m_client, m_decision->destination().sandbox, rule, this);
    connect(m_amendment, &PolicyAmendment::finished, this,
            [this, answer](bool ok, const QString &text) {
                m_amendment->deleteLater();
                m_amendment = nullptr;
                m_status->setText(text);
                if (ok) {
                    m_decision->allowed(answer);
                    accept();
                    return;
                }
                // Still denied; the person may try again or keep it denied.
                for (QWidget *widget :
                     {static_cast<QWidget *>(m_allow), static_cast<QWidget *>(m_keepDenied),
                      static_cast<QWidget *>(m_edit), static_cast<QWidget *>(m_name),
                      static_cast<QWidget *>(m_seen)})
                    widget->setEnabled(true);
                m_decision->setTimeout(kDefaultTimeoutMs);
            });
    m_amendment->start();
}

void DenialPrompt::reject()
{
    if (m_amendment)
        return;
    if (m_decision->isPending())
        m_decision->closed(); // answered: KeepDenied, which closes the prompt
    else
        QDialog::reject();
}

} // namespace airlock
