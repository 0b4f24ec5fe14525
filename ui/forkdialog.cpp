#include "ui/forkdialog.h"

#include "ui/nametext.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace airlock {

ForkDialog::ForkDialog(const QString &sourceSandbox, const QString &snapshotText,
                       QStringList takenNames, QWidget *parent)
    : QDialog(parent)
    , m_taken(std::move(takenNames))
    , m_name(new QLineEdit(this))
    , m_problem(new QLabel(this))
    , m_bindings(new QCheckBox(tr("&Copy credential bindings (with fresh placeholders)"), this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Fork Snapshot"));
    auto *intro = new QLabel(tr("Start a new sandbox from the snapshot %1 of %2. %2 runs on "
                                "unchanged; the fork gets its own name, addresses and gateway, "
                                "and %2's egress policy.")
                                 .arg(snapshotText, sourceSandbox),
                             this);
    intro->setWordWrap(true);
    intro->setTextFormat(Qt::PlainText); // the snapshot's label is anyone's text
    m_name->setAccessibleName(tr("Name of the fork"));
    m_name->setPlaceholderText(tr("e.g. %1-try").arg(sourceSandbox));
    m_name->setMaxLength(63);
    m_problem->setAccessibleName(tr("Name problem"));
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setStyleSheet(QStringLiteral("color: #c0392b;"));
    auto *warning = new QLabel(tr("Credential bindings are <b>not</b> copied unless you check "
                                  "the box below: the fork cannot use %1's secrets. Copied "
                                  "bindings get fresh placeholders, so the fork never learns "
                                  "%1's.")
                                   .arg(sourceSandbox),
                               this);
    warning->setWordWrap(true);
    warning->setAccessibleName(tr("Credential bindings"));
    m_bindings->setAccessibleName(tr("Copy credential bindings into the fork"));

    auto *form = new QFormLayout;
    auto *nameLabel = new QLabel(tr("&Name:"), this);
    nameLabel->setBuddy(m_name);
    form->addRow(nameLabel, m_name);
    form->addRow(QString(), m_problem);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(warning);
    layout->addWidget(m_bindings);
    layout->addStretch(1);
    layout->addWidget(m_buttons);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Fork"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_name, &QLineEdit::textChanged, this, &ForkDialog::validate);
    validate();
    resize(460, sizeHint().height());
}

QString ForkDialog::name() const
{
    return m_name->text().trimmed();
}

bool ForkDialog::copyBindings() const
{
    return m_bindings->isChecked();
}

QString ForkDialog::problem() const
{
    const QString text = name();
    if (text.isEmpty())
        return {};
    if (const QString why = NameText::problem(text); !why.isEmpty())
        return why;
    if (m_taken.contains(text))
        return tr("A sandbox named “%1” already exists.").arg(text);
    return {};
}

void ForkDialog::validate()
{
    const QString why = problem();
    m_problem->setText(why);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!name().isEmpty() && why.isEmpty());
}

} // namespace airlock
