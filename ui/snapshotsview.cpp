#include "ui/snapshotsview.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/errortext.h"
#include "ui/forkdialog.h"
#include "ui/sandboxtablemodel.h"
#include "ui/scheduledialog.h"
#include "ui/snapshottimelinemodel.h"
#include "ui/snapshottimelineview.h"

#include <QAction>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

namespace airlock {

namespace {

// Restore and fork boot a VMM and store a safety snapshot first: seconds on TCG.
constexpr int kLongCallMs = 180000;

QString methodName(const char *name)
{
    return QString::fromLatin1(name);
}

} // namespace

SnapshotsView::SnapshotsView(HelperClient *client, SandboxTableModel *sandboxes, QWidget *parent)
    : QWidget(parent)
    , m_model(new SnapshotTimelineModel(this))
    , m_selection(new QItemSelectionModel(m_model, this))
    , m_sandboxBox(new QComboBox(this))
    , m_timeline(new SnapshotTimelineView(this))
    , m_tree(new QTreeView(this))
    , m_details(new QLabel(this))
    , m_status(new QLabel(this))
    , m_state(new QLabel(this))
    , m_takeButton(new QPushButton(this))
    , m_scheduleButton(new QPushButton(this))
    , m_restoreButton(new QPushButton(this))
    , m_forkButton(new QPushButton(this))
{
    m_sandboxBox->setAccessibleName(tr("Sandbox whose snapshots are shown"));
    m_sandboxBox->setMinimumContentsLength(16);
    m_state->setAccessibleName(tr("Sandbox state"));
    m_timeline->setModel(m_model, m_selection);

    m_tree->setModel(m_model);
    m_tree->setSelectionModel(m_selection);
    m_tree->setAccessibleName(tr("Snapshot list"));
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tree->setAlternatingRowColors(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    m_tree->header()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    // Starting widths; the columns but the label grow to their cells (fitColumns).
    m_tree->setColumnWidth(SnapshotTimelineModel::LabelColumn, 190);
    m_tree->setColumnWidth(SnapshotTimelineModel::TimeColumn, 110);
    m_tree->setColumnWidth(SnapshotTimelineModel::KindColumn, 60);
    m_tree->setColumnWidth(SnapshotTimelineModel::LogicalSizeColumn, 60);
    m_tree->setColumnWidth(SnapshotTimelineModel::NewBytesColumn, 120);
    m_tree->setColumnWidth(SnapshotTimelineModel::PauseColumn, 50);
    m_tree->setColumnWidth(SnapshotTimelineModel::PinnedColumn, 50);
    m_tree->setIndentation(14); // branches nest deep; the labels need the room

    m_details->setAccessibleName(tr("Snapshot details"));
    m_details->setTextFormat(Qt::RichText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_details->setWordWrap(true);
    m_details->setMinimumWidth(260);
    m_status->setAccessibleName(tr("Snapshot status"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);

    buildActions();

    auto *top = new QHBoxLayout;
    auto *sandboxLabel = new QLabel(tr("&Sandbox:"), this);
    sandboxLabel->setBuddy(m_sandboxBox);
    top->addWidget(sandboxLabel);
    top->addWidget(m_sandboxBox);
    top->addWidget(m_state);
    top->addStretch(1);
    m_takeButton->setText(m_takeAction->text());
    m_takeButton->setToolTip(m_takeAction->toolTip());
    m_takeButton->setAccessibleName(tr("Take Snapshot"));
    m_scheduleButton->setText(m_scheduleAction->text());
    m_scheduleButton->setToolTip(m_scheduleAction->toolTip());
    m_scheduleButton->setAccessibleName(tr("Automatic snapshots"));
    top->addWidget(m_takeButton);
    top->addWidget(m_scheduleButton);

    auto *detailsBox = new QGroupBox(tr("Details"), this);
    auto *detailsLayout = new QVBoxLayout(detailsBox);
    detailsLayout->addWidget(m_details, 1);

    // Restore and Fork beside the list, not only in the context menu: they are what a
    // timeline is for.
    auto *treeRow = new QWidget(this);
    auto *treeLayout = new QHBoxLayout(treeRow);
    treeLayout->setContentsMargins(0, 0, 0, 0);
    treeLayout->addWidget(m_tree, 1);
    auto *treeButtons = new QVBoxLayout;
    for (const auto &[button, action] :
         {std::pair {m_restoreButton, m_restoreAction}, std::pair {m_forkButton, m_forkAction}}) {
        button->setText(action->text());
        button->setToolTip(action->toolTip());
        connect(button, &QPushButton::clicked, action, &QAction::trigger);
        treeButtons->addWidget(button);
    }
    m_restoreButton->setAccessibleName(tr("Restore the selected snapshot"));
    m_forkButton->setAccessibleName(tr("Fork the selected snapshot"));
    treeButtons->addStretch(1);
    treeLayout->addLayout(treeButtons);

    auto *lists = new QSplitter(Qt::Vertical, this);
    lists->addWidget(m_timeline);
    lists->addWidget(treeRow);
    lists->setStretchFactor(0, 3);
    lists->setStretchFactor(1, 2);
    lists->setChildrenCollapsible(false);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(lists);
    split->addWidget(detailsBox);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setChildrenCollapsible(false);
    split->setSizes({860, 240});

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);

    setTabOrder(m_sandboxBox, m_takeButton);
    setTabOrder(m_takeButton, m_scheduleButton);
    setTabOrder(m_scheduleButton, m_timeline);
    setTabOrder(m_timeline, m_tree);
    setTabOrder(m_tree, m_restoreButton);
    setTabOrder(m_restoreButton, m_forkButton);

    connect(m_sandboxBox, &QComboBox::currentIndexChanged, this,
            [this] { setSandbox(m_sandboxBox->currentData().toString()); });
    connect(m_takeButton, &QPushButton::clicked, m_takeAction, &QAction::trigger);
    connect(m_scheduleButton, &QPushButton::clicked, m_scheduleAction, &QAction::trigger);
    connect(m_selection, &QItemSelectionModel::currentChanged, this, [this] {
        updateDetails();
        updateActions();
    });
    auto refreshCurrent = [this] {
        updateDetails();
        updateActions();
    };
    connect(m_model, &QAbstractItemModel::modelReset, this, refreshCurrent);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, refreshCurrent);
    connect(m_model, &QAbstractItemModel::dataChanged, this, refreshCurrent);
    connect(m_model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex &parentIndex, int first) {
                m_tree->expandAll();
                fitColumns();
                // A new snapshot of this sandbox (taken here or elsewhere) becomes current.
                const QModelIndex index = m_model->index(first, 0, parentIndex);
                if (!index.data(SnapshotTimelineModel::ForeignRole).toBool())
                    m_timeline->setCurrentIndex(index);
                updateActions();
            });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_tree->expandAll();
        fitColumns();
    });
    connect(m_model, &QAbstractItemModel::dataChanged, this, &SnapshotsView::fitColumns);
    connect(m_model, &SnapshotTimelineModel::metadataChanged, this, &SnapshotsView::updateDetails);
    connect(m_model, &SnapshotTimelineModel::metadataChanged, this,
            &SnapshotsView::updateCurrentState);
    connect(m_model, &QAbstractItemModel::modelReset, this, &SnapshotsView::updateCurrentState);
    connect(m_model, &SnapshotTimelineModel::loadFailed, this,
            [this](const QString &message) { setStatus(message, true); });
    connect(m_timeline, &SnapshotTimelineView::menuRequested, this,
            [this](const QPoint &globalPos, const QModelIndex &snapshot) {
                showMenu(globalPos, snapshot.isValid());
            });
    connect(m_tree, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = m_tree->indexAt(pos);
        if (index.isValid())
            m_selection->setCurrentIndex(
                index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        showMenu(m_tree->viewport()->mapToGlobal(pos), index.isValid());
    });

    setClient(client, sandboxes);
    updateDetails();
    updateActions();
}

