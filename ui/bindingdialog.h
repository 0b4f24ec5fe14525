#pragma once

#include "core/model/credentialbinding.h"

#include <QDialog>
#include <functional>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace airlock {

/// Asks for a new credential binding: sandbox, secret, host, path prefix, methods and where
/// the secret goes (a header with a template, or HTTP Basic). Checked while typing with
/// CredentialBinding::validate (the helper's own rules); a second line warns when the
/// sandbox's policy would deny the binding's requests (`policyWarning`).
class BindingDialog final : public QDialog
{
    Q_OBJECT
public:
    using PolicyWarning = std::function<QString(const CredentialBinding &)>;

    BindingDialog(const QStringList &sandboxes, const QStringList &secrets,
                  PolicyWarning policyWarning, QWidget *parent = nullptr);

    /// The binding as typed (host canonicalized when valid).
    CredentialBinding binding() const;
    /// The validation problem in words, empty when the binding is valid.
    QString problem() const;
    QString policyWarningText() const;

    QComboBox *sandboxField() const { return m_sandbox; }
    QComboBox *secretField() const { return m_secret; }
    QLineEdit *hostField() const { return m_host; }
    QLineEdit *pathField() const { return m_path; }
    QLineEdit *templateField() const { return m_template; }

private:
    void validate();

    PolicyWarning m_policyWarning;
    QComboBox *m_sandbox;
    QComboBox *m_secret;
    QLineEdit *m_host;
    QLineEdit *m_path;
    QLineEdit *m_methods;
    QComboBox *m_kind;
    QLineEdit *m_header;
    QLineEdit *m_template;
    QLineEdit *m_username;
    QLabel *m_problem;
    QLabel *m_warning;
    QDialogButtonBox *m_buttons;
};

} // namespace airlock
