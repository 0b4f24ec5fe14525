#include "ui/policyeditor.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/dryrunmodel.h"
#include "ui/errortext.h"
#include "ui/policydiff.h"
#include "ui/policyhistorymodel.h"
#include "ui/policyrulemodel.h"

#include <QAction>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

namespace airlock {

namespace {

QString templateTitle(const QString &fileName)
{
    const QString base = QFileInfo(fileName).completeBaseName();
    if (base == QLatin1String("github"))
        return PolicyEditor::tr("GitHub (git over HTTPS, API read-only)");
    if (base == QLatin1String("pypi"))
        return PolicyEditor::tr("Python packages (PyPI)");
    if (base == QLatin1String("npm"))
        return PolicyEditor::tr("npm registry");
    if (base == QLatin1String("debian-mirrors"))
        return PolicyEditor::tr("Debian mirrors");
    if (base == QLatin1String("deny-all"))
        return PolicyEditor::tr("Deny everything (no rules)");
    return base;
}

QList<HelperPolicyError> readPolicyErrors(const QJsonArray &errors)
{
    QList<HelperPolicyError> result;
    for (const QJsonValue &value : errors) {
        const QJsonObject object = value.toObject();
        const QJsonValue rule = object.value(QStringLiteral("rule"));
        result.append({rule.isDouble() ? rule.toInt() : -1,
                       object.value(QStringLiteral("field")).toString(),
                       object.value(QStringLiteral("message")).toString()});
    }
    return result;
}

} // namespace

PolicyEditor::PolicyEditor(HelperClient *client, const QString &sandbox, QWidget *parent)
    : QDialog(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_model(new PolicyRuleModel(this))
    , m_dryRun(new DryRunModel(this))
    , m_table(new QTableView(this))
    , m_problem(new QLabel(this))
    , m_bottomTabs(new QTabWidget(this))
    , m_diff(new QPlainTextEdit(this))
    , m_window(new QComboBox(this))
    , m_dryRunButton(new QPushButton(tr("&Run Dry Run"), this))
    , m_dryRunTable(new QTableView(this))
    , m_dryRunSummary(new QLabel(this))
    , m_history(new PolicyHistoryModel(this))
    , m_historyTable(new QTableView(this))
    , m_historyNote(new QLabel(this))
    , m_revertToButton(new QPushButton(tr("Revert to &This Version"), this))
    , m_status(new QLabel(this))
    , m_applyButton(new QPushButton(tr("&Apply"), this))
    , m_revertButton(new QPushButton(tr("Re&vert"), this))
    , m_templateButton(new QToolButton(this))
{
    setWindowTitle(tr("Egress Policy — %1[*]").arg(sandbox));
    setAttribute(Qt::WA_DeleteOnClose);
    setSizeGripEnabled(true);

    m_table->setModel(m_model);
    m_table->setAccessibleName(tr("Policy rules"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed
                             | QAbstractItemView::AnyKeyPressed);
    m_table->setTabKeyNavigation(false);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 10);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setColumnWidth(PolicyRuleModel::HostColumn, 210);
    m_table->setColumnWidth(PolicyRuleModel::PortsColumn, 70);
    m_table->setColumnWidth(PolicyRuleModel::MethodsColumn, 130);
    m_table->setColumnWidth(PolicyRuleModel::PathsColumn, 150);
    m_table->setColumnWidth(PolicyRuleModel::CommentColumn, 220);

    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setAccessibleName(tr("Problem of the selected rule"));
    m_problem->setStyleSheet(QStringLiteral("color: #b02020;"));

    m_diff->setReadOnly(true);
    m_diff->setAccessibleName(tr("Pending changes"));
    m_diff->setLineWrapMode(QPlainTextEdit::NoWrap);

    const QList<QString> windowNames {tr("Last hour"), tr("Last 24 hours"), tr("Last 7 days"),
                                      tr("Everything recorded")};
    for (const QString &name : windowNames)
        m_window->addItem(name);
    m_window->setCurrentIndex(1);
    m_window->setAccessibleName(tr("Dry run time window"));
    m_dryRunButton->setAccessibleName(tr("Run dry run"));
    m_dryRunButton->setToolTip(tr("Replay the sandbox's recorded requests against the edited "
                                  "policy; nothing is applied"));
    m_dryRunTable->setModel(m_dryRun);
    m_dryRunTable->setAccessibleName(tr("Dry run results"));
    m_dryRunTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_dryRunTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_dryRunTable->setTabKeyNavigation(false);
    m_dryRunTable->setWordWrap(false);
    m_dryRunTable->verticalHeader()->setDefaultSectionSize(m_dryRunTable->fontMetrics().height()
                                                           + 8);
    m_dryRunTable->verticalHeader()->setVisible(false);
    m_dryRunTable->horizontalHeader()->setStretchLastSection(true);
    m_dryRunTable->setColumnWidth(
        DryRunModel::TimeColumn,
        m_dryRunTable->fontMetrics().horizontalAdvance(QStringLiteral("2026-12-01 00:00:00")) + 16);
    m_dryRunTable->setColumnWidth(DryRunModel::NameColumn, 180);
    m_dryRunTable->setColumnWidth(DryRunModel::PathColumn, 160);
    m_dryRunTable->setColumnWidth(DryRunModel::ChangeColumn, 110);
    m_dryRunTable->setColumnWidth(DryRunModel::NowColumn, 170);
    m_dryRunSummary->setWordWrap(true);
    m_dryRunSummary->setAccessibleName(tr("Dry run summary"));
    m_dryRunSummary->setText(tr("Choose a time window and run: the sandbox's recorded requests "
                                "are checked against the edited policy."));

    auto *dryRunPage = new QWidget(this);
    auto *dryRunLayout = new QVBoxLayout(dryRunPage);
    auto *dryRunRow = new QHBoxLayout;
    auto *windowLabel = new QLabel(tr("&Window:"), dryRunPage);
    windowLabel->setBuddy(m_window);
    dryRunRow->addWidget(windowLabel);
    dryRunRow->addWidget(m_window);
    dryRunRow->addWidget(m_dryRunButton);
    dryRunRow->addWidget(m_dryRunSummary, 1);
    dryRunLayout->addLayout(dryRunRow);
    dryRunLayout->addWidget(m_dryRunTable, 1);

    m_historyTable->setModel(m_history);
    m_historyTable->setAccessibleName(tr("Policy history"));
    m_historyTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_historyTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_historyTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_historyTable->setTabKeyNavigation(false);
    m_historyTable->setWordWrap(false);
    m_historyTable->verticalHeader()->setVisible(false);
    m_historyTable->verticalHeader()->setDefaultSectionSize(m_historyTable->fontMetrics().height()
                                                            + 8);
    m_historyTable->horizontalHeader()->setStretchLastSection(false);
    m_historyTable->setColumnWidth(
        PolicyHistoryModel::TimeColumn,
        m_historyTable->fontMetrics().horizontalAdvance(QStringLiteral("2026-12-01 00:00:00"))
            + 16);
    m_historyTable->setColumnWidth(PolicyHistoryModel::WhoColumn, 90);
    m_historyTable->setColumnWidth(PolicyHistoryModel::SourceColumn, 110);
    m_historyTable->horizontalHeader()->setSectionResizeMode(PolicyHistoryModel::ChangeColumn,
                                                             QHeaderView::Stretch);
    m_historyTable->setColumnWidth(PolicyHistoryModel::RulesColumn, 50);
    m_historyNote->setWordWrap(true);
    m_historyNote->setTextFormat(Qt::PlainText);
    m_historyNote->setAccessibleName(tr("Policy history summary"));
    m_revertToButton->setAccessibleName(tr("Revert to the selected version of the policy"));
    m_revertToButton->setToolTip(tr("Put the rules of the selected change into the editor as "
                                    "pending changes; Apply makes them the policy"));
    m_revertToButton->setAutoDefault(false);
    m_revertToButton->setEnabled(false);
    auto *historyPage = new QWidget(this);
    auto *historyLayout = new QVBoxLayout(historyPage);
    auto *historyRow = new QHBoxLayout;
    historyRow->addWidget(m_historyNote, 1);
    historyRow->addWidget(m_revertToButton);
    historyLayout->addLayout(historyRow);
    historyLayout->addWidget(m_historyTable, 1);
    connect(m_revertToButton, &QPushButton::clicked, this,
            [this] { revertTo(m_historyTable->currentIndex().row()); });
    connect(m_historyTable, &QAbstractItemView::doubleClicked, this,
            [this](const QModelIndex &index) { revertTo(index.row()); });

    m_bottomTabs->addTab(m_diff, tr("&Pending Changes"));
    m_bottomTabs->addTab(dryRunPage, tr("&Dry Run"));
    m_bottomTabs->addTab(historyPage, tr("&History"));
    m_bottomTabs->setAccessibleName(tr("Changes, dry run and history"));

    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setAccessibleName(tr("Policy editor status"));
    m_applyButton->setAccessibleName(tr("Apply policy"));
    m_applyButton->setToolTip(tr("Replace the sandbox's policy with the edited one (atomic)"));
    m_revertButton->setAccessibleName(tr("Revert to the applied policy"));
    auto *buttons = new QDialogButtonBox(this);
    buttons->addButton(m_applyButton, QDialogButtonBox::ApplyRole);
    buttons->addButton(m_revertButton, QDialogButtonBox::ResetRole);
    QPushButton *close = buttons->addButton(QDialogButtonBox::Close);
    close->setAccessibleName(tr("Close policy editor"));
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(m_applyButton, &QPushButton::clicked, this, &PolicyEditor::apply);
    connect(m_revertButton, &QPushButton::clicked, this, &PolicyEditor::reload);
    connect(m_dryRunButton, &QPushButton::clicked, this, [this] { runDryRun(); });
    m_applyButton->setAutoDefault(false);
    m_revertButton->setAutoDefault(false);
    m_dryRunButton->setAutoDefault(false);

    auto *toolbar = new QToolBar(this);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    toolbar->setAccessibleName(tr("Policy editor tools"));

    auto *topSplitter = new QSplitter(Qt::Vertical, this);
    auto *tablePane = new QWidget(this);
    auto *tableLayout = new QVBoxLayout(tablePane);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    tableLayout->addWidget(m_table, 1);
    tableLayout->addWidget(m_problem);
    topSplitter->addWidget(tablePane);
    topSplitter->addWidget(m_bottomTabs);
    topSplitter->setStretchFactor(0, 3);
    topSplitter->setStretchFactor(1, 2);
    topSplitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(toolbar);
    layout->addWidget(topSplitter, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    buildActions();
    // buildActions filled the toolbar through this property.
    for (QAction *action : actions())
        if (action->property("toolbar").toBool())
            toolbar->addAction(action);
    toolbar->insertWidget(toolbar->actions().value(1), m_templateButton);

    setTabOrder(m_table, m_bottomTabs);
    setTabOrder(m_bottomTabs, m_window);
    setTabOrder(m_window, m_dryRunButton);
    setTabOrder(m_dryRunButton, m_dryRunTable);
    setTabOrder(m_dryRunTable, m_revertToButton);
    setTabOrder(m_revertToButton, m_historyTable);
    setTabOrder(m_historyTable, m_applyButton);
    setTabOrder(m_applyButton, m_revertButton);
    setTabOrder(m_revertButton, close);

    connect(m_model, &PolicyRuleModel::rulesChanged, this, &PolicyEditor::updateState);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &PolicyEditor::updateProblemLabel);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &PolicyEditor::updateProblemLabel);
    connect(m_historyTable->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &PolicyEditor::updateState);
    if (client)
        connect(client, &HelperClient::notificationReceived, this, &PolicyEditor::onNotification);

    resize(980, 640);
    updateState();
    reload();
}

PolicyEditor::~PolicyEditor() = default;

void PolicyEditor::buildActions()
{
    auto make = [this](const QString &text, const QKeySequence &key, const QString &tip,
                       bool toolbar = true) {
        auto *action = new QAction(text, this);
        action->setShortcut(key);
        action->setToolTip(tip);
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        action->setProperty("toolbar", toolbar);
        addAction(action);
        return action;
    };
    QAction *add = make(tr("&Add Rule"), QKeySequence(tr("Ctrl+Shift+N")),
                        tr("Append an empty rule and edit its host"));
    connect(add, &QAction::triggered, this, [this] {
        const int row = m_model->addEmptyRule();
        m_table->setCurrentIndex(m_model->index(row, PolicyRuleModel::HostColumn));
        m_table->edit(m_table->currentIndex());
    });

    auto *templates = new QMenu(this);
    const QStringList files =
        QDir(QStringLiteral(":/policies")).entryList({QStringLiteral("*.json")});
    for (const QString &file : files) {
        QAction *action = templates->addAction(templateTitle(file));
        const QString path = QStringLiteral(":/policies/") + file;
        connect(action, &QAction::triggered, this, [this, path] { addTemplate(path); });
    }
    m_templateButton->setText(tr("Add from &Template"));
    m_templateButton->setMenu(templates);
    m_templateButton->setPopupMode(QToolButton::InstantPopup);
    m_templateButton->setAccessibleName(tr("Add rules from a template"));
    m_templateButton->setToolTip(tr("Append the rules of a policy template"));

    QAction *remove =
        make(tr("&Remove Rule"), QKeySequence::Delete, tr("Remove the selected rules"));
    connect(remove, &QAction::triggered, this, [this] {
        QList<int> rows;
        for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
            rows.append(index.row());
        if (rows.isEmpty() && m_table->currentIndex().isValid())
            rows.append(m_table->currentIndex().row());
        m_model->removeRules(rows);
    });
    QAction *undo = m_model->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    undo->setProperty("toolbar", true);
    addAction(undo);
    QAction *redo = m_model->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    redo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    redo->setProperty("toolbar", true);
    addAction(redo);

    QAction *import = make(tr("&Import…"), QKeySequence(tr("Ctrl+I")),
                           tr("Replace the rules with those of a policy file"));
    connect(import, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Import Policy"), {},
                                                          tr("Policy files (*.json)"));
        if (!path.isEmpty())
            importFile(path);
    });
    QAction *exportAction = make(tr("&Export…"), QKeySequence(tr("Ctrl+E")),
                                 tr("Save the edited rules as a policy file"));
    connect(exportAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Policy"), m_sandbox + QStringLiteral("-policy.json"),
            tr("Policy files (*.json)"));
        if (!path.isEmpty())
            exportFile(path);
    });
}