SnapshotsView::~SnapshotsView() = default;

void SnapshotsView::setClient(HelperClient *client, SandboxTableModel *sandboxes)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    if (m_sandboxes)
        disconnect(m_sandboxes, nullptr, this, nullptr);
    m_client = client;
    m_sandboxes = sandboxes;
    if (client)
        connect(client, &HelperClient::stateChanged, this, &SnapshotsView::updateActions);
    if (sandboxes) {
        connect(sandboxes, &QAbstractItemModel::modelReset, this,
                &SnapshotsView::updateSandboxChoices);
        connect(sandboxes, &QAbstractItemModel::rowsInserted, this,
                &SnapshotsView::updateSandboxChoices);
        connect(sandboxes, &QAbstractItemModel::rowsRemoved, this,
                &SnapshotsView::updateSandboxChoices);
        connect(sandboxes, &QAbstractItemModel::dataChanged, this, &SnapshotsView::updateActions);
    }
    m_model->setClient(client);
    updateSandboxChoices();
    updateActions();
}

void SnapshotsView::updateSandboxChoices()
{
    const QString current = m_model->sandbox();
    {
        const QSignalBlocker blocker(m_sandboxBox);
        m_sandboxBox->clear();
        if (m_sandboxes) {
            for (int row = 0; row < m_sandboxes->rowCount(); ++row) {
                const QString name = m_sandboxes->sandboxAt(row)->spec.name;
                m_sandboxBox->addItem(name, name);
            }
        }
        m_sandboxBox->setCurrentIndex(m_sandboxBox->findData(current));
    }
    // The shown sandbox is gone: the first one instead, or none once the list is known to be
    // empty (not while it is merely being reloaded, e.g. after a reconnection).
    if (m_sandboxBox->currentIndex() < 0 && m_sandboxBox->count() > 0)
        setSandbox(m_sandboxBox->itemData(0).toString());
    else if (m_sandboxBox->count() == 0 && m_sandboxes && m_sandboxes->isLoaded())
        setSandbox({});
    QStringList names;
    for (int i = 0; i < m_sandboxBox->count(); ++i)
        names.append(m_sandboxBox->itemData(i).toString());
    m_model->setOtherSandboxes(names); // fresh forks show as branches
    updateActions();
}

