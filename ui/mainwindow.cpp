#include "ui/mainwindow.h"

#include "core/client/helperclient.h"
#include "ui/bindingtablemodel.h"
#include "ui/columnsizer.h"
#include "ui/connectionpage.h"
#include "ui/connectionsdialog.h"
#include "ui/consolecontroller.h"
#include "ui/consoletab.h"
#include "ui/credentialsview.h"
#include "ui/denialbar.h"
#include "ui/denialnotifier.h"
#include "ui/denialprompt.h"
#include "ui/denialtray.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/errortext.h"
#include "ui/filestab.h"
#include "ui/hostconnection.h"
#include "ui/hostsidebar.h"
#include "ui/hoststore.h"
#include "ui/newsandboxdialog.h"
#include "ui/policyeditor.h"
#include "ui/policytext.h"
#include "ui/probingmonitor.h"
#include "ui/sandboxactions.h"
#include "ui/sandboxdetailsview.h"
#include "ui/sandboxtablemodel.h"
#include "ui/snapshotsview.h"
#include "ui/snapshottimelineview.h"
#include "ui/terminalview.h"

#include <QAction>
#include <QApplication>
#include <QHeaderView>
#include <QIcon>
#include <QKeySequence>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace airlock {

namespace {

QIcon icon(const char *name)
{
    return QIcon(QStringLiteral(":/icons/%1.svg").arg(QLatin1String(name)));
}

} // namespace

