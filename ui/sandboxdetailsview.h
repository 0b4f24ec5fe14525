#pragma once

#include "core/model/sandbox.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace airlock {

/// The Sandboxes section's details of the sandbox selected in the table: state (and why it
/// stopped), image and shape, acceleration, when and from what it started (`startedFrom`:
/// booted, from template, from snapshot), its labels (a client's notes, e.g. E2B metadata),
/// and the helper's `identityWarning` as a warning box
/// that says what to do (restart the sandbox). Plain text for tests and screen readers in
/// text().
class SandboxDetailsView final : public QWidget
{
    Q_OBJECT
public:
    explicit SandboxDetailsView(QWidget *parent = nullptr);

    /// Shows `sandbox` (a copy is kept), or the "nothing selected" hint for nullptr.
    void setSandbox(const Sandbox *sandbox);
    /// "Field: value" lines as shown, then the warning box's text; the hint when empty.
    QString text() const;
    /// The identity warning box's text (what to do, then the helper's words); empty if hidden.
    QString identityWarningText() const;
    /// "Restart Sandbox" under the identity warning (shown with it).
    QPushButton *restartButton() const { return m_restart; }

Q_SIGNALS:
    /// The person asked to restart the shown sandbox (its guest did not confirm its identity).
    void restartRequested(const QString &sandbox);

private:
    QLabel *m_fields;
    QLabel *m_warning;
    QPushButton *m_restart;
    QString m_sandbox;
    QString m_plain;
};

} // namespace airlock