void SnapshotsView::setSandbox(const QString &sandbox)
{
    if (const int index = m_sandboxBox->findData(sandbox); index != m_sandboxBox->currentIndex()) {
        const QSignalBlocker blocker(m_sandboxBox);
        m_sandboxBox->setCurrentIndex(index);
    }
    if (sandbox == m_model->sandbox())
        return;
    m_model->setSandbox(sandbox);
    setStatus({});
    updateDetails();
    updateActions();
}

QString SnapshotsView::sandbox() const
{
    return m_model->sandbox();
}

const Snapshot *SnapshotsView::current() const
{
    return m_model->snapshotAt(m_selection->currentIndex());
}

QString SnapshotsView::currentSnapshot() const
{
    const Snapshot *snapshot = current();
    return snapshot ? snapshot->id : QString();
}

void SnapshotsView::selectSnapshot(const QString &id)
{
    m_timeline->setCurrentIndex(m_model->indexOf(id));
}

void SnapshotsView::buildActions()
{
    auto make = [this](QAction *&action, const QString &text, const QKeySequence &shortcut,
                       const QString &tip) {
        action = new QAction(text, this);
        action->setShortcut(shortcut);
        // The keys act where the timeline is (the table has its own Delete).
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        action->setToolTip(tip);
        action->setStatusTip(tip);
        addAction(action);
    };
    make(m_takeAction, tr("&Take Snapshot…"), QKeySequence(tr("Ctrl+Shift+S")),
         tr("Save the sandbox's whole running state (memory and devices)"));
    m_takeAction->setShortcutContext(Qt::WindowShortcut);
    m_takeAction->setIcon(QIcon(QStringLiteral(":/icons/snapshot.svg")));
    make(m_scheduleAction, tr("&Automatic Snapshots…"), QKeySequence(),
         tr("Take snapshots at an interval and choose how long they are kept"));
    make(m_restoreAction, tr("&Restore…"), QKeySequence(tr("Ctrl+Shift+R")),
         tr("Put the sandbox back into this snapshot's state (a safety snapshot is taken first)"));
    make(m_forkAction, tr("&Fork…"), QKeySequence(tr("Ctrl+Shift+F")),
         tr("Start a new sandbox from this snapshot; the original runs on"));
    make(m_renameAction, tr("Re&name…"), QKeySequence(Qt::Key_F2), tr("Change the label"));
    make(m_pinAction, tr("&Pin"), QKeySequence(), tr("Keep this snapshot whatever its age"));
    m_pinAction->setCheckable(true);
    make(m_deleteAction, tr("&Delete…"), QKeySequence::Delete,
         tr("Delete this snapshot; its children stay"));
    connect(m_takeAction, &QAction::triggered, this, &SnapshotsView::requestTakeSnapshot);
    connect(m_scheduleAction, &QAction::triggered, this, &SnapshotsView::requestSchedule);
    connect(m_restoreAction, &QAction::triggered, this, &SnapshotsView::requestRestore);
    connect(m_forkAction, &QAction::triggered, this, &SnapshotsView::requestFork);
    connect(m_renameAction, &QAction::triggered, this, &SnapshotsView::requestRename);
    connect(m_pinAction, &QAction::triggered, this, &SnapshotsView::togglePinned);
    connect(m_deleteAction, &QAction::triggered, this, &SnapshotsView::requestDelete);
    connect(m_timeline, &SnapshotTimelineView::activated, m_restoreAction, &QAction::trigger);
}