MainWindow::MainWindow(HelperClient *client, QWidget *parent)
    : QMainWindow(parent)
    , m_client(client)
    , m_localModel(new SandboxTableModel(this))
    , m_model(m_localModel)
    , m_sidebar(new HostSidebar(this))
    , m_pages(new QStackedWidget(this))
    , m_placeholder(new ConnectionPage(ConnectionPage::Style::Page, this))
    , m_banner(new ConnectionPage(ConnectionPage::Style::Banner, this))
    , m_table(new QTableView(this))
    , m_details(new SandboxDetailsView(this))
    , m_consoleArea(new QStackedWidget(this))
    , m_tabs(new QTabWidget(this))
    , m_statusLabel(new QLabel(this))
    , m_sections(new QTabWidget(this))
    , m_egressView(new EgressView(client, m_model, this))
    , m_credentialsView(new CredentialsView(client, m_model, this))
    , m_snapshotsView(new SnapshotsView(client, m_model, this))
    , m_actions(new SandboxActions(this))
{
    setWindowTitle(tr("Airlock"));
    setWindowIcon(icon("airlock"));

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 10);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_table->setAccessibleName(tr("Sandboxes"));
    m_table->setTabKeyNavigation(false);
    // Names get room to be read; the other columns as much as their longest value needs, so
    // Memory and Uptime are never cut.
    m_table->setColumnWidth(SandboxTableModel::NameColumn, 200);
    QStringList states;
    for (SandboxState state : {SandboxState::Stopped, SandboxState::Starting, SandboxState::Running,
                               SandboxState::Stopping, SandboxState::Paused})
        states.append(SandboxTableModel::stateText(state));
    ColumnSizer::fit(m_table, SandboxTableModel::StateColumn, states);
    ColumnSizer::fit(m_table, SandboxTableModel::AccelerationColumn,
                     {SandboxTableModel::accelerationText(Acceleration::Kvm),
                      SandboxTableModel::accelerationText(Acceleration::Tcg)});
    ColumnSizer::fit(m_table, SandboxTableModel::VcpusColumn, {QStringLiteral("64")});
    ColumnSizer::fit(m_table, SandboxTableModel::MemoryColumn,
                     {SandboxTableModel::tr("%1 MiB").arg(65536)});
    ColumnSizer::fit(
        m_table, SandboxTableModel::UptimeColumn,
        {SandboxTableModel::formatUptime(QDateTime::fromSecsSinceEpoch(0),
                                         QDateTime::fromSecsSinceEpoch(999 * 3600 + 59 * 60))});

    // Said inside the empty table, so a first start does not look like a broken window.
    auto *emptyHint = new QLabel(tr("No sandboxes yet. Create one with <b>New Sandbox</b> "
                                    "(Ctrl+N)."),
                                 m_table->viewport());
    emptyHint->setForegroundRole(QPalette::PlaceholderText);
    auto *emptyLayout = new QVBoxLayout(m_table->viewport());
    emptyLayout->addWidget(emptyHint, 0, Qt::AlignCenter);
    auto updateEmptyHint = [this, emptyHint] {
        emptyHint->setVisible(m_model->isLoaded() && m_model->rowCount() == 0);
    };
    connect(m_model, &QAbstractItemModel::modelReset, emptyHint, updateEmptyHint);
    connect(m_model, &QAbstractItemModel::rowsInserted, emptyHint, updateEmptyHint);
    connect(m_model, &QAbstractItemModel::rowsRemoved, emptyHint, updateEmptyHint);
    updateEmptyHint();

    m_tabs->setTabsClosable(true);
    m_tabs->setMovable(true);
    m_tabs->setDocumentMode(true);
    m_tabs->setAccessibleName(tr("Consoles"));
    auto *hint = new QLabel(tr("Select a sandbox and choose <b>Open Console</b> (Ctrl+O) or "
                               "double-click it to see its console here, or <b>Open Files</b> "
                               "(Ctrl+Shift+O) to work with its files and run commands."),
                            this);
    hint->setAlignment(Qt::AlignCenter);
    hint->setWordWrap(true);
    hint->setForegroundRole(QPalette::PlaceholderText);
    m_consoleArea->addWidget(hint);
    m_consoleArea->addWidget(m_tabs);

    auto *tableSplitter = new QSplitter(Qt::Horizontal, this);
    tableSplitter->addWidget(m_table);
    tableSplitter->addWidget(m_details);
    tableSplitter->setStretchFactor(0, 3);
    tableSplitter->setStretchFactor(1, 1);
    tableSplitter->setChildrenCollapsible(false);
    tableSplitter->setSizes({600, 270});
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(tableSplitter);
    splitter->addWidget(m_consoleArea);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 3);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({240, 460});

    auto *mainPage = new QWidget(this);
    auto *mainLayout = new QVBoxLayout(mainPage);
    mainLayout->setContentsMargins(0, 0, 0, 0);
    mainLayout->setSpacing(0);
    mainLayout->addWidget(m_banner);
    watchDenials(mainPage, mainLayout);
    m_sections->setDocumentMode(true);
    m_sections->setAccessibleName(tr("Sections"));
    m_sections->addTab(splitter, tr("Sand&boxes"));
    m_sections->addTab(m_egressView, tr("&Egress"));
    m_sections->addTab(m_credentialsView, tr("C&redentials"));
    m_sections->addTab(m_snapshotsView, tr("Snapsho&ts"));
    mainLayout->addWidget(m_sections, 1);
    m_banner->setVisible(false);

    m_pages->addWidget(m_placeholder);
    m_pages->addWidget(mainPage);
    auto *hostSplitter = new QSplitter(Qt::Horizontal, this);
    hostSplitter->addWidget(m_sidebar);
    hostSplitter->addWidget(m_pages);
    hostSplitter->setStretchFactor(0, 0);
    hostSplitter->setStretchFactor(1, 1);
    hostSplitter->setChildrenCollapsible(false);
    hostSplitter->setSizes({230, 870});
    setCentralWidget(hostSplitter);

    statusBar()->addWidget(m_statusLabel, 1);
    m_statusLabel->setAccessibleName(tr("Helper connection"));

    createActions();
    createMenus();

    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &MainWindow::onSelectionChanged);
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        openConsole(index.data(SandboxTableModel::NameRole).toString());
    });
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeConsoleTab);
    connect(m_sidebar, &HostSidebar::hostActivated, this, &MainWindow::setCurrentHost);
    connect(m_sidebar, &HostSidebar::sandboxActivated, this,
            [this](HostConnection *, const QString &sandbox) {
                const int row = m_model->rowOf(sandbox);
                if (row >= 0)
                    m_table->selectRow(row);
            });
    connect(m_placeholder, &ConnectionPage::retryRequested, this, &MainWindow::retryConnection);
    connect(m_egressView, &EgressView::allowRequested, this, &MainWindow::proposeRules);

    connect(m_egressView->probing(), &ProbingMonitor::probingStarted, this,
            [this](const QString &sandbox, int denied) {
                const QString text =
                    tr("%1 was denied %2 times in the last minute: it may be probing the "
                       "network.")
                        .arg(sandbox)
                        .arg(denied);
                m_model->setAlert(sandbox, text);
                notify(tr("Airlock: possible probing by %1").arg(sandbox), text);
            });
    connect(m_egressView->probing(), &ProbingMonitor::probingEnded, this,
            [this](const QString &sandbox) { m_model->setAlert(sandbox, {}); });
    connect(m_egressView, &EgressView::credentialAlert, this, &MainWindow::onCredentialAlert);
    connect(m_details, &SandboxDetailsView::restartRequested, this, &MainWindow::restartSandbox);
    connect(m_snapshotsView, &SnapshotsView::restartRequested, this, &MainWindow::restartSandbox);
    connect(m_banner, &ConnectionPage::retryRequested, this, &MainWindow::retryConnection);

    m_actions->setClient(client);
    watchActions();

    const QString where = client ? client->transportDescription() : tr("helper");
    m_placeholder->showConnecting(where);
    m_statusLabel->setText(tr("Connecting to %1…").arg(where));
    m_pages->setCurrentWidget(m_placeholder);

    watchModel(m_localModel);
    if (client) {
        m_model->setClient(client);
        m_localHost = new HostConnection(client, m_localModel, this);
        m_activeHost = m_localHost;
        watchHost(m_localHost);
        m_sidebar->addHost(m_localHost);
        m_sidebar->setCurrentItem(m_sidebar->itemFor(m_localHost));
        if (client->state() == HelperClient::State::Ready)
            onReady();
    }
    updateActions();
    setMinimumSize(minimumWindowSize());
    resize(defaultSize());
}

