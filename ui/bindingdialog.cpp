#include "ui/bindingdialog.h"

#include "core/model/hostname.h"
#include "ui/policytext.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace airlock {

BindingDialog::BindingDialog(const QStringList &sandboxes, const QStringList &secrets,
                             PolicyWarning policyWarning, QWidget *parent)
    : QDialog(parent)
    , m_policyWarning(std::move(policyWarning))
    , m_sandbox(new QComboBox(this))
    , m_secret(new QComboBox(this))
    , m_host(new QLineEdit(this))
    , m_path(new QLineEdit(this))
    , m_methods(new QLineEdit(this))
    , m_kind(new QComboBox(this))
    , m_header(new QLineEdit(QStringLiteral("Authorization"), this))
    , m_template(new QLineEdit(QStringLiteral("Bearer {secret}"), this))
    , m_username(new QLineEdit(this))
    , m_problem(new QLabel(this))
    , m_warning(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Add Credential Binding"));
    m_sandbox->addItems(sandboxes);
    m_sandbox->setAccessibleName(tr("Sandbox"));
    m_secret->addItems(secrets);
    m_secret->setAccessibleName(tr("Secret"));
    m_host->setPlaceholderText(tr("e.g. api.github.com"));
    m_host->setAccessibleName(tr("Host"));
    m_path->setPlaceholderText(tr("optional, e.g. /repos/"));
    m_path->setAccessibleName(tr("Path prefix"));
    m_methods->setPlaceholderText(tr("optional, e.g. GET, POST"));
    m_methods->setAccessibleName(tr("Methods"));
    m_kind->addItem(tr("Header"), int(CredentialPlacement::Kind::Header));
    m_kind->addItem(tr("HTTP Basic"), int(CredentialPlacement::Kind::Basic));
    m_kind->setAccessibleName(tr("Placement"));
    m_header->setAccessibleName(tr("Header name"));
    m_template->setAccessibleName(tr("Header template"));
    m_template->setToolTip(tr("{secret} is replaced by the value at the gateway"));
    m_username->setAccessibleName(tr("Basic user name"));
    for (QLabel *label : {m_problem, m_warning}) {
        label->setWordWrap(true);
        label->setTextFormat(Qt::PlainText);
    }
    m_problem->setStyleSheet(QStringLiteral("color: #b02020;"));
    m_problem->setAccessibleName(tr("Binding problem"));
    m_warning->setStyleSheet(QStringLiteral("color: #b35c00;"));
    m_warning->setAccessibleName(tr("Policy warning"));

    auto *form = new QFormLayout;
    form->addRow(tr("Sand&box:"), m_sandbox);
    form->addRow(tr("&Secret:"), m_secret);
    form->addRow(tr("&Host:"), m_host);
    form->addRow(tr("&Path prefix:"), m_path);
    form->addRow(tr("&Methods:"), m_methods);
    form->addRow(tr("P&lacement:"), m_kind);
    form->addRow(tr("Header &name:"), m_header);
    form->addRow(tr("&Template:"), m_template);
    form->addRow(tr("&User name:"), m_username);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(m_warning);
    layout->addWidget(m_buttons);

    for (QLineEdit *edit : {m_host, m_path, m_methods, m_header, m_template, m_username})
        connect(edit, &QLineEdit::textChanged, this, &BindingDialog::validate);
    for (QComboBox *box : {m_sandbox, m_secret, m_kind})
        connect(box, &QComboBox::currentIndexChanged, this, &BindingDialog::validate);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    validate();
}

CredentialBinding BindingDialog::binding() const
{
    CredentialBinding binding;
    binding.sandbox = m_sandbox->currentText();
    binding.secret = m_secret->currentText();
    auto host = canonicalizeHostname(m_host->text().trimmed());
    binding.host = host ? *host : m_host->text().trimmed();
    binding.pathPrefix = m_path->text().trimmed();
    binding.methods = splitListCell(m_methods->text());
    if (CredentialPlacement::Kind(m_kind->currentData().toInt())
        == CredentialPlacement::Kind::Basic) {
        binding.placement.kind = CredentialPlacement::Kind::Basic;
        binding.placement.username = m_username->text();
    } else {
        binding.placement.header = m_header->text().trimmed();
        binding.placement.valueTemplate = m_template->text();
    }
    return binding;
}

QString BindingDialog::problem() const
{
    return m_problem->text();
}

QString BindingDialog::policyWarningText() const
{
    return m_warning->text();
}

void BindingDialog::validate()
{
    const bool basic = CredentialPlacement::Kind(m_kind->currentData().toInt())
        == CredentialPlacement::Kind::Basic;
    m_header->setEnabled(!basic);
    m_template->setEnabled(!basic);
    m_username->setEnabled(basic);

    const CredentialBinding candidate = binding();
    QString problem;
    if (m_sandbox->count() == 0)
        problem = tr("Create a sandbox first.");
    else if (m_secret->count() == 0)
        problem = tr("Store a secret first.");
    else if (auto host = canonicalizeHostname(m_host->text().trimmed()); !host)
        problem = m_host->text().contains(QLatin1Char('*'))
            ? tr("A binding names one exact host; wildcards are not allowed.")
            : PolicyText::hostProblem(host.error().reason);
    else if (auto ok = candidate.validate(); !ok)
        problem = ok.error().message;
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    const QString warning =
        problem.isEmpty() && m_policyWarning ? m_policyWarning(candidate) : QString();
    m_warning->setText(warning);
    m_warning->setVisible(!warning.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

} // namespace airlock