void PolicyEditor::addTemplate(const QString &resourcePath)
{
    QFile file(resourcePath);
    if (!file.open(QIODevice::ReadOnly)) {
        setStatus(tr("Could not read the template %1.").arg(resourcePath), true);
        return;
    }
    auto policy = EgressPolicy::fromJsonBytes(file.readAll());
    if (!policy) {
        setStatus(tr("The template is not a valid policy: %1").arg(policy.error().message), true);
        return;
    }
    if (policy->rules.isEmpty()) {
        setStatus(tr("This template has no rules: it denies everything."));
        return;
    }
    const int row =
        m_model->addRules(policy->rules, tr("add template %1").arg(templateTitle(resourcePath)));
    m_table->setCurrentIndex(m_model->index(row, PolicyRuleModel::HostColumn));
    setStatus(tr("Added %n rule(s) from the template; they take effect when you apply.", "",
                 int(policy->rules.size())));
}

void PolicyEditor::addRules(const QList<EgressRule> &rules)
{
    if (rules.isEmpty())
        return;
    const int row = m_model->addRules(rules, tr("add %n rule(s)", "", int(rules.size())));
    m_table->setCurrentIndex(m_model->index(row, PolicyRuleModel::HostColumn));
    m_table->selectRow(row);
    m_bottomTabs->setCurrentIndex(0);
    setStatus(tr("New rules pending: %1. Review them and Apply to allow.").arg(rules.size()));
}