MainWindow::~MainWindow()
{
    // Console tabs and the sidebar refer to the hosts' clients: remove them first.
    while (m_tabs->count() > 0) {
        QWidget *tab = m_tabs->widget(0);
        m_tabs->removeTab(0);
        delete tab;
    }
    delete m_sidebar;
    qDeleteAll(std::exchange(m_remoteHosts, {}));
}

void MainWindow::watchModel(SandboxTableModel *model)
{
    connect(model, &QAbstractItemModel::dataChanged, this, [this, model] {
        if (model == m_model) {
            updateActions();
            updateDetails();
        }
    });
    connect(model, &QAbstractItemModel::modelReset, this, [this, model] {
        if (model == m_model) {
            updateActions();
            updateDetails();
        }
    });
    connect(model, &QAbstractItemModel::rowsRemoved, this, [this, model] {
        if (model == m_model)
            updateDetails();
    });
    connect(model, &QAbstractItemModel::rowsInserted, this, [this, model] {
        if (model == m_model)
            checkPendingConsole();
    });
    connect(model, &SandboxTableModel::loaded, this, [this, model] {
        if (model == m_model)
            checkPendingConsole();
    });
    connect(model, &SandboxTableModel::loadFailed, this, [this, model](const QString &message) {
        if (model == m_model)
            statusBar()->showMessage(tr("Could not read the sandbox list: %1").arg(message), 10000);
    });
}

void MainWindow::watchActions()
{
    connect(m_actions, &SandboxActions::succeeded, this,
            [this](SandboxActions::Action action, const QString &sandbox) {
                if (action == SandboxActions::Action::Create) {
                    if (const int row = m_model->rowOf(sandbox); row >= 0)
                        m_table->selectRow(row);
                } else if (action == SandboxActions::Action::Start) {
                    // Show the boot as it happens: most people start a sandbox to use its
                    // console.
                    openConsole(sandbox);
                } else if (action == SandboxActions::Action::Delete) {
                    forgetSandbox(sandbox);
                }
            });
    connect(m_actions, &SandboxActions::failed, this,
            [this](SandboxActions::Action, const QString &, const QString &text,
                   const Error &error) { showActionError(text, error); });
    connect(m_actions, &SandboxActions::sandboxReported, this,
            [this](const Sandbox &sandbox) { m_model->upsert(sandbox); });
    connect(
        m_actions, &SandboxActions::progress, this,
        [this](const QString &, const QString &text) { statusBar()->showMessage(text, 30000); });
}

void MainWindow::watchHost(HostConnection *host)
{
    HelperClient *client = host->client();
    connect(client, &HelperClient::ready, this, [this, host] {
        if (host == m_activeHost)
            onReady();
    });
    connect(client, &HelperClient::connectionLost, this, [this, host](const Error &error) {
        if (host == m_activeHost)
            onConnectionLost(error);
    });
    connect(host, &HostConnection::stateChanged, this, [this, host] {
        if (host == m_activeHost && host->state() != HostConnection::State::Connected)
            showHostProblem();
    });
}

QList<HostConnection *> MainWindow::hosts() const
{
    QList<HostConnection *> all;
    if (m_localHost)
        all.append(m_localHost);
    all += m_remoteHosts;
    return all;
}

void MainWindow::setRemoteHosts(const QList<SshEndpoint> &endpoints)
{
    QList<HostConnection *> kept;
    for (HostConnection *host : std::as_const(m_remoteHosts)) {
        if (endpoints.contains(host->endpoint()) && !kept.contains(host)) {
            kept.append(host);
            continue;
        }
        if (host == m_activeHost)
            setCurrentHost(m_localHost);
        // Close its console tabs: they talk to a client that is about to go.
        for (int i = m_tabs->count() - 1; i >= 0; --i) {
            if (m_tabs->widget(i)->property("airlockHost").value<QObject *>() == host)
                closeConsoleTab(i);
        }
        m_sidebar->removeHost(host);
        host->disconnectFromHost();
        host->deleteLater();
    }
    QList<HostConnection *> ordered;
    for (const SshEndpoint &endpoint : endpoints) {
        auto existing = std::find_if(kept.begin(), kept.end(), [&](HostConnection *host) {
            return host->endpoint() == endpoint;
        });
        if (existing != kept.end()) {
            ordered.append(*existing);
            kept.erase(existing);
            continue;
        }
        auto *host = new HostConnection(endpoint, this, nullptr);
        watchModel(host->model());
        watchHost(host);
        m_sidebar->addHost(host);
        ordered.append(host);
        host->connectToHost();
    }
    m_remoteHosts = ordered;
    if (!m_activeHost && !m_remoteHosts.isEmpty())
        setCurrentHost(m_remoteHosts.constFirst());
}