void SnapshotsView::fitColumns()
{
    // A column grows to its widest cell ("50.4 MiB (14.6 MiB stored)"), never shrinks below
    // what the person made it. The label keeps its width: a safety snapshot's label names a
    // whole id and would push the other columns out of sight; it elides, its tooltip has it.
    for (int column = 0; column < SnapshotTimelineModel::ColumnCount; ++column) {
        if (column == SnapshotTimelineModel::LabelColumn)
            continue;
        const int before = m_tree->columnWidth(column);
        m_tree->resizeColumnToContents(column);
        if (m_tree->columnWidth(column) < before)
            m_tree->setColumnWidth(column, before);
    }
}

void SnapshotsView::showMenu(const QPoint &globalPos, bool forSnapshot)
{
    auto *menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (forSnapshot) {
        menu->addAction(m_restoreAction);
        menu->addAction(m_forkAction);
        menu->addSeparator();
        menu->addAction(m_renameAction);
        menu->addAction(m_pinAction);
        menu->addAction(m_deleteAction);
        menu->addSeparator();
    }
    menu->addAction(m_takeAction);
    menu->addAction(m_scheduleAction);
    menu->popup(globalPos);
}

void SnapshotsView::updateActions()
{
    const bool connected = m_client && m_client->state() == HelperClient::State::Ready;
    const Snapshot *snapshot = current();
    const Sandbox *sandbox =
        m_sandboxes ? m_sandboxes->sandboxAt(m_sandboxes->rowOf(m_model->sandbox())) : nullptr;
    const bool live = sandbox
        && (sandbox->state == SandboxState::Running || sandbox->state == SandboxState::Paused);
    const bool idle = connected && m_busy == 0;
    const bool own = snapshot && snapshot->sandbox == m_model->sandbox();
    m_takeAction->setEnabled(idle && live);
    m_takeButton->setEnabled(m_takeAction->isEnabled());
    m_scheduleAction->setEnabled(idle && sandbox);
    m_scheduleButton->setEnabled(m_scheduleAction->isEnabled());
    // A sandbox restores only its own snapshots (another's memory carries that identity).
    m_restoreAction->setEnabled(idle && own && sandbox && sandbox->state != SandboxState::Starting
                                && sandbox->state != SandboxState::Stopping
                                && sandbox->state != SandboxState::Adopting);
    m_forkAction->setEnabled(idle && snapshot);
    m_restoreButton->setEnabled(m_restoreAction->isEnabled());
    m_forkButton->setEnabled(m_forkAction->isEnabled());
    m_renameAction->setEnabled(idle && snapshot);
    m_pinAction->setEnabled(idle && snapshot);
    m_pinAction->setChecked(snapshot && snapshot->pinned);
    m_pinAction->setText(snapshot && snapshot->pinned ? tr("Un&pin") : tr("&Pin"));
    m_deleteAction->setEnabled(idle && snapshot);
    m_state->setText(sandbox ? tr("(%1)").arg(SandboxTableModel::stateText(sandbox->state))
                             : QString());
    updateCurrentState();
}

QString SnapshotsView::detachedState(const Sandbox *sandbox, const Snapshot *head)
{
    if (!sandbox
        || (sandbox->state != SandboxState::Running && sandbox->state != SandboxState::Paused)
        || sandbox->startedFrom != StartSource::Template)
        return {};
    // A snapshot taken since the template start is the state's own history again.
    if (head && head->createdAt >= sandbox->startedAt)
        return {};
    return tr("started from a template");
}

void SnapshotsView::updateCurrentState()
{
    const Sandbox *sandbox =
        m_sandboxes ? m_sandboxes->sandboxAt(m_sandboxes->rowOf(m_model->sandbox())) : nullptr;
    m_timeline->setDetachedState(
        detachedState(sandbox, m_model->snapshotAt(m_model->indexOf(m_model->head()))));
}

