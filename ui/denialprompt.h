#pragma once

#include "core/client/helperclient.h"
#include "ui/allowdecision.h"

#include <QDialog>
#include <QPointer>

class QDialogButtonBox;
class QLabel;
class QPushButton;
class QRadioButton;

namespace airlock {

class PolicyAmendment;

/// The "Allow?" prompt for one denied destination of one sandbox: what was denied (how often,
/// when, the ports, methods and paths seen), two answers that allow (the name for this
/// sandbox, or only what was seen), each shown as the exact rule it adds, and Keep Denied. The
/// request stays denied while the prompt is open; Keep Denied is the default button, Escape,
/// closing the window and the timeout all keep it denied (AllowDecision). Allow applies the
/// rule at once through PolicyAmendment (policy.get, then one atomic policy.set); only when
/// the helper confirmed it is the answer an allow. "Edit in Policy Editor…" hands the rule to
/// the editor as a pending change instead.
class DenialPrompt final : public QDialog
{
    Q_OBJECT
public:
    /// Unanswered prompts close themselves after this long, keeping the destination denied.
    static constexpr int kDefaultTimeoutMs = 10 * 60 * 1000;

    DenialPrompt(HelperClient *client, const DeniedDestination &destination,
                 QWidget *parent = nullptr);

    AllowDecision *decision() const { return m_decision; }
    /// The answer the radio buttons choose (AllowName or AllowSeen).
    AllowDecision::Answer choice() const;
    void setChoice(AllowDecision::Answer answer);
    /// The rule the current choice would add, as one line (the reviewed change).
    QString changeText() const;
    /// The status line: "Applying…", the helper's answer or why it failed.
    QString statusText() const;
    QPushButton *allowButton() const { return m_allow; }
    QPushButton *keepDeniedButton() const { return m_keepDenied; }

public Q_SLOTS:
    /// Applies the chosen rule (what the Allow button does).
    void allow();
    /// Closing without an answer keeps the destination denied. Refused while applying, so the
    /// answer always says what the helper did.
    void reject() override;

Q_SIGNALS:
    /// The person wants to review the rule in the policy editor first.
    void editRequested(const QString &sandbox, const airlock::EgressRule &rule);

private:
    void updateChange();

    QPointer<HelperClient> m_client;
    AllowDecision *m_decision;
    QRadioButton *m_name;
    QRadioButton *m_seen;
    QLabel *m_change;
    QLabel *m_status;
    QPushButton *m_allow;
    QPushButton *m_keepDenied;
    QPushButton *m_edit;
    PolicyAmendment *m_amendment = nullptr;
};

} // namespace airlock