void MainWindow::setCurrentHost(HostConnection *host)
{
    if (!host || host == m_activeHost)
        return;
    m_activeHost = host;
    m_client = host->client();
    m_actions->setClient(m_client);
    m_model = host->model();
    m_table->setModel(m_model);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &MainWindow::onSelectionChanged);
    m_snapshotsView->setClient(m_client, m_model);
    updateDetails();
    if (QTreeWidgetItem *item = m_sidebar->itemFor(host); item && m_sidebar->currentHost() != host)
        m_sidebar->setCurrentItem(item);
    // Its console tabs come forward.
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (m_tabs->widget(i)->property("airlockHost").value<QObject *>() == host) {
            m_tabs->setCurrentIndex(i);
            break;
        }
    }
    m_everReady = false;
    if (m_client && m_client->state() == HelperClient::State::Ready)
        onReady();
    else
        showHostProblem();
    updateActions();
}

void MainWindow::showHostProblem()
{
    if (!m_activeHost)
        return;
    const QString where = m_client ? m_client->transportDescription() : m_activeHost->title();
    if (m_activeHost->state() == HostConnection::State::Connecting
        || m_activeHost->lastError().isEmpty()) {
        if (!m_everReady) {
            m_placeholder->showConnecting(where);
            m_pages->setCurrentWidget(m_placeholder);
        }
        m_statusLabel->setText(tr("Connecting to %1…").arg(where));
        return;
    }
    onConnectionLost(Error {ErrorKind::Disconnected, m_activeHost->lastError()});
}

void MainWindow::showConnectionsDialog()
{
    QList<SshEndpoint> endpoints;
    for (HostConnection *host : std::as_const(m_remoteHosts))
        endpoints.append(host->endpoint());
    auto *dialog = new ConnectionsDialog(endpoints, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        QSettings settings;
        HostStore::save(settings, dialog->hosts());
        setRemoteHosts(dialog->hosts());
    });
    dialog->open();
}