QString SnapshotsView::describe(const Snapshot &snapshot) const
{
    const QString time =
        QLocale().toString(snapshot.createdAt.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    if (snapshot.label.isEmpty())
        return tr("of %1").arg(time);
    return tr("“%1” of %2").arg(snapshot.label, time);
}

void SnapshotsView::updateDetails()
{
    const Snapshot *s = current();
    if (!s) {
        m_details->setText(m_model->sandbox().isEmpty()
                               ? tr("No sandbox selected.")
                               : tr("Select a snapshot in the timeline or the list."));
        return;
    }
    QString parent = tr("none (the first state)");
    if (!s->parent.isEmpty()) {
        if (const Snapshot *p = m_model->snapshotAt(m_model->indexOf(s->parent)))
            parent = p->sandbox == s->sandbox ? describe(*p)
                                              : tr("%1 (%2)").arg(describe(*p), p->sandbox);
        else
            parent = tr("%1 (another sandbox's)").arg(s->parent);
    }
    const QList<std::pair<QString, QString>> rows {
        {tr("Label"), m_model->labelText(*s)},
        {tr("Time"), QLocale().toString(s->createdAt.toLocalTime(), QLocale::LongFormat)},
        {tr("Kind"), SnapshotTimelineModel::kindText(s->kind)},
        {tr("Sandbox"), s->sandbox},
        {tr("Logical size"), SnapshotTimelineModel::formatBytes(s->logicalBytes)},
        {tr("New bytes"),
         tr("%1 (%2 stored)")
             .arg(SnapshotTimelineModel::formatBytes(s->newBytes),
                  SnapshotTimelineModel::formatBytes(s->newStoredBytes))},
        {tr("Pause time"), tr("%1 ms").arg(s->pauseMs)},
        {tr("Pinned"), s->pinned ? tr("yes: kept whatever its age") : tr("no")},
        {tr("Parent"), parent},
        {tr("Current state"),
         s->id == m_model->head() ? tr("descends from this snapshot") : QString()},
        {tr("Id"), s->id},
    };
    QString html = QStringLiteral("<table cellspacing=\"4\">");
    for (const auto &[field, value] : rows) {
        if (value.isEmpty())
            continue;
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(field.toHtmlEscaped(), value.toHtmlEscaped());
    }
    html += QStringLiteral("</table>");
    m_details->setText(html);
    m_details->setProperty("airlockPlain", [&rows] {
        QStringList lines;
        for (const auto &[field, value] : rows) {
            if (!value.isEmpty())
                lines.append(field + QStringLiteral(": ") + value);
        }
        return lines.join(QLatin1Char('\n'));
    }());
    m_details->setAccessibleDescription(m_details->property("airlockPlain").toString());
}

QString SnapshotsView::detailsText() const
{
    return current() ? m_details->property("airlockPlain").toString() : m_details->text();
}

QString SnapshotsView::statusText() const
{
    return m_status->text();
}

void SnapshotsView::setStatus(const QString &text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

void SnapshotsView::fail(const QString &text, const Error &error)
{
    setStatus(text + QLatin1Char(' ') + error.message, true);
    Q_EMIT actionFailed(text, error);
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Airlock"), text, QMessageBox::Ok, this);
    box->setInformativeText(ErrorText::details(error));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void SnapshotsView::setPending(QDialog *dialog)
{
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    m_pending = dialog;
    dialog->open();
}

void SnapshotsView::call(const QString &method, const QJsonObject &params,
                         const QString &failureText,
                         std::function<void(const QJsonValue &)> onSuccess, int timeoutMs)
{
    if (!m_client)
        return;
    ++m_busy;
    updateActions();
    QPointer<SnapshotsView> self(this);
    m_client->call(
        method, params,
        [self, method, failureText, onSuccess](const Result<QJsonValue> &result) {
            if (!self)
                return;
            --self->m_busy;
            self->updateActions();
            if (!result) {
                self->fail(failureText, result.error());
                return;
            }
            if (onSuccess)
                onSuccess(*result);
            Q_EMIT self->actionFinished(method);
        },
        timeoutMs);
}

void SnapshotsView::requestTakeSnapshot()
{
    const QString sandbox = m_model->sandbox();
    if (sandbox.isEmpty())
        return;
    auto *dialog = new QInputDialog(this);
    dialog->setWindowTitle(tr("Take Snapshot of %1").arg(sandbox));
    dialog->setLabelText(tr("&Label (optional):"));
    dialog->setTextValue({});
    dialog->setOkButtonText(tr("&Take Snapshot"));
    connect(dialog, &QInputDialog::textValueSelected, this,
            [this](const QString &label) { takeSnapshot(label.trimmed()); });
    setPending(dialog);
}

void SnapshotsView::takeSnapshot(const QString &label)
{
    const QString sandbox = m_model->sandbox();
    if (auto valid = Snapshot::validateLabel(label); !valid) {
        fail(tr("That label cannot be used."), valid.error());
        return;
    }
    setStatus(tr("Taking a snapshot of %1…").arg(sandbox));
    call(
        methodName(protocol::method::SnapshotCreate),
        {{QStringLiteral("name"), sandbox}, {QStringLiteral("label"), label}},
        tr("Could not take a snapshot of “%1”.").arg(sandbox),
        [this](const QJsonValue &value) {
            auto snapshot = Snapshot::fromJson(value.toObject());
            if (!snapshot)
                return;
            setStatus(tr("Snapshot taken: %1 new (%2 stored), the guest paused %3 ms.")
                          .arg(SnapshotTimelineModel::formatBytes(snapshot->newBytes),
                               SnapshotTimelineModel::formatBytes(snapshot->newStoredBytes))
                          .arg(snapshot->pauseMs));
            selectSnapshot(snapshot->id);
        },
        kLongCallMs);
}

void SnapshotsView::requestRestore()
{
    const Snapshot *snapshot = current();
    if (!snapshot || !m_restoreAction->isEnabled())
        return;
    const QString sandbox = m_model->sandbox();
    const QString id = snapshot->id;
    auto *box =
        new QMessageBox(QMessageBox::Question, tr("Restore Snapshot"),
                        tr("Restore %1 to the snapshot %2?").arg(sandbox, describe(*snapshot)),
                        QMessageBox::Cancel, this);
    box->setTextFormat(Qt::PlainText); // labels are anyone's text, never markup
    const Sandbox *shown =
        m_sandboxes ? m_sandboxes->sandboxAt(m_sandboxes->rowOf(sandbox)) : nullptr;
    if (shown && shown->state == SandboxState::Stopped)
        box->setInformativeText(
            tr("%1 is stopped: it is started from the snapshot's state.").arg(sandbox));
    else
        box->setInformativeText(tr("A safety snapshot of %1's current state is taken first, "
                                   "so you can go back to it. Then the running guest is "
                                   "replaced by the snapshot's state; what happened since is "
                                   "only in the safety snapshot.")
                                    .arg(sandbox));
    QAbstractButton *restoreButton = box->addButton(tr("&Restore"), QMessageBox::AcceptRole);
    box->setDefaultButton(QMessageBox::Cancel);
    connect(box, &QMessageBox::finished, this, [this, box, restoreButton, id] {
        if (box->clickedButton() == restoreButton)
            restore(id);
    });
    setPending(box);
}

void SnapshotsView::restore(const QString &id)
{
    const QString sandbox = m_model->sandbox();
    setStatus(tr("Restoring %1 (taking a safety snapshot first)…").arg(sandbox));
    call(
        methodName(protocol::method::SnapshotRestore),
        {{QStringLiteral("name"), sandbox}, {QStringLiteral("snapshot"), id}},
        tr("Could not restore “%1”.").arg(sandbox),
        [this, sandbox](const QJsonValue &value) {
            const QJsonObject safety = value.toObject().value(QStringLiteral("safety")).toObject();
            if (auto snapshot = Snapshot::fromJson(safety); snapshot && !safety.isEmpty())
                setStatus(tr("Restored %1. The state before is kept in the safety snapshot "
                             "of %2.")
                              .arg(sandbox,
                                   QLocale().toString(snapshot->createdAt.toLocalTime(),
                                                      QStringLiteral("HH:mm:ss"))));
            else
                setStatus(tr("Restored %1 (it was stopped: no safety snapshot was needed).")
                              .arg(sandbox));
            reportStartedSandbox(value.toObject().value(QStringLiteral("sandbox")).toObject(),
                                 false);
        },
        kLongCallMs);
}

void SnapshotsView::requestFork()
{
    const Snapshot *snapshot = current();
    if (!snapshot)
        return;
    QStringList taken;
    if (m_sandboxes) {
        for (int row = 0; row < m_sandboxes->rowCount(); ++row)
            taken.append(m_sandboxes->sandboxAt(row)->spec.name);
    }
    const QString id = snapshot->id;
    auto *dialog = new ForkDialog(snapshot->sandbox, describe(*snapshot), taken, this);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog, id] { fork(id, dialog->name(), dialog->copyBindings()); });
    setPending(dialog);
}

void SnapshotsView::fork(const QString &id, const QString &name, bool copyBindings)
{
    const Snapshot *snapshot = m_model->snapshotAt(m_model->indexOf(id));
    const QString source = snapshot ? snapshot->sandbox : m_model->sandbox();
    QJsonObject params {{QStringLiteral("snapshot"), id}, {QStringLiteral("name"), name}};
    if (copyBindings)
        params.insert(QStringLiteral("bindings"), true);
    setStatus(tr("Forking %1 into %2…").arg(source, name));
    if (!m_client)
        return;
    ++m_busy;
    updateActions();
    QPointer<SnapshotsView> self(this);
    m_client->call(
        methodName(protocol::method::SnapshotFork), params,
        [self, id, name, source, copyBindings](const Result<QJsonValue> &result) {
            if (!self)
                return;
            --self->m_busy;
            self->updateActions();
            if (!result) {
                const Error &error = result.error();
                if (copyBindings && error.kind == ErrorKind::InvalidParams
                    && error.message.contains(QLatin1String("bindings"))) {
                    // A helper from before `bindings` existed refuses the parameter.
                    self->setStatus(tr("This helper cannot copy credential bindings into a "
                                       "fork (it is older than this window). Nothing was "
                                       "forked."),
                                    true);
                    Q_EMIT self->actionFailed(self->statusText(), error);
                    auto *box = new QMessageBox(
                        QMessageBox::Warning, tr("Fork Snapshot"),
                        tr("This helper cannot copy credential bindings into a fork."),
                        QMessageBox::Cancel, self);
                    box->setInformativeText(
                        tr("It is older than this window. Fork without the bindings and add "
                           "them to %1 in Credentials afterwards?\n\n%2")
                            .arg(name, error.message));
                    QAbstractButton *without =
                        box->addButton(tr("Fork &Without Bindings"), QMessageBox::AcceptRole);
                    connect(box, &QMessageBox::finished, self, [self, box, without, id, name] {
                        if (self && box->clickedButton() == without)
                            self->fork(id, name, false);
                    });
                    self->setPending(box);
                    return;
                }
                self->fail(tr("Could not fork “%1”.").arg(name), error);
                return;
            }
            // A helper that knows `bindings` says how many it copied (`bindingsCopied`); an
            // older one ignores the parameter and answers without the field.
            const QJsonValue copied = result->toObject().value(QStringLiteral("bindingsCopied"));
            if (copyBindings && copied.isDouble())
                self->setStatus(tr("Forked %1 into %2 with %n credential binding(s) (fresh "
                                   "placeholders).",
                                   nullptr, copied.toInt())
                                    .arg(source, name));
            else if (copyBindings)
                self->checkCopiedBindings(source, name);
            else
                self->setStatus(tr("Forked %1 into %2. Credential bindings were not copied.")
                                    .arg(source, name));
            self->reportStartedSandbox(result->toObject(), true);
            Q_EMIT self->forked(name);
            Q_EMIT self->actionFinished(QString::fromLatin1(protocol::method::SnapshotFork));
        },
        kLongCallMs);
}

void SnapshotsView::checkCopiedBindings(const QString &source, const QString &fork)
{
    // The helper did not say what it copied (one from before `bindings`): count what the fork
    // got, so the status line does not promise bindings that are not there.
    if (!m_client)
        return;
    QPointer<SnapshotsView> self(this);
    const QString method = methodName(protocol::method::BindingList);
    m_client->call(
        method, {{QStringLiteral("sandbox"), source}},
        [self, method, source, fork](const Result<QJsonValue> &sourceResult) {
            if (!self || !self->m_client)
                return;
            const int had = sourceResult
                ? int(sourceResult->toObject().value(QStringLiteral("bindings")).toArray().size())
                : -1;
            self->m_client->call(
                method, {{QStringLiteral("sandbox"), fork}},
                [self, source, fork, had](const Result<QJsonValue> &forkResult) {
                    if (!self)
                        return;
                    const int got = forkResult ? int(forkResult->toObject()
                                                         .value(QStringLiteral("bindings"))
                                                         .toArray()
                                                         .size())
                                               : -1;
                    if (had > 0 && got == 0)
                        self->setStatus(tr("Forked %1 into %2, but the helper did not copy the "
                                           "credential bindings (it may be older than this "
                                           "window). Add them to %2 in Credentials.")
                                            .arg(source, fork),
                                        true);
                    else
                        self->setStatus(tr("Forked %1 into %2 with %n credential "
                                           "binding(s) (fresh placeholders).",
                                           nullptr, std::max(got, 0))
                                            .arg(source, fork));
                });
        });
}

void SnapshotsView::reportStartedSandbox(const QJsonObject &sandboxJson, bool fork)
{
    auto sandbox = Sandbox::fromJson(sandboxJson);
    if (!sandbox)
        return;
    // sandbox.changed follows; showing the answer now puts the badge up with the message.
    if (m_sandboxes)
        m_sandboxes->upsert(*sandbox);
    if (sandbox->identityWarning.isEmpty())
        return;
    const QString name = sandbox->spec.name;
    setStatus(statusText() + QLatin1Char(' ')
                  + tr("But the guest of %1 did not confirm its new identity: its network may "
                       "not work. Restart %1 (Stop, then Start).")
                        .arg(name),
              true);
    auto *box =
        new QMessageBox(QMessageBox::Warning, fork ? tr("Fork Snapshot") : tr("Restore Snapshot"),
                        tr("The guest of %1 did not confirm its new identity.").arg(name),
                        QMessageBox::Close, this);
    QAbstractButton *restart = box->addButton(tr("&Restart Now"), QMessageBox::AcceptRole);
    box->setDefaultButton(qobject_cast<QPushButton *>(restart));
    connect(box, &QMessageBox::finished, this, [this, box, restart, name] {
        if (box->clickedButton() == restart)
            Q_EMIT restartRequested(name);
    });
    box->setTextFormat(Qt::PlainText);
    box->setInformativeText(
        tr("%1 runs, but it may still use the name, addresses and CA of the snapshot it "
           "started from, so its network may not work and it may clash with the sandbox it "
           "came from. Restart %1 (Stop, then Start) to boot it with its own identity; what "
           "it holds in memory is then lost, so take what you need first.\n\nThe helper "
           "said: %2")
            .arg(name, sandbox->identityWarning));
    setPending(box);
}

void SnapshotsView::requestRename()
{
    const Snapshot *snapshot = current();
    if (!snapshot)
        return;
    const QString id = snapshot->id;
    auto *dialog = new QInputDialog(this);
    dialog->setWindowTitle(tr("Rename Snapshot"));
    dialog->setLabelText(tr("&Label:"));
    dialog->setTextValue(snapshot->label);
    connect(dialog, &QInputDialog::textValueSelected, this,
            [this, id](const QString &label) { rename(id, label.trimmed()); });
    setPending(dialog);
}

void SnapshotsView::rename(const QString &id, const QString &label)
{
    if (auto valid = Snapshot::validateLabel(label); !valid) {
        fail(tr("That label cannot be used."), valid.error());
        return;
    }
    call(methodName(protocol::method::SnapshotRename),
         {{QStringLiteral("snapshot"), id}, {QStringLiteral("label"), label}},
         tr("Could not rename the snapshot."),
         [this](const QJsonValue &) { setStatus(tr("Renamed.")); });
}

void SnapshotsView::togglePinned()
{
    if (const Snapshot *snapshot = current())
        setPinned(snapshot->id, !snapshot->pinned);
}

void SnapshotsView::setPinned(const QString &id, bool pinned)
{
    call(methodName(protocol::method::SnapshotPin),
         {{QStringLiteral("snapshot"), id}, {QStringLiteral("pinned"), pinned}},
         pinned ? tr("Could not pin the snapshot.") : tr("Could not unpin the snapshot."),
         [this, pinned](const QJsonValue &) {
             setStatus(pinned ? tr("Pinned: retention keeps it whatever its age.")
                              : tr("Unpinned."));
         });
}

void SnapshotsView::requestDelete()
{
    const Snapshot *snapshot = current();
    if (!snapshot)
        return;
    const QString id = snapshot->id;
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Delete Snapshot"),
                                tr("Delete the snapshot %1?").arg(describe(*snapshot)),
                                QMessageBox::Cancel, this);
    box->setTextFormat(Qt::PlainText);
    box->setInformativeText(
        (snapshot->pinned ? tr("It is pinned. ") : QString())
        + tr("Snapshots taken after it stay (they take its parent). Its stored data is freed "
             "where no other snapshot shares it. This cannot be undone."));
    QAbstractButton *deleteButton = box->addButton(tr("&Delete"), QMessageBox::DestructiveRole);
    box->setDefaultButton(QMessageBox::Cancel);
    connect(box, &QMessageBox::finished, this, [this, box, deleteButton, id] {
        if (box->clickedButton() == deleteButton)
            remove(id);
    });
    setPending(box);
}

