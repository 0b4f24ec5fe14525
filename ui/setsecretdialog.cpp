#include "ui/setsecretdialog.h"

#include "core/model/names.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace airlock {

SetSecretDialog::SetSecretDialog(const QString &name, QWidget *parent)
    : QDialog(parent)
    , m_name(new QLineEdit(name, this))
    , m_value(new QLineEdit(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(name.isEmpty() ? tr("Set Secret") : tr("Replace Secret “%1”").arg(name));
    m_name->setReadOnly(!name.isEmpty());
    m_name->setPlaceholderText(tr("e.g. github-token"));
    m_name->setMaxLength(63);
    m_name->setAccessibleName(tr("Secret name"));
    m_value->setEchoMode(QLineEdit::Password);
    m_value->setMaxLength(int(SecretValue::kMaxBytes));
    m_value->setPlaceholderText(tr("paste the token or password"));
    m_value->setAccessibleName(tr("Secret value"));
    m_value->setContextMenuPolicy(Qt::NoContextMenu);
    m_value->setDragEnabled(false);
    m_value->setAttribute(Qt::WA_InputMethodEnabled, false);
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setStyleSheet(QStringLiteral("color: #b02020;"));
    m_problem->setAccessibleName(tr("Secret problem"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Store"));

    auto *note = new QLabel(tr("The value is sent once to the helper, stored encrypted, and "
                               "never shown again — not here, not to the sandbox."),
                            this);
    note->setWordWrap(true);
    auto *form = new QFormLayout;
    form->addRow(tr("&Name:"), m_name);
    form->addRow(tr("&Value:"), m_value);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    connect(m_name, &QLineEdit::textChanged, this, &SetSecretDialog::validate);
    connect(m_value, &QLineEdit::textChanged, this, &SetSecretDialog::validate);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    (name.isEmpty() ? m_name : m_value)->setFocus();
    validate();
}

SetSecretDialog::~SetSecretDialog()
{
    m_value->clear();
}

QString SetSecretDialog::name() const
{
    return m_name->text();
}

SecretValue SetSecretDialog::takeValue()
{
    QByteArray bytes = m_value->text().toUtf8();
    SecretValue value(bytes);
    bytes.fill('\0');
    m_value->clear();
    return value;
}

void SetSecretDialog::done(int result)
{
    // A cancelled dialog forgets the value at once.
    if (result != QDialog::Accepted)
        m_value->clear();
    QDialog::done(result);
}

void SetSecretDialog::validate()
{
    QString problem;
    if (!m_name->text().isEmpty()) {
        if (auto ok = validateName(m_name->text(), u"secret name"); !ok)
            problem = tr("Names use a-z, 0-9 and '-' and start with a letter or digit.");
    }
    if (problem.isEmpty() && m_value->text().toUtf8().size() > SecretValue::kMaxBytes)
        problem = tr("The value may have at most 64 KiB.");
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)
        ->setEnabled(problem.isEmpty() && !m_name->text().isEmpty() && !m_value->text().isEmpty());
}

} // namespace airlock
