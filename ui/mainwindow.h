#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/ssh/sshendpoint.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>

class QAction;
class QLabel;
class QPushButton;
class QStackedWidget;
class QLayout;
class QTabWidget;
class QTableView;

namespace airlock {

class ConnectionPage;
class ConsoleTab;
class FilesTab;
class CredentialsView;
class DenialBar;
class DenialNotifier;
class DenialPrompt;
class DenialTray;
class EgressView;
class HelperClient;
class HostConnection;
class HostSidebar;
class PolicyEditor;
class SandboxActions;
class SandboxDetailsView;
struct EgressEntry;
struct EgressRule;
class SandboxTableModel;
class SnapshotsView;

/// The Airlock window: a sidebar with every host (this computer's helper and remote ones over
/// SSH, each with its state) and its sandboxes; the current host's sandbox table, a tab per
/// open console, actions New/Start/Stop/Delete/Open Console, and the current host's connection
/// in the status bar. Without a helper (or without permission) it shows what is wrong and how
/// to fix it, with a Retry button.
class MainWindow final : public QMainWindow
{
    Q_OBJECT
public:
    /// Does not take ownership of `client`; call client->connectToHelper() after constructing.
    explicit MainWindow(HelperClient *client, QWidget *parent = nullptr);
    ~MainWindow() override;

    /// The current host's sandboxes (the table's model).
    SandboxTableModel *model() const { return m_model; }
    HostSidebar *sidebar() const { return m_sidebar; }
    /// This computer's helper first, then the remote hosts in settings order.
    QList<HostConnection *> hosts() const;
    HostConnection *currentHost() const { return m_activeHost; }
    /// Connects to these remote hosts (as stored by HostStore): hosts already connected with
    /// the same settings stay, others are disconnected and removed, new ones connect.
    void setRemoteHosts(const QList<SshEndpoint> &endpoints);
    /// Shows `host`'s sandboxes in the table and acts on its helper.
    void setCurrentHost(HostConnection *host);
    QTableView *table() const { return m_table; }
    /// The details of the sandbox selected in the table (beside the table).
    SandboxDetailsView *details() const { return m_details; }
    QTabWidget *consoleTabs() const { return m_tabs; }
    /// The open console tab of `sandbox`, or nullptr.
    ConsoleTab *consoleTab(const QString &sandbox) const;
    /// The open Files tab of `sandbox`, or nullptr.
    FilesTab *filesTab(const QString &sandbox) const;
    /// True while the window shows a connection problem (placeholder page or banner).
    bool isShowingConnectionProblem() const;
    /// The connection problem text on screen (title, fix and detail), empty when connected.
    QString connectionProblemText() const;
    /// The status bar text, e.g. "Connected to local helper at ... (TCG: software emulation)".
    QString statusText() const;
    /// The sections: Sandboxes (table and consoles), Egress, Credentials, Snapshots.
    QTabWidget *sections() const { return m_sections; }
    EgressView *egressView() const { return m_egressView; }
    CredentialsView *credentialsView() const { return m_credentialsView; }
    /// The Snapshots section (the timeline of the sandbox selected in the table).
    SnapshotsView *snapshotsView() const { return m_snapshotsView; }
    /// The open policy editor of `sandbox`, or nullptr.
    PolicyEditor *policyEditor(const QString &sandbox) const;
    /// What the window asks the current host's helper to do with sandboxes.
    SandboxActions *actions() const { return m_actions; }
    /// The last desktop notification (also shown in the status bar), for tests.
    QString lastNotification() const { return m_lastNotification; }
    /// What decides which denied destinations are news and which wait for an answer.
    DenialNotifier *denials() const { return m_denials; }
    /// The in-window bar of denied destinations (shown where the desktop has no tray).
    DenialBar *denialBar() const { return m_denialBar; }
    /// The open "Allow?" prompt of `sandbox`'s denied `name`, or nullptr.
    DenialPrompt *denialPrompt(const QString &sandbox, const QString &name) const;
    /// The window's default size, and the smallest it can be made: names stay readable.
    static QSize defaultSize() { return {1280, 800}; }
    static QSize minimumWindowSize() { return {900, 600}; }

public Q_SLOTS:
    /// Opens (or brings forward) the console tab of `sandbox` and focuses it.
    ConsoleTab *openConsole(const QString &sandbox);
    /// Opens (or brings forward) the Files tab of `sandbox` (guest files, Run command, the
    /// workspace dialogs), in the same tab area as the consoles.
    FilesTab *openFiles(const QString &sandbox);
    /// Opens the console of `sandbox` as soon as the sandbox list contains it.
    void openConsoleWhenListed(const QString &sandbox);
    /// The SandboxActions of the current host (see there); failures open a message box and
    /// emit actionFailed(), a start opens the console, a restart's progress goes to the status
    /// bar. `boot` is sandbox.create's `boot` param ("template", "cold"; empty: the default).
    void createSandbox(const airlock::SandboxSpec &spec, bool start, const QString &boot = {});
    void startSandbox(const QString &sandbox);
    void stopSandbox(const QString &sandbox);
    /// Stop, then start once stopped (SandboxActions::restart).
    void restartSandbox(const QString &sandbox);
    void killSandbox(const QString &sandbox);
    /// vm.pause / vm.resume: the guest's CPUs stop or run on; the state shows "Paused".
    void pauseSandbox(const QString &sandbox);
    void resumeSandbox(const QString &sandbox);
    /// Shows the Snapshots section with `sandbox`'s timeline.
    void showTimeline(const QString &sandbox);
    /// Asks for confirmation, then deletes.
    void deleteSandbox(const QString &sandbox);
    void retryConnection();
    /// The connections manager; OK saves the hosts in QSettings and connects to them.
    void showConnectionsDialog();
    /// Opens (or raises) the policy editor of `sandbox`.
    PolicyEditor *openPolicyEditor(const QString &sandbox);
    /// Opens the editor of `sandbox` with `rules` added as pending changes (not applied).
    PolicyEditor *proposeRules(const QString &sandbox, const QList<airlock::EgressRule> &rules);
    /// Opens (or raises) the "Allow?" prompt of `sandbox`'s denied `name` (nullptr when that
    /// destination does not wait for an answer).
    DenialPrompt *openDenialPrompt(const QString &sandbox, const QString &name);

Q_SIGNALS:
    /// An action failed; the same text is shown in a message box.
    void actionFailed(const QString &text, const airlock::Error &error);

private:
    void createActions();
    void createMenus();
    void onReady();
    void onConnectionLost(const Error &error);
    void watchHost(HostConnection *host);
    void watchModel(SandboxTableModel *model);
    /// Turns SandboxActions' results into the window's: selection, console tab, message box,
    /// status bar.
    void watchActions();
    void showHostProblem();
    void onSelectionChanged();
    void updateActions();
    void updateDetails();
    void closeConsoleTab(int index);
    void showNewSandboxDialog();
    void showActionError(const QString &text, const Error &error);
    void showAbout();
    /// Status bar and, where there is a tray, a desktop notification; a denial's notification
    /// names its `sandbox` and `name`, so clicking it opens the prompt.
    void notify(const QString &title, const QString &text, const QString &sandbox = {},
                const QString &name = {});
    /// Builds the denial notifier, bar, tray and their connections.
    void watchDenials(QWidget *barParent, QLayout *barLayout);
    /// Badge and desktop notification for a live egress event with `alert: true`.
    void onCredentialAlert(const EgressEntry &entry);
    void checkPendingConsole();
    QString selectedSandbox() const;
    /// After a successful delete: closes the sandbox's console tabs and drops its row.
    void forgetSandbox(const QString &sandbox);