bool PolicyEditor::importFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        setStatus(tr("Could not open %1: %2").arg(path, file.errorString()), true);
        return false;
    }
    auto policy = EgressPolicy::fromJsonBytes(file.read(EgressPolicy::kMaxJsonBytes + 1));
    if (!policy) {
        setStatus(tr("%1 is not a valid policy file: %2").arg(path, policy.error().message), true);
        return false;
    }
    // One undo step: remove everything, add the file's rules.
    m_model->undoStack()->beginMacro(tr("import %1").arg(QFileInfo(path).fileName()));
    QList<int> all;
    for (int row = 0; row < m_model->rowCount(); ++row)
        all.append(row);
    m_model->removeRules(all);
    m_model->addRules(policy->rules, tr("import"));
    m_model->undoStack()->endMacro();
    setStatus(tr("Imported %n rule(s) from %1; they take effect when you apply.", "",
                 int(policy->rules.size()))
                  .arg(QFileInfo(path).fileName()));
    return true;
}

bool PolicyEditor::exportFile(const QString &path)
{
    auto policy = m_model->policy();
    if (!policy) {
        setStatus(tr("Fix the problems first: %1").arg(policy.error().message), true);
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(policy->toJsonBytes()) < 0
        || !file.commit()) {
        setStatus(tr("Could not write %1: %2").arg(path, file.errorString()), true);
        return false;
    }
    setStatus(tr("Exported %n rule(s) to %1.", "", int(policy->rules.size()))
                  .arg(QFileInfo(path).fileName()));
    return true;
}

