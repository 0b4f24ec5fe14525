#pragma once

#include "core/model/secretvalue.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace airlock {

/// Asks for a secret's name and value. The value field is a password field (echo mode
/// Password, no undo, no drag, no context menu) that never shows a stored value: the helper
/// never returns one, and the field starts empty even when replacing. takeValue() moves the
/// typed value into a SecretValue and clears the field, so the dialog holds it only until
/// it is sent.
class SetSecretDialog final : public QDialog
{
    Q_OBJECT
public:
    /// `name`: a secret to replace (the name field is then read-only), or empty for a new one.
    explicit SetSecretDialog(const QString &name = {}, QWidget *parent = nullptr);
    ~SetSecretDialog() override;

    QString name() const;
    /// The typed value; clears the field. Call once, after accept.
    SecretValue takeValue();
    QLineEdit *valueField() const { return m_value; }
    QLineEdit *nameField() const { return m_name; }

    void done(int result) override;

private:
    void validate();

    QLineEdit *m_name;
    QLineEdit *m_value;
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
};

} // namespace airlock
