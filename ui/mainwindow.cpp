#include "ui/mainwindow.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/connectionpage.h"
#include "ui/consolecontroller.h"
#include "ui/consoletab.h"
#include "ui/errortext.h"
#include "ui/newsandboxdialog.h"
#include "ui/sandboxtablemodel.h"
#include "ui/terminalview.h"

#include <QAction>
#include <QApplication>
#include <QHeaderView>
#include <QIcon>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
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
    , m_model(new SandboxTableModel(this))
    , m_pages(new QStackedWidget(this))
    , m_placeholder(new ConnectionPage(ConnectionPage::Style::Page, this))
    , m_banner(new ConnectionPage(ConnectionPage::Style::Banner, this))
    , m_table(new QTableView(this))
    , m_consoleArea(new QStackedWidget(this))
    , m_tabs(new QTabWidget(this))
    , m_statusLabel(new QLabel(this))
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
    m_table->setColumnWidth(SandboxTableModel::NameColumn, 200);
    m_table->setColumnWidth(SandboxTableModel::StateColumn, 110);
    m_table->setColumnWidth(SandboxTableModel::AccelerationColumn, 140);
    m_table->setColumnWidth(SandboxTableModel::VcpusColumn, 70);
    m_table->setColumnWidth(SandboxTableModel::MemoryColumn, 100);

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
                               "double-click it to see its console here."),
                            this);
    hint->setAlignment(Qt::AlignCenter);
    hint->setWordWrap(true);
    hint->setForegroundRole(QPalette::PlaceholderText);
    m_consoleArea->addWidget(hint);
    m_consoleArea->addWidget(m_tabs);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_consoleArea);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 3);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({170, 530});

    auto *mainPage = new QWidget(this);
    auto *mainLayout = new QVBoxLayout(mainPage);
    mainLayout->setContentsMargins(0, 0, 0, 0);
    mainLayout->setSpacing(0);
    mainLayout->addWidget(m_banner);
    mainLayout->addWidget(splitter, 1);
    m_banner->setVisible(false);

    m_pages->addWidget(m_placeholder);
    m_pages->addWidget(mainPage);
    setCentralWidget(m_pages);

    statusBar()->addWidget(m_statusLabel, 1);
    m_statusLabel->setAccessibleName(tr("Helper connection"));

    createActions();
    createMenus();

    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &MainWindow::onSelectionChanged);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &MainWindow::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &MainWindow::updateActions);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &MainWindow::checkPendingConsole);
    connect(m_model, &SandboxTableModel::loaded, this, &MainWindow::checkPendingConsole);
    connect(m_model, &SandboxTableModel::loadFailed, this, [this](const QString &message) {
        statusBar()->showMessage(tr("Could not read the sandbox list: %1").arg(message), 10000);
    });
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        openConsole(index.data(SandboxTableModel::NameRole).toString());
    });
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeConsoleTab);
    connect(m_placeholder, &ConnectionPage::retryRequested, this, &MainWindow::retryConnection);
    connect(m_banner, &ConnectionPage::retryRequested, this, &MainWindow::retryConnection);

    const QString where = client ? client->transportDescription() : tr("helper");
    m_placeholder->showConnecting(where);
    m_statusLabel->setText(tr("Connecting to %1…").arg(where));
    m_pages->setCurrentWidget(m_placeholder);

    if (client) {
        m_model->setClient(client);
        connect(client, &HelperClient::ready, this, &MainWindow::onReady);
        connect(client, &HelperClient::connectionLost, this, &MainWindow::onConnectionLost);
        if (client->state() == HelperClient::State::Ready)
            onReady();
    }
    updateActions();
    resize(1100, 720);
}

MainWindow::~MainWindow() = default;

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
    make(m_consoleAction, icon("console"), tr("Open &Console"), QKeySequence(tr("Ctrl+O")),
         tr("Show the selected sandbox's console"));
    make(m_closeConsoleAction, QIcon(), tr("&Close Console"), QKeySequence(tr("Ctrl+Shift+W")),
         tr("Close the current console tab"));
    make(m_quitAction, QIcon(), tr("&Quit"), QKeySequence::Quit, tr("Quit Airlock"));
    make(m_aboutAction, icon("airlock"), tr("&About Airlock"), QKeySequence(),
         tr("Version and license"));
    // Delete only acts on the table, so the key still reaches other widgets.
    m_deleteAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_table->addAction(m_deleteAction);

    connect(m_newAction, &QAction::triggered, this, &MainWindow::showNewSandboxDialog);
    connect(m_startAction, &QAction::triggered, this, [this] { startSandbox(selectedSandbox()); });
    connect(m_stopAction, &QAction::triggered, this, [this] { stopSandbox(selectedSandbox()); });
    connect(m_killAction, &QAction::triggered, this, [this] { killSandbox(selectedSandbox()); });
    connect(m_deleteAction, &QAction::triggered, this,
            [this] { deleteSandbox(selectedSandbox()); });
    connect(m_consoleAction, &QAction::triggered, this, [this] { openConsole(selectedSandbox()); });
    connect(m_closeConsoleAction, &QAction::triggered, this,
            [this] { closeConsoleTab(m_tabs->currentIndex()); });
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
    connect(m_aboutAction, &QAction::triggered, this, &MainWindow::showAbout);

    for (QAction *action : {m_consoleAction, m_startAction, m_stopAction, m_killAction})
        m_table->addAction(action);
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_newAction);
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu *sandbox = menuBar()->addMenu(tr("&Sandbox"));
    sandbox->addAction(m_startAction);
    sandbox->addAction(m_stopAction);
    sandbox->addAction(m_killAction);
    sandbox->addSeparator();
    sandbox->addAction(m_consoleAction);
    sandbox->addAction(m_closeConsoleAction);
    sandbox->addSeparator();
    sandbox->addAction(m_deleteAction);

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
    toolbar->addAction(m_consoleAction);
    toolbar->addSeparator();
    toolbar->addAction(m_deleteAction);
}