void PolicyEditor::reload()
{
    if (!m_client)
        return;
    QPointer<PolicyEditor> self(this);
    m_client->call(QString::fromLatin1(protocol::method::PolicyGet),
                   {{QStringLiteral("name"), m_sandbox}}, [self](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result) {
                           self->setStatus(
                               tr("Could not read the policy: %1 %2")
                                   .arg(ErrorText::summary(result.error()), result.error().message),
                               true);
                           return;
                       }
                       auto policy = EgressPolicy::fromJson(
                           result->toObject().value(QStringLiteral("policy")).toObject());
                       if (!policy) {
                           self->setStatus(policy.error().message, true);
                           return;
                       }
                       self->m_applied = *policy;
                       self->m_model->setPolicy(*policy);
                       self->m_loaded = true;
                       self->m_dryRun->clear();
                       self->setStatus(tr("%n rule(s) applied.", "", int(policy->rules.size())));
                       self->updateState();
                       Q_EMIT self->loaded();
                   });
    reloadHistory();
}

void PolicyEditor::reloadHistory()
{
    if (!m_client)
        return;
    QPointer<PolicyEditor> self(this);
    m_client->call(
        QString::fromLatin1(protocol::method::PolicyHistory), {{QStringLiteral("name"), m_sandbox}},
        [self](const Result<QJsonValue> &result) {
            if (!self)
                return;
            if (!result) {
                self->m_history->clear();
                self->m_historyNote->setText(
                    result.error().kind == ErrorKind::MethodNotFound
                        ? tr("This helper keeps no policy history; update airlockd.")
                        : tr("Could not read the policy history: %1 %2")
                              .arg(ErrorText::summary(result.error()), result.error().message));
            } else {
                const QJsonObject answer = result->toObject();
                self->m_history->setChanges(answer.value(QStringLiteral("changes")).toArray());
                const int shown = self->m_history->rowCount();
                QString note = shown == 0
                    ? tr("No changes recorded yet: every applied change appears here, with who "
                         "made it and through what.")
                    : tr("%n recorded change(s), newest first.", "", shown);
                if (answer.value(QStringLiteral("more")).toBool())
                    note += QLatin1Char(' ') + tr("Older changes are not shown.");
                self->m_historyNote->setText(note);
                if (shown > 0)
                    self->m_historyTable->setCurrentIndex(self->m_history->index(0, 0));
            }
            self->updateState();
            Q_EMIT self->historyLoaded();
        });
}