void SnapshotsView::remove(const QString &id)
{
    call(methodName(protocol::method::SnapshotDelete), {{QStringLiteral("snapshot"), id}},
         tr("Could not delete the snapshot."),
         [this](const QJsonValue &) { setStatus(tr("Snapshot deleted.")); });
}

void SnapshotsView::requestSchedule()
{
    const QString sandbox = m_model->sandbox();
    if (sandbox.isEmpty())
        return;
    auto *dialog = new ScheduleDialog(sandbox, m_model->schedule(), this);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { setSchedule(dialog->schedule()); });
    setPending(dialog);
}

void SnapshotsView::setSchedule(const SnapshotSchedule &schedule)
{
    const QString sandbox = m_model->sandbox();
    call(methodName(protocol::method::SnapshotSchedule),
         {{QStringLiteral("name"), sandbox}, {QStringLiteral("schedule"), schedule.toJson()}},
         tr("Could not change the automatic snapshots of “%1”.").arg(sandbox),
         [this, schedule](const QJsonValue &) {
             setStatus(schedule.intervalMinutes == 0
                           ? tr("Automatic snapshots are off.")
                           : tr("An automatic snapshot every %1 min while it runs.")
                                 .arg(schedule.intervalMinutes));
             m_model->refresh(); // the retention window moved
         });
}

} // namespace airlock
