#pragma once

#include <QDialog>
#include <QStringList>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace airlock {

/// Asks for the name of a fork (a new sandbox started from a snapshot while the original runs
/// on). The name is checked as the helper does (validateName, in NameText's words) and against
/// the names in use.
/// Says that credential bindings are not copied by default and offers to copy them with fresh
/// placeholders (`snapshot.fork` param `bindings: true`).
class ForkDialog final : public QDialog
{
    Q_OBJECT
public:
    /// `snapshotText` names the snapshot in the question ("“before upgrade” of 10:42").
    ForkDialog(const QString &sourceSandbox, const QString &snapshotText, QStringList takenNames,
               QWidget *parent = nullptr);

    QString name() const;
    bool copyBindings() const;
    QLineEdit *nameEdit() const { return m_name; }
    QCheckBox *bindingsBox() const { return m_bindings; }
    /// Why the name cannot be used, empty when it can (or nothing was typed yet).
    QString problem() const;

private:
    void validate();

    QStringList m_taken;
    QLineEdit *m_name;
    QLabel *m_problem;
    QCheckBox *m_bindings;
    QDialogButtonBox *m_buttons;
};

} // namespace airlock