bool PolicyEditor::revertTo(int row)
{
    if (row < 0 || row >= m_history->rowCount())
        return false;
    const PolicyHistoryModel::Change &change = m_history->changeAt(row);
    if (!change.policy) {
        setStatus(tr("The helper did not keep that version's rules (too large to record)."), true);
        return false;
    }
    const QString when = change.time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    m_model->undoStack()->beginMacro(tr("revert to the policy of %1").arg(when));
    QList<int> all;
    for (int r = 0; r < m_model->rowCount(); ++r)
        all.append(r);
    m_model->removeRules(all);
    m_model->addRules(change.policy->rules, tr("revert"));
    m_model->undoStack()->endMacro();
    m_revertTarget = change.newRevision;
    m_bottomTabs->setCurrentIndex(0);
    setStatus(tr("The rules of %1 (%n rule(s)) are in the editor as pending changes; Apply makes "
                 "them the policy.",
                 "", int(change.policy->rules.size()))
                  .arg(when));
    return true;
}

QString PolicyEditor::historyNoteText() const
{
    return m_historyNote->text();
}

void PolicyEditor::apply()
{
    if (!m_client || m_busy)
        return;
    auto policy = m_model->policy();
    if (!policy) {
        setStatus(tr("Not applied: %1").arg(policy.error().message), true);
        Q_EMIT applyFailed(statusText());
        return;
    }
    m_busy = true;
    updateState();
    QPointer<PolicyEditor> self(this);
    const EgressPolicy edited = *policy;
    // Validate first so every problem shows next to its rule, then set atomically.
    m_client->call(
        QString::fromLatin1(protocol::method::PolicyValidate),
        {{QStringLiteral("policy"), edited.toJson()}},
        [self, edited](const Result<QJsonValue> &validation) {
            if (!self)
                return;
            if (validation) {
                const QJsonObject answer = validation->toObject();
                if (!answer.value(QStringLiteral("valid")).toBool()) {
                    self->m_busy = false;
                    self->m_model->setHelperErrors(
                        readPolicyErrors(answer.value(QStringLiteral("errors")).toArray()));
                    self->setStatus(tr("The helper refused the policy; the problems are shown "
                                       "next to the rules."),
                                    true);
                    self->updateState();
                    Q_EMIT self->applyFailed(self->statusText());
                    return;
                }
            }
            // The record says a reverted version was a revert, anything else an edit.
            const QString source = edited.revision() == self->m_revertTarget
                ? QStringLiteral("revert")
                : QStringLiteral("editor");
            self->m_client->call(
                QString::fromLatin1(protocol::method::PolicySet),
                {{QStringLiteral("name"), self->m_sandbox},
                 {QStringLiteral("policy"), edited.toJson()},
                 {QStringLiteral("source"), source}},
                [self](const Result<QJsonValue> &result) {
                    if (!self)
                        return;
                    self->m_busy = false;
                    if (!result) {
                        self->setStatus(
                            tr("Not applied: %1 %2")
                                .arg(ErrorText::summary(result.error()), result.error().message),
                            true);
                        self->updateState();
                        Q_EMIT self->applyFailed(self->statusText());
                        return;
                    }
                    auto stored = EgressPolicy::fromJson(
                        result->toObject().value(QStringLiteral("policy")).toObject());
                    if (stored) {
                        self->m_applied = *stored;
                        self->m_model->setPolicy(*stored);
                    }
                    self->m_dryRun->clear();
                    self->m_revertTarget.clear();
                    self->setStatus(tr("Applied: %n rule(s). New connections of %1 follow the "
                                       "new policy.",
                                       "", int(self->m_applied.rules.size()))
                                        .arg(self->m_sandbox));
                    self->updateState();
                    self->reloadHistory();
                    Q_EMIT self->applied();
                });
        });
}