    QPointer<HelperClient> m_client; // the current host's
    SandboxTableModel *m_localModel;
    SandboxTableModel *m_model; // the current host's
    HostSidebar *m_sidebar;
    HostConnection *m_localHost = nullptr;
    HostConnection *m_activeHost = nullptr;
    QList<HostConnection *> m_remoteHosts;
    QStackedWidget *m_pages;
    ConnectionPage *m_placeholder;
    ConnectionPage *m_banner;
    QTableView *m_table;
    SandboxDetailsView *m_details;
    QStackedWidget *m_consoleArea;
    QTabWidget *m_tabs;
    QLabel *m_statusLabel;
    QTabWidget *m_sections;
    EgressView *m_egressView;
    CredentialsView *m_credentialsView;
    SnapshotsView *m_snapshotsView;
    SandboxActions *m_actions;
    QHash<QString, QPointer<PolicyEditor>> m_editors;
    DenialNotifier *m_denials = nullptr;
    DenialBar *m_denialBar = nullptr;
    DenialTray *m_denialTray = nullptr;
    QHash<QString, QPointer<DenialPrompt>> m_prompts;
    QString m_lastNotification;
    QAction *m_policyAction = nullptr;
    QList<QAction *> m_sectionActions;
    QAction *m_newAction = nullptr;
    QAction *m_startAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_killAction = nullptr;
    QAction *m_pauseAction = nullptr;
    QAction *m_resumeAction = nullptr;
    QAction *m_timelineAction = nullptr;
    QAction *m_deleteAction = nullptr;
    QAction *m_consoleAction = nullptr;
    QAction *m_filesAction = nullptr;
    QAction *m_closeConsoleAction = nullptr;
    QAction *m_quitAction = nullptr;
    QAction *m_aboutAction = nullptr;
    QAction *m_connectionsAction = nullptr;
    QAction *m_dismissAlertAction = nullptr;
    QString m_pendingConsole;
    bool m_everReady = false;
};

} // namespace airlock