void MainWindow::createActions()
{
    auto make = [this](QAction *&action, const QIcon &icon, const QString &text,
                       const QKeySequence &shortcut, const QString &tip) {
        action = new QAction(icon, text, this);
        action->setShortcut(shortcut);
        action->setToolTip(tip);
        action->setStatusTip(tip);
    };
    make(m_newAction, icon("new"), tr("&New Sandbox…"), QKeySequence::New,
         tr("Create a new sandbox"));
    make(m_startAction, icon("start"), tr("&Start"), QKeySequence(tr("Ctrl+R")),
         tr("Boot the selected sandbox"));
    make(m_stopAction, icon("stop"), tr("St&op"), QKeySequence(tr("Ctrl+T")),
         tr("Ask the selected sandbox to power off"));
    make(m_killAction, icon("kill"), tr("&Force Stop"), QKeySequence(tr("Ctrl+Shift+K")),
         tr("Kill the selected sandbox's virtual machine at once"));
    make(m_deleteAction, icon("delete"), tr("&Delete…"), QKeySequence::Delete,
         tr("Delete the selected sandbox"));
    make(m_pauseAction, icon("pause"), tr("&Pause"), QKeySequence(tr("Ctrl+Shift+P")),
         tr("Stop the selected sandbox's CPUs; it keeps its memory and resumes where it was"));
    make(m_resumeAction, icon("resume"), tr("Res&ume"), QKeySequence(tr("Ctrl+Shift+U")),
         tr("Let the paused sandbox run on"));
    make(m_timelineAction, icon("snapshot"), tr("Snapshot &Timeline"), QKeySequence(tr("Ctrl+4")),
         tr("Show the selected sandbox's snapshots"));
    make(m_consoleAction, icon("console"), tr("Open &Console"), QKeySequence(tr("Ctrl+O")),
         tr("Show the selected sandbox's console"));
    make(m_filesAction, icon("files"), tr("Open &Files"), QKeySequence(tr("Ctrl+Shift+O")),
         tr("Browse the selected sandbox's files, run commands in it, bring a project in and "
            "review its changes"));
    make(m_closeConsoleAction, QIcon(), tr("&Close Console"), QKeySequence(tr("Ctrl+Shift+W")),
         tr("Close the current console tab"));
    make(m_policyAction, QIcon(), tr("Edit &Policy…"), QKeySequence(tr("Ctrl+P")),
         tr("Edit what the selected sandbox may reach"));
    make(m_quitAction, QIcon(), tr("&Quit"), QKeySequence::Quit, tr("Quit Airlock"));
    make(m_aboutAction, icon("airlock"), tr("&About Airlock"), QKeySequence(),
         tr("Version and license"));
    make(m_connectionsAction, QIcon(), tr("&Connections…"), QKeySequence(tr("Ctrl+Shift+H")),
         tr("Add, edit or remove remote hosts reached over SSH"));
    make(m_dismissAlertAction, icon("alert"), tr("Dismiss Credential &Alert"), QKeySequence(),
         tr("Remove the credential alert badge from the selected sandbox (the binding's denied "
            "count stays in Credentials)"));
    // Delete only acts on the table, so the key still reaches other widgets.
    m_deleteAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_table->addAction(m_deleteAction);

    connect(m_newAction, &QAction::triggered, this, &MainWindow::showNewSandboxDialog);
    connect(m_startAction, &QAction::triggered, this, [this] { startSandbox(selectedSandbox()); });
    connect(m_stopAction, &QAction::triggered, this, [this] { stopSandbox(selectedSandbox()); });
    connect(m_killAction, &QAction::triggered, this, [this] { killSandbox(selectedSandbox()); });
    connect(m_pauseAction, &QAction::triggered, this, [this] { pauseSandbox(selectedSandbox()); });
    connect(m_resumeAction, &QAction::triggered, this,
            [this] { resumeSandbox(selectedSandbox()); });
    connect(m_timelineAction, &QAction::triggered, this,
            [this] { showTimeline(selectedSandbox()); });
    connect(m_deleteAction, &QAction::triggered, this,
            [this] { deleteSandbox(selectedSandbox()); });
    connect(m_consoleAction, &QAction::triggered, this, [this] { openConsole(selectedSandbox()); });
    connect(m_filesAction, &QAction::triggered, this, [this] { openFiles(selectedSandbox()); });
    connect(m_closeConsoleAction, &QAction::triggered, this,
            [this] { closeConsoleTab(m_tabs->currentIndex()); });
    connect(m_policyAction, &QAction::triggered, this,
            [this] { openPolicyEditor(selectedSandbox()); });
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
    connect(m_dismissAlertAction, &QAction::triggered, this, [this] {
        m_model->setAlert(selectedSandbox(), {}, SandboxTableModel::AlertKind::Credential);
        updateActions();
    });
    const QStringList sectionNames {tr("&Sandboxes"), tr("&Egress"), tr("C&redentials")};
    // Ctrl+4, the Snapshots section, is m_timelineAction: it also picks the selected sandbox.
    for (int i = 0; i < sectionNames.size(); ++i) {
        auto *action = new QAction(sectionNames.at(i), this);
        action->setShortcut(QKeySequence(tr("Ctrl+%1").arg(i + 1)));
        connect(action, &QAction::triggered, this, [this, i] { m_sections->setCurrentIndex(i); });
        m_sectionActions.append(action);
    }
    connect(m_aboutAction, &QAction::triggered, this, &MainWindow::showAbout);
    connect(m_connectionsAction, &QAction::triggered, this, &MainWindow::showConnectionsDialog);

    for (QAction *action :
         {m_consoleAction, m_filesAction, m_policyAction, m_timelineAction, m_startAction,
          m_pauseAction, m_resumeAction, m_stopAction, m_killAction, m_dismissAlertAction})
        m_table->addAction(action);
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_newAction);
    file->addSeparator();
    file->addAction(m_connectionsAction);
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu *sandbox = menuBar()->addMenu(tr("&Sandbox"));
    sandbox->addAction(m_startAction);
    sandbox->addAction(m_stopAction);
    sandbox->addAction(m_killAction);
    sandbox->addAction(m_pauseAction);
    sandbox->addAction(m_resumeAction);
    sandbox->addSeparator();
    sandbox->addAction(m_snapshotsView->takeSnapshotAction());
    sandbox->addAction(m_timelineAction);
    sandbox->addSeparator();
    sandbox->addAction(m_consoleAction);
    sandbox->addAction(m_filesAction);
    sandbox->addAction(m_closeConsoleAction);
    sandbox->addAction(m_policyAction);
    sandbox->addAction(m_dismissAlertAction);
    sandbox->addSeparator();
    sandbox->addAction(m_deleteAction);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addActions(m_sectionActions);
    view->addAction(m_timelineAction);

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_aboutAction);

    QToolBar *toolbar = addToolBar(tr("Sandbox"));
    toolbar->setObjectName(QStringLiteral("sandboxToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setMovable(false);
    toolbar->setIconSize(QSize(20, 20));
    toolbar->addAction(m_newAction);
    toolbar->addSeparator();
    toolbar->addAction(m_startAction);
    toolbar->addAction(m_stopAction);
    toolbar->addAction(m_pauseAction);
    toolbar->addAction(m_resumeAction);
    toolbar->addAction(m_consoleAction);
    toolbar->addAction(m_filesAction);
    toolbar->addAction(m_policyAction);
    toolbar->addAction(m_snapshotsView->takeSnapshotAction());
    toolbar->addSeparator();
    toolbar->addAction(m_deleteAction);
}

ConsoleTab *MainWindow::consoleTab(const QString &sandbox) const
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto *tab = qobject_cast<ConsoleTab *>(m_tabs->widget(i));
        if (tab && tab->sandbox() == sandbox
            && tab->property("airlockHost").value<QObject *>() == m_activeHost)
            return tab;
    }
    return nullptr;
}

FilesTab *MainWindow::filesTab(const QString &sandbox) const
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto *tab = qobject_cast<FilesTab *>(m_tabs->widget(i));
        if (tab && tab->sandbox() == sandbox
            && tab->property("airlockHost").value<QObject *>() == m_activeHost)
            return tab;
    }
    return nullptr;
}