void PolicyEditor::runDryRun(int windowIndex)
{
    if (!m_client)
        return;
    if (windowIndex >= 0)
        m_window->setCurrentIndex(windowIndex);
    auto policy = m_model->policy();
    if (!policy) {
        m_dryRunSummary->setText(tr("Fix the problems first: %1").arg(policy.error().message));
        return;
    }
    QJsonObject params {{QStringLiteral("name"), m_sandbox},
                        {QStringLiteral("policy"), policy->toJson()}};
    const int seconds = dryRunWindows().value(m_window->currentIndex());
    if (seconds > 0)
        params.insert(
            QStringLiteral("since"),
            QDateTime::currentDateTimeUtc().addSecs(-seconds).toString(Qt::ISODateWithMs));
    m_bottomTabs->setCurrentIndex(1);
    m_dryRunSummary->setText(tr("Running…"));
    m_dryRunButton->setEnabled(false);
    QPointer<PolicyEditor> self(this);
    m_client->call(
        QString::fromLatin1(protocol::method::PolicyDryRun), params,
        [self](const Result<QJsonValue> &result) {
            if (!self)
                return;
            self->m_dryRunButton->setEnabled(true);
            if (!result) {
                self->m_dryRun->clear();
                self->m_dryRunSummary->setText(
                    result.error().kind == ErrorKind::MethodNotFound
                        ? tr("This helper cannot do dry runs; update airlockd.")
                        : tr("Dry run failed: %1 %2")
                              .arg(ErrorText::summary(result.error()), result.error().message));
                Q_EMIT self->dryRunFinished();
                return;
            }
            if (auto ok = self->m_dryRun->setResult(result->toObject()); !ok) {
                self->m_dryRunSummary->setText(ok.error().message);
            } else if (self->m_dryRun->rowCount() == 0) {
                self->m_dryRunSummary->setText(
                    tr("None of %n recorded request(s) would change verdict.", "",
                       self->m_dryRun->evaluated()));
            } else {
                self->m_dryRunSummary->setText(
                    tr("Of %1 recorded requests, %2 would be newly allowed and %3 "
                       "newly denied.")
                        .arg(self->m_dryRun->evaluated())
                        .arg(self->m_dryRun->newlyAllowed())
                        .arg(self->m_dryRun->newlyDenied()));
            }
            Q_EMIT self->dryRunFinished();
        });
}

