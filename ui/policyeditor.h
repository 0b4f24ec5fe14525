#pragma once

#include "core/model/egresspolicy.h"

#include <QDialog>
#include <QPointer>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTableView;
class QToolButton;

namespace airlock {

class DryRunModel;
class HelperClient;
class PolicyHistoryModel;
class PolicyRuleModel;

/// The policy editor of one sandbox (a window of its own). A rule table with inline problems
/// in words, rules from templates, import and export of policy files, undo and redo, the
/// pending changes against the applied policy, a dry run against the sandbox's recorded
/// egress history, and Apply: one atomic `policy.set` after `policy.validate`, whose errors
/// appear next to the rules they concern. Nothing changes on the helper before Apply. The
/// History tab lists the recorded changes of the policy (`policy.history`: when, who, through
/// what, the rules added and removed); Revert to This Version puts one of them into the editor
/// as pending changes, applied (as a `revert`) like any other edit.
class PolicyEditor final : public QDialog
{
    Q_OBJECT
public:
    /// Dry-run windows offered, in seconds back from now (0: everything recorded).
    static QList<int> dryRunWindows() { return {3600, 24 * 3600, 7 * 24 * 3600, 0}; }

    PolicyEditor(HelperClient *client, const QString &sandbox, QWidget *parent = nullptr);
    ~PolicyEditor() override;

    QString sandbox() const { return m_sandbox; }
    PolicyRuleModel *model() const { return m_model; }
    DryRunModel *dryRunModel() const { return m_dryRun; }
    PolicyHistoryModel *historyModel() const { return m_history; }
    QTableView *historyTable() const { return m_historyTable; }
    /// The line above the history ("4 recorded changes.", errors).
    QString historyNoteText() const;
    QTableView *table() const { return m_table; }
    /// The policy last read from or written to the helper.
    const EgressPolicy &appliedPolicy() const { return m_applied; }
    bool isLoaded() const { return m_loaded; }
    /// The pending changes as text, one line per change (empty: nothing pending).
    QString pendingChangesText() const;
    /// The status line under the table ("Applied.", errors, dry-run summary).
    QString statusText() const;

public Q_SLOTS:
    /// Reads the applied policy (policy.get) and discards unapplied edits.
    void reload();
    /// Appends rules as one undoable step and selects the first; they are pending until Apply.
    void addRules(const QList<airlock::EgressRule> &rules);
    /// Validates with the helper, then applies atomically.
    void apply();
    /// Runs `policy.dryRun` for the edited policy over the window at `windowIndex` of
    /// dryRunWindows().
    void runDryRun(int windowIndex = -1);
    bool importFile(const QString &path);
    /// Reads the recorded changes again (`policy.history`).
    void reloadHistory();
    /// Puts the policy of history row `row` into the editor as pending changes (one undo
    /// step). False when the helper did not keep that policy (over 64 KiB) or row is invalid.
    bool revertTo(int row);
    bool exportFile(const QString &path);

Q_SIGNALS:
    void loaded();
    void applied();
    void applyFailed(const QString &text);
    void dryRunFinished();
    void historyLoaded();

private:
    void buildActions();
    void updateState();
    void updateProblemLabel();
    void setStatus(const QString &text, bool error = false);
    void addTemplate(const QString &resourcePath);
    void onNotification(const QString &method, const QJsonObject &params);

    QPointer<HelperClient> m_client;
    QString m_sandbox;
    EgressPolicy m_applied;
    bool m_loaded = false;
    bool m_busy = false;
    PolicyRuleModel *m_model;
    DryRunModel *m_dryRun;
    QTableView *m_table;
    QLabel *m_problem;
    QTabWidget *m_bottomTabs;
    QPlainTextEdit *m_diff;
    QComboBox *m_window;
    QPushButton *m_dryRunButton;
    QTableView *m_dryRunTable;
    QLabel *m_dryRunSummary;
    PolicyHistoryModel *m_history;
    QTableView *m_historyTable;
    QLabel *m_historyNote;
    QPushButton *m_revertToButton;
    /// The revision a Revert to This Version loaded: applying exactly it is a `revert`.
    QString m_revertTarget;
    QLabel *m_status;
    QPushButton *m_applyButton;
    QPushButton *m_revertButton;
    QToolButton *m_templateButton;
};

} // namespace airlock