bool MainWindow::isShowingConnectionProblem() const
{
    return m_pages->currentWidget() == m_placeholder || !m_banner->isHidden();
}

QString MainWindow::connectionProblemText() const
{
    if (m_pages->currentWidget() == m_placeholder)
        return m_placeholder->text();
    if (!m_banner->isHidden())
        return m_banner->text();
    return {};
}

QString MainWindow::statusText() const
{
    return m_statusLabel->text();
}

ConsoleTab *MainWindow::openConsole(const QString &sandbox)
{
    if (sandbox.isEmpty() || !m_client)
        return nullptr;
    ConsoleTab *tab = consoleTab(sandbox);
    if (!tab) {
        tab = new ConsoleTab(m_client, sandbox, m_tabs);
        tab->setProperty("airlockHost", QVariant::fromValue<QObject *>(m_activeHost));
        const bool remote = m_activeHost && m_activeHost->isRemote();
        m_tabs->addTab(tab, icon("console"),
                       remote ? tr("%1 (%2)").arg(sandbox, m_activeHost->title()) : sandbox);
        if (m_client->state() == HelperClient::State::Ready)
            tab->controller()->attach();
    }
    m_consoleArea->setCurrentWidget(m_tabs);
    m_tabs->setCurrentWidget(tab);
    tab->view()->setFocus(Qt::OtherFocusReason);
    updateActions();
    return tab;
}

FilesTab *MainWindow::openFiles(const QString &sandbox)
{
    if (sandbox.isEmpty() || !m_client)
        return nullptr;
    FilesTab *tab = filesTab(sandbox);
    if (!tab) {
        tab = new FilesTab(m_client, sandbox, m_tabs);
        tab->setProperty("airlockHost", QVariant::fromValue<QObject *>(m_activeHost));
        const bool remote = m_activeHost && m_activeHost->isRemote();
        m_tabs->addTab(tab, icon("files"),
                       remote ? tr("%1 files (%2)").arg(sandbox, m_activeHost->title())
                              : tr("%1 files").arg(sandbox));
    }
    m_consoleArea->setCurrentWidget(m_tabs);
    m_tabs->setCurrentWidget(tab);
    tab->table()->setFocus(Qt::OtherFocusReason);
    updateActions();
    return tab;
}

void MainWindow::openConsoleWhenListed(const QString &sandbox)
{
    m_pendingConsole = sandbox;
    checkPendingConsole();
}

void MainWindow::checkPendingConsole()
{
    if (m_pendingConsole.isEmpty() || !m_model->isLoaded())
        return;
    const int row = m_model->rowOf(m_pendingConsole);
    if (row < 0) {
        statusBar()->showMessage(tr("No sandbox named “%1”.").arg(m_pendingConsole), 10000);
        m_pendingConsole.clear();
        return;
    }
    const QString name = std::exchange(m_pendingConsole, {});
    m_table->selectRow(row);
    openConsole(name);
}

void MainWindow::closeConsoleTab(int index)
{
    QWidget *tab = m_tabs->widget(index);
    if (!tab)
        return;
    m_tabs->removeTab(index);
    tab->deleteLater();
    if (m_tabs->count() == 0)
        m_consoleArea->setCurrentIndex(0);
    updateActions();
}

void MainWindow::createSandbox(const SandboxSpec &spec, bool start, const QString &boot)
{
    m_actions->create(spec, start, boot);
}

void MainWindow::startSandbox(const QString &sandbox)
{
    m_actions->start(sandbox);
}

void MainWindow::stopSandbox(const QString &sandbox)
{
    m_actions->stop(sandbox);
}

void MainWindow::restartSandbox(const QString &sandbox)
{
    m_actions->restart(sandbox);
}

void MainWindow::killSandbox(const QString &sandbox)
{
    m_actions->kill(sandbox);
}

void MainWindow::pauseSandbox(const QString &sandbox)
{
    m_actions->pause(sandbox);
}

void MainWindow::resumeSandbox(const QString &sandbox)
{
    m_actions->resume(sandbox);
}

void MainWindow::forgetSandbox(const QString &sandbox)
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        QWidget *widget = m_tabs->widget(i);
        auto *console = qobject_cast<ConsoleTab *>(widget);
        auto *files = qobject_cast<FilesTab *>(widget);
        if ((console && console->sandbox() == sandbox) || (files && files->sandbox() == sandbox))
            closeConsoleTab(i--);
    }
    m_denials->forgetSandbox(sandbox);
    m_model->remove(sandbox);
}

void MainWindow::showTimeline(const QString &sandbox)
{
    if (!sandbox.isEmpty())
        m_snapshotsView->setSandbox(sandbox);
    m_sections->setCurrentWidget(m_snapshotsView);
    m_snapshotsView->timeline()->setFocus(Qt::ShortcutFocusReason);
}