void PolicyEditor::onNotification(const QString &method, const QJsonObject &params)
{
    if (method != QLatin1String(protocol::notification::PolicyChanged)
        || params.value(QStringLiteral("name")).toString() != m_sandbox || m_busy)
        return;
    // Someone else's change is in the record now, whatever the editor holds.
    reloadHistory();
    auto edited = m_model->policy();
    if (edited && *edited == m_applied) {
        reload();
        return;
    }
    setStatus(tr("The policy of %1 was changed elsewhere; Revert shows it, Apply replaces it.")
                  .arg(m_sandbox));
}

QString PolicyEditor::pendingChangesText() const
{
    return m_diff->toPlainText();
}

QString PolicyEditor::statusText() const
{
    return m_status->text();
}

void PolicyEditor::setStatus(const QString &text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: #b02020;") : QString());
}

void PolicyEditor::updateProblemLabel()
{
    const QModelIndex current = m_table->currentIndex();
    QString text;
    if (current.isValid()) {
        const QString problem = m_model->rowProblem(current.row());
        if (!problem.isEmpty())
            text = tr("Rule %1: %2").arg(current.row() + 1).arg(problem);
    }
    if (text.isEmpty() && !m_model->policyLevelErrors().isEmpty())
        text = m_model->policyLevelErrors().join(QLatin1Char('\n'));
    m_problem->setText(text);
    m_problem->setVisible(!text.isEmpty());
}

void PolicyEditor::updateState()
{
    auto edited = m_model->policy();
    QStringList lines;
    if (edited) {
        for (const PolicyChange &change : PolicyDiff::compute(m_applied, *edited))
            lines.append(PolicyDiff::describe(change));
    } else {
        lines.append(tr("(Rules with problems: %1. Fix them to see the changes.)")
                         .arg(m_model->problemCount()));
    }
    const bool pending = !edited || !(*edited == m_applied);
    m_diff->setPlainText(lines.isEmpty() ? tr("No pending changes.")
                                         : lines.join(QLatin1Char('\n')));
    m_bottomTabs->setTabText(0,
                             pending && !lines.isEmpty()
                                 ? tr("&Pending Changes (%1)").arg(lines.size())
                                 : tr("&Pending Changes"));
    m_applyButton->setEnabled(m_loaded && !m_busy && edited.has_value() && pending);
    m_revertButton->setEnabled(m_loaded && !m_busy && pending);
    m_dryRunButton->setEnabled(m_loaded && edited.has_value());
    const int historyRow = m_historyTable->currentIndex().row();
    m_revertToButton->setEnabled(m_loaded && !m_busy && historyRow >= 0
                                 && historyRow < m_history->rowCount()
                                 && m_history->changeAt(historyRow).policy.has_value()
                                 && !(*m_history->changeAt(historyRow).policy == m_applied));
    setWindowModified(pending);
    updateProblemLabel();
}

} // namespace airlock