ConsoleTab *MainWindow::consoleTab(const QString &sandbox) const
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto *tab = qobject_cast<ConsoleTab *>(m_tabs->widget(i));
        if (tab && tab->sandbox() == sandbox)
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
        m_tabs->addTab(tab, icon("console"), sandbox);
        if (m_client->state() == HelperClient::State::Ready)
            tab->controller()->attach();
    }
    m_consoleArea->setCurrentWidget(m_tabs);
    m_tabs->setCurrentWidget(tab);
    tab->view()->setFocus(Qt::OtherFocusReason);
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

void MainWindow::call(const QString &method, const QString &sandbox, const QString &failureText,
                      std::function<void()> onSuccess)
{
    if (!m_client || sandbox.isEmpty())
        return;
    QPointer<MainWindow> self(this);
    m_client->call(method, {{QStringLiteral("name"), sandbox}},
                   [self, failureText, onSuccess](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result) {
                           self->showActionError(failureText, result.error());
                           return;
                       }
                       if (onSuccess)
                           onSuccess();
                   });
}

void MainWindow::createSandbox(const SandboxSpec &spec, bool start)
{
    if (!m_client)
        return;
    QPointer<MainWindow> self(this);
    m_client->call(QString::fromLatin1(protocol::method::SandboxCreate), spec.toJson(),
                   [self, spec, start](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result) {
                           self->showActionError(
                               tr("Could not create sandbox “%1”.").arg(spec.name), result.error());
                           return;
                       }
                       if (auto sandbox = Sandbox::fromJson(result->toObject()))
                           self->m_model->upsert(*sandbox);
                       const int row = self->m_model->rowOf(spec.name);
                       if (row >= 0)
                           self->m_table->selectRow(row);
                       if (start)
                           self->startSandbox(spec.name);
                   });
}

void MainWindow::startSandbox(const QString &sandbox)
{
    QPointer<MainWindow> self(this);
    call(QString::fromLatin1(protocol::method::SandboxStart), sandbox,
         tr("Could not start sandbox “%1”.").arg(sandbox), [self, sandbox] {
             // Show the boot as it happens: most people start a sandbox to use its console.
             if (self)
                 self->openConsole(sandbox);
         });
}

void MainWindow::stopSandbox(const QString &sandbox)
{
    call(QString::fromLatin1(protocol::method::SandboxStop), sandbox,
         tr("Could not stop sandbox “%1”.").arg(sandbox));
}

void MainWindow::killSandbox(const QString &sandbox)
{
    call(QString::fromLatin1(protocol::method::SandboxKill), sandbox,
         tr("Could not force-stop sandbox “%1”.").arg(sandbox));
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
        self->call(QString::fromLatin1(protocol::method::SandboxDelete), sandbox,
                   tr("Could not delete sandbox “%1”.").arg(sandbox), [self, sandbox] {
                       if (!self)
                           return;
                       for (int i = 0; i < self->m_tabs->count(); ++i) {
                           auto *tab = qobject_cast<ConsoleTab *>(self->m_tabs->widget(i));
                           if (tab && tab->sandbox() == sandbox)
                               self->closeConsoleTab(i);
                       }
                       self->m_model->remove(sandbox);
                   });
    });
    box->open();
}

void MainWindow::retryConnection()
{
    if (!m_client)
        return;
    m_client->disconnectFromHelper();
    m_client->connectToHelper();
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
    m_statusLabel->setText(tr("Connected to %1 (%2)").arg(m_client->transportDescription(), mode));
    m_statusLabel->setToolTip(hello.value(QStringLiteral("accelerationWarning")).toString());
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
    updateActions();
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
    const SandboxState state = sandbox ? sandbox->state : SandboxState::Stopped;
    m_newAction->setEnabled(connected);
    m_startAction->setEnabled(connected && sandbox && state == SandboxState::Stopped);
    m_stopAction->setEnabled(connected && sandbox
                             && (state == SandboxState::Running || state == SandboxState::Paused));
    m_killAction->setEnabled(connected && sandbox
                             && (state == SandboxState::Running || state == SandboxState::Stopping
                                 || state == SandboxState::Starting
                                 || state == SandboxState::Paused));
    m_deleteAction->setEnabled(connected && sandbox && state == SandboxState::Stopped);
    m_consoleAction->setEnabled(connected && sandbox);
    m_closeConsoleAction->setEnabled(m_tabs->count() > 0);
}

void MainWindow::showNewSandboxDialog()
{
    QStringList names;
    for (int row = 0; row < m_model->rowCount(); ++row)
        names.append(m_model->sandboxAt(row)->spec.name);
    auto *dialog = new NewSandboxDialog(m_client, names, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { createSandbox(dialog->spec(), dialog->startAfterCreate()); });
    dialog->open();
}

void MainWindow::showActionError(const QString &text, const Error &error)
{
    Q_EMIT actionFailed(text, error);
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Airlock"), text, QMessageBox::Ok, this);
    box->setInformativeText(ErrorText::summary(error) + QStringLiteral("\n\n") + error.message);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Airlock"),
                       tr("<h3>Airlock %1</h3><p>Runs untrusted coding agents in QEMU microVM "
                          "sandboxes managed by a privileged helper.</p>")
                           .arg(QStringLiteral(AIRLOCK_VERSION)));
}

} // namespace airlock