void MainWindow::deleteSandbox(const QString &sandbox)
{
    if (sandbox.isEmpty())
        return;
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Delete Sandbox"),
                                tr("Delete sandbox “%1”?").arg(sandbox), QMessageBox::Cancel, this);
    box->setInformativeText(tr("Its disk and console history are removed. This cannot be "
                               "undone."));
    QAbstractButton *deleteButton = box->addButton(tr("&Delete"), QMessageBox::DestructiveRole);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPointer<MainWindow> self(this);
    connect(box, &QMessageBox::finished, this, [self, box, deleteButton, sandbox] {
        if (!self || box->clickedButton() != deleteButton)
            return;
        self->m_actions->remove(sandbox);
    });
    box->open();
}

void MainWindow::retryConnection()
{
    if (m_activeHost)
        m_activeHost->connectToHost();
}

void MainWindow::onReady()
{
    m_everReady = true;
    m_pages->setCurrentIndex(1);
    m_banner->setVisible(false);
    const QJsonObject hello = m_client->helloResult();
    const QString acceleration = hello.value(QStringLiteral("acceleration")).toString();
    const QString mode = acceleration == QLatin1String("kvm") ? tr("KVM: hardware virtualisation")
                                                              : tr("TCG: software emulation");
    // Why not KVM, and what to do, in words where people look: cut off at the window's edge,
    // whole in the tooltip.
    const QString warning = hello.value(QStringLiteral("accelerationWarning")).toString();
    const QString connected =
        tr("Connected to %1 (%2)").arg(m_client->transportDescription(), mode);
    m_statusLabel->setText(
        warning.isEmpty() ? connected : tr("%1. KVM is not usable: %2").arg(connected, warning));
    m_statusLabel->setToolTip(warning);
    updateActions();
    if (m_table->currentIndex().isValid() == false && m_model->rowCount() > 0)
        m_table->selectRow(0);
}

void MainWindow::onConnectionLost(const Error &error)
{
    if (m_everReady) {
        m_banner->showError(error);
        m_banner->setVisible(true);
    } else {
        m_placeholder->showError(error);
        m_pages->setCurrentWidget(m_placeholder);
    }
    m_statusLabel->setText(
        tr("Not connected to %1").arg(m_client ? m_client->transportDescription() : QString()));
    m_statusLabel->setToolTip(error.message);
    updateActions();
}

void MainWindow::onSelectionChanged()
{
    // The timeline follows the table, so Ctrl+4 shows the sandbox one works with.
    if (const QString sandbox = selectedSandbox(); !sandbox.isEmpty())
        m_snapshotsView->setSandbox(sandbox);
    m_egressView->setSelectedSandbox(selectedSandbox());
    updateActions();
    updateDetails();
}

void MainWindow::updateDetails()
{
    m_details->setSandbox(m_model->sandboxAt(m_model->rowOf(selectedSandbox())));
}

QString MainWindow::selectedSandbox() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return rows.constFirst().data(SandboxTableModel::NameRole).toString();
}

void MainWindow::updateActions()
{
    const bool connected = m_client && m_client->state() == HelperClient::State::Ready;
    const Sandbox *sandbox = m_model->sandboxAt(m_model->rowOf(selectedSandbox()));
    const SandboxActions::Enablement enabled = SandboxActions::enablement(
        connected, sandbox ? std::optional(sandbox->state) : std::nullopt);
    m_newAction->setEnabled(enabled.create);
    m_startAction->setEnabled(enabled.start);
    m_stopAction->setEnabled(enabled.stop);
    m_killAction->setEnabled(enabled.kill);
    m_deleteAction->setEnabled(enabled.remove);
    m_pauseAction->setEnabled(enabled.pause);
    m_resumeAction->setEnabled(enabled.resume);
    m_timelineAction->setEnabled(true);
    m_consoleAction->setEnabled(enabled.openConsole);
    m_filesAction->setEnabled(enabled.openConsole);
    m_policyAction->setEnabled(enabled.editPolicy);
    m_closeConsoleAction->setEnabled(m_tabs->count() > 0);
    m_dismissAlertAction->setEnabled(
        sandbox
        && !m_model->alert(sandbox->spec.name, SandboxTableModel::AlertKind::Credential).isEmpty());
}

void MainWindow::showNewSandboxDialog()
{
    QStringList names;
    for (int row = 0; row < m_model->rowCount(); ++row)
        names.append(m_model->sandboxAt(row)->spec.name);
    auto *dialog = new NewSandboxDialog(m_client, names, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        createSandbox(dialog->spec(), dialog->startAfterCreate(), dialog->bootMode());
    });
    dialog->open();
}

