#pragma once

#include "core/model/egresspolicy.h"
#include "ui/egressentry.h"

#include <QPointer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTimer;

namespace airlock {

class DestinationCountModel;
class EgressEventModel;
class EgressFilterProxy;
class EgressMapView;
class HelperClient;
class LearnListModel;
class ProbingMonitor;
class SandboxTableModel;

/// The live egress view: every decision of every sandbox's gateway (filters by sandbox,
/// verdict and text), per-destination counts, the egress map of the chosen sandbox, learn mode
/// and its review list, and the probing threshold. "Allow This Host…" on a denied decision
/// and "Add as Rules…" on learned destinations ask the main window to open the policy editor
/// with prefilled rules (allowRequested); nothing is applied from here.
class EgressView final : public QWidget
{
    Q_OBJECT
public:
    EgressView(HelperClient *client, SandboxTableModel *sandboxes, QWidget *parent = nullptr);

    EgressEventModel *events() const { return m_events; }
    EgressFilterProxy *filter() const { return m_filter; }
    DestinationCountModel *destinations() const { return m_destinations; }
    LearnListModel *learnList() const { return m_learn; }
    ProbingMonitor *probing() const { return m_probing; }
    EgressMapView *map() const { return m_map; }
    QTableView *eventTable() const { return m_table; }
    /// The Destinations tab: allowed and denied requests per destination.
    QTableView *countTable() const { return m_countTable; }
    /// The line under the table: how many decisions the filters show and how many of those
    /// were denied, with the total when the filters hide some ("Decisions shown: 9 of 21,
    /// denied: 6").
    QString summary() const;

    /// Shows `sandbox` in the filter and the map ("" = every sandbox).
    void setSandbox(const QString &sandbox);
    /// The sandbox selected in the main table: the map shows it while the filter shows every
    /// sandbox (a map of all sandboxes at once would not say whose destination is whose).
    void setSelectedSandbox(const QString &sandbox);
    /// The rule "Allow This Host…" proposes for a denied decision: its host (exact), its port,
    /// its method when the decision was about one; no path limit.
    static EgressRule ruleFor(const EgressEntry &entry);

public Q_SLOTS:
    /// Reads every sandbox's recorded history (egress.history).
    void loadHistory();
    /// Opens the editor for the selected denied decision (allowRequested).
    void allowSelected();

Q_SIGNALS:
    /// The person asked to allow something: open `sandbox`'s editor with `rules` pending.
    void allowRequested(const QString &sandbox, const QList<airlock::EgressRule> &rules);
    /// A live decision with `alert: true` arrived (credential_exfil, or a response that carried
    /// a secret and was scrubbed); recorded history never raises one.
    void credentialAlert(const airlock::EgressEntry &entry);

private:
    void onNotification(const QString &method, const QJsonObject &params);
    void onEntry(const EgressEntry &entry, bool live);
    void updateSandboxChoices();
    void updateActions();
    void updateSummary();
    /// The filter's sandbox, else the selected one, else the only one there is.
    void updateMapSandbox();
    const EgressEntry *selectedEntry() const;

    QPointer<HelperClient> m_client;
    QPointer<SandboxTableModel> m_sandboxes;
    EgressEventModel *m_events;
    EgressFilterProxy *m_filter;
    DestinationCountModel *m_destinations;
    LearnListModel *m_learn;
    ProbingMonitor *m_probing;
    QComboBox *m_sandbox;
    QComboBox *m_verdict;
    QLineEdit *m_text;
    QCheckBox *m_learnMode;
    QSpinBox *m_threshold;
    QTableView *m_table;
    QPushButton *m_allowButton;
    QTabWidget *m_sideTabs;
    EgressMapView *m_map;
    QString m_selectedSandbox;
    /// The table was scrolled to its newest row before rows arrived: it follows them.
    bool m_followNewest = true;
    QTableView *m_countTable;
    QTableView *m_learnTable;
    QPushButton *m_promoteButton;
    QPushButton *m_dismissButton;
    QLabel *m_summary;
    QTimer *m_summaryUpdate; // one count per burst of rows (history, filter changes)
};

} // namespace airlock