void MainWindow::showActionError(const QString &text, const Error &error)
{
    Q_EMIT actionFailed(text, error);
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Airlock"), text, QMessageBox::Ok, this);
    box->setInformativeText(ErrorText::details(error));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

PolicyEditor *MainWindow::policyEditor(const QString &sandbox) const
{
    return m_editors.value(sandbox).data();
}

PolicyEditor *MainWindow::openPolicyEditor(const QString &sandbox)
{
    if (sandbox.isEmpty() || !m_client)
        return nullptr;
    PolicyEditor *editor = m_editors.value(sandbox);
    if (!editor) {
        editor = new PolicyEditor(m_client, sandbox, this);
        m_editors.insert(sandbox, editor);
    }
    editor->show();
    editor->raise();
    editor->activateWindow();
    return editor;
}

PolicyEditor *MainWindow::proposeRules(const QString &sandbox, const QList<EgressRule> &rules)
{
    PolicyEditor *editor = openPolicyEditor(sandbox);
    if (!editor)
        return nullptr;
    if (editor->isLoaded()) {
        editor->addRules(rules);
    } else {
        // Add after the applied policy arrived, so the rules show as pending changes.
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = connect(editor, &PolicyEditor::loaded, editor, [editor, rules, connection] {
            QObject::disconnect(*connection);
            editor->addRules(rules);
        });
    }
    return editor;
}

void MainWindow::notify(const QString &title, const QString &text, const QString &sandbox,
                        const QString &name)
{
    m_lastNotification = text;
    statusBar()->showMessage(text, 30000);
    // A desktop notification where there is a tray; offscreen and bare X servers have none.
    m_denialTray->showMessage(title, text, sandbox, name);
}

void MainWindow::watchDenials(QWidget *barParent, QLayout *barLayout)
{
    m_denials = new DenialNotifier({}, this);
    m_denialBar = new DenialBar(m_denials, barParent);
    m_denialTray = new DenialTray(m_denials, windowIcon(), this);
    m_denialBar->setTrayAvailable(m_denialTray->isAvailable());
    barLayout->addWidget(m_denialBar);
    connect(m_egressView->events(), &EgressEventModel::entryAdded, m_denials,
            [this](const EgressEntry &entry, bool live) {
                // Recorded history is old news; only what happens now is asked about.
                if (live)
                    m_denials->record(entry);
            });
    connect(m_denials, &DenialNotifier::notificationDue, this,
            [this](const DenialNotification &notification) {
                notify(tr("Airlock: %1 was denied").arg(notification.sandbox),
                       DenialNotifier::text(notification), notification.sandbox,
                       notification.names.constFirst());
            });
    connect(m_denialBar, &DenialBar::promptRequested, this, &MainWindow::openDenialPrompt);
    connect(m_denialTray, &DenialTray::promptRequested, this, &MainWindow::openDenialPrompt);
    connect(m_denialTray, &DenialTray::showWindowRequested, this, [this] {
        showNormal();
        raise();
        activateWindow();
    });
}

DenialPrompt *MainWindow::denialPrompt(const QString &sandbox, const QString &name) const
{
    return m_prompts.value(sandbox + QLatin1Char('\n') + name).data();
}

DenialPrompt *MainWindow::openDenialPrompt(const QString &sandbox, const QString &name)
{
    const QString key = sandbox + QLatin1Char('\n') + name;
    DenialPrompt *prompt = m_prompts.value(key);
    if (!prompt) {
        const DeniedDestination *destination = m_denials->find(sandbox, name);
        if (!destination || !m_denials->isOpen(sandbox, name))
            return nullptr;
        // The egress view, and so every denial, is this computer's helper's.
        prompt = new DenialPrompt(m_localHost ? m_localHost->client() : m_client.data(),
                                  *destination, this);
        prompt->setAttribute(Qt::WA_DeleteOnClose);
        m_prompts.insert(key, prompt);
        connect(
            prompt->decision(), &AllowDecision::answered, this,
            [this, sandbox, name](AllowDecision::Answer answer) {
                if (answer == AllowDecision::Answer::KeepDenied) {
                    m_denials->keepDenied(sandbox, name);
                    statusBar()->showMessage(tr("%1 stays denied for %2.").arg(name, sandbox),
                                             10000);
                } else {
                    m_denials->forget(sandbox, name);
                    statusBar()->showMessage(
                        tr("%1 is allowed for %2 by a new rule of its policy.").arg(name, sandbox),
                        10000);
                }
            });
        connect(prompt, &DenialPrompt::editRequested, this,
                [this](const QString &target, const EgressRule &rule) {
                    proposeRules(target, {rule});
                });
    }
    prompt->show();
    prompt->raise();
    prompt->activateWindow();
    return prompt;
}

void MainWindow::onCredentialAlert(const EgressEntry &entry)
{
    const QString text =
        PolicyText::credentialAlert(entry, m_credentialsView->bindings()->describe(entry.binding));
    m_model->setAlert(
        entry.sandbox,
        tr("%1 (at %2)")
            .arg(text, QLocale().toString(entry.time.toLocalTime(), QStringLiteral("HH:mm:ss"))),
        SandboxTableModel::AlertKind::Credential);
    updateActions();
    notify(tr("Airlock: credential alert in %1").arg(entry.sandbox), text);
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Airlock"),
                       tr("<h3>Airlock %1</h3><p>Runs untrusted coding agents in QEMU microVM "
                          "sandboxes managed by a privileged helper.</p>")
                           .arg(QStringLiteral(AIRLOCK_VERSION)));
}

} // namespace airlock
