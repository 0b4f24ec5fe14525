#include "ui/egressview.h"

#include "core/client/helperclient.h"
#include "core/model/hostname.h"
#include "core/protocol/methods.h"
#include "ui/columnsizer.h"
#include "ui/destinationcountmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressfilterproxy.h"
#include "ui/egressmapview.h"
#include "ui/learnlistmodel.h"
#include "ui/policytext.h"
#include "ui/probingmonitor.h"
#include "ui/sandboxtablemodel.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace airlock {

namespace {

/// The reasons the Reason column is made wide enough for (with a repeat count): the policy's
/// own and the common refusals. Longer ones are cut, with the whole text in the tooltip.
QList<EgressReason> reasonsToFit()
{
    return {EgressReason::HostNotAllowed,     EgressReason::PortNotAllowed,
            EgressReason::MethodNotAllowed,   EgressReason::PathNotAllowed,
            EgressReason::PrivateDestination, EgressReason::IpLiteral};
}

void setUpTable(QTableView *table, const QString &name)
{
    table->setAccessibleName(name);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setTabKeyNavigation(false);
    table->setWordWrap(false);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->setVisible(false);
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
    table->horizontalHeader()->setStretchLastSection(true);
    table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

} // namespace

EgressView::EgressView(HelperClient *client, SandboxTableModel *sandboxes, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_sandboxes(sandboxes)
    , m_events(new EgressEventModel(this))
    , m_filter(new EgressFilterProxy(this))
    , m_destinations(new DestinationCountModel(this))
    , m_learn(new LearnListModel(this))
    , m_probing(new ProbingMonitor(this))
    , m_sandbox(new QComboBox(this))
    , m_verdict(new QComboBox(this))
    , m_text(new QLineEdit(this))
    , m_learnMode(new QCheckBox(tr("&Learn mode"), this))
    , m_threshold(new QSpinBox(this))
    , m_table(new QTableView(this))
    , m_allowButton(new QPushButton(tr("&Allow This Host…"), this))
    , m_sideTabs(new QTabWidget(this))
    , m_map(new EgressMapView(this))
    , m_countTable(new QTableView(this))
    , m_learnTable(new QTableView(this))
    , m_promoteButton(new QPushButton(tr("Add as &Rules…"), this))
    , m_dismissButton(new QPushButton(tr("Dis&miss"), this))
    , m_summary(new QLabel(this))
    , m_summaryUpdate(new QTimer(this))
{
    m_filter->setSourceModel(m_events);
    // Count what the filters show, once the rows of a burst have arrived.
    m_summaryUpdate->setSingleShot(true);
    m_summaryUpdate->setInterval(0);
    connect(m_summaryUpdate, &QTimer::timeout, this, &EgressView::updateSummary);
    auto recount = [this] { m_summaryUpdate->start(); };
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, recount);
    connect(m_filter, &QAbstractItemModel::rowsRemoved, this, recount);
    connect(m_filter, &QAbstractItemModel::modelReset, this, recount);
    connect(m_filter, &QAbstractItemModel::layoutChanged, this, recount);
    // A repeat folded into its row changes that row's count, not the rows.
    connect(m_filter, &QAbstractItemModel::dataChanged, this, recount);
    m_sandbox->addItem(tr("All sandboxes"), QString());
    m_sandbox->setAccessibleName(tr("Sandbox filter"));
    m_verdict->addItem(tr("All verdicts"), int(EgressFilterProxy::Verdict::Any));
    m_verdict->addItem(tr("Denied"), int(EgressFilterProxy::Verdict::Denied));
    m_verdict->addItem(tr("Allowed"), int(EgressFilterProxy::Verdict::Allowed));
    m_verdict->setAccessibleName(tr("Verdict filter"));
    m_text->setPlaceholderText(tr("Filter by name, path, reason…"));
    m_text->setClearButtonEnabled(true);
    m_text->setAccessibleName(tr("Text filter"));
    m_learnMode->setAccessibleName(tr("Learn mode for the selected sandbox"));
    m_learnMode->setToolTip(tr("Collect the destinations this sandbox is denied into a review "
                               "list. They stay denied."));
    m_threshold->setRange(1, 10000);
    m_threshold->setValue(ProbingMonitor::kDefaultThreshold);
    m_threshold->setSuffix(tr(" denials/min"));
    m_threshold->setAccessibleName(tr("Probing alert threshold in denials per minute"));
    m_threshold->setToolTip(tr("Alert when a sandbox is denied this often within a minute"));

    auto *filterRow = new QHBoxLayout;
    auto *sandboxLabel = new QLabel(tr("&Sandbox:"), this);
    sandboxLabel->setBuddy(m_sandbox);
    auto *verdictLabel = new QLabel(tr("&Verdict:"), this);
    verdictLabel->setBuddy(m_verdict);
    auto *thresholdLabel = new QLabel(tr("Probing &alert at:"), this);
    thresholdLabel->setBuddy(m_threshold);
    filterRow->addWidget(sandboxLabel);
    filterRow->addWidget(m_sandbox);
    filterRow->addWidget(verdictLabel);
    filterRow->addWidget(m_verdict);
    filterRow->addWidget(m_text, 1);
    filterRow->addWidget(m_learnMode);
    filterRow->addWidget(thresholdLabel);
    filterRow->addWidget(m_threshold);

    m_table->setModel(m_filter);
    setUpTable(m_table, tr("Egress decisions"));
    // What was decided and why come right after the name, so they are in view at any window
    // size; SNI / Host, method and path follow (the path takes the rest).
    QHeaderView *header = m_table->horizontalHeader();
    header->moveSection(header->visualIndex(EgressEventModel::VerdictColumn),
                        header->visualIndex(EgressEventModel::SniHostColumn));
    header->moveSection(header->visualIndex(EgressEventModel::ReasonColumn),
                        header->visualIndex(EgressEventModel::SniHostColumn));
    // Each column as wide as its header and its longest usual value (also in longer
    // languages: "Entscheidung" is wider than the verdicts).
    ColumnSizer::fit(m_table, EgressEventModel::TimeColumn, {QStringLiteral("00:00:00")});
    m_table->setColumnWidth(EgressEventModel::SandboxColumn, 80);
    ColumnSizer::fit(m_table, EgressEventModel::LayerColumn, {QStringLiteral("DNS A, AAAA")});
    m_table->setColumnWidth(EgressEventModel::NameColumn, 150);
    m_table->setColumnWidth(EgressEventModel::SniHostColumn, 150);
    ColumnSizer::fit(m_table, EgressEventModel::MethodColumn, {QStringLiteral("OPTIONS")});
    ColumnSizer::fit(m_table, EgressEventModel::VerdictColumn,
                     {EgressEventModel::tr("Allowed"), EgressEventModel::tr("Denied")});
    QStringList reasons;
    for (EgressReason reason : reasonsToFit())
        reasons.append(
            EgressEventModel::tr("%1 (%n times)", nullptr, 99).arg(PolicyText::reasonText(reason)));
    ColumnSizer::fit(m_table, EgressEventModel::ReasonColumn, reasons);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *allowAction = new QAction(tr("Allow This Host…"), m_table);
    allowAction->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
    allowAction->setShortcutContext(Qt::WidgetShortcut);
    m_table->addAction(allowAction);
    connect(allowAction, &QAction::triggered, this, &EgressView::allowSelected);
    m_allowButton->setAccessibleName(tr("Allow the host of the selected denied request"));
    m_allowButton->setToolTip(tr("Open the policy editor with a rule for this host; nothing is "
                                 "allowed until you apply it"));
    m_summary->setAccessibleName(tr("Egress summary"));

    auto *counts = new QSortFilterProxyModel(this);
    counts->setSourceModel(m_destinations);
    counts->setFilterKeyColumn(DestinationCountModel::SandboxColumn);
    counts->setSortRole(Qt::DisplayRole);
    m_countTable->setModel(counts);
    setUpTable(m_countTable, tr("Requests per destination"));
    m_countTable->setSortingEnabled(true);
    // The counts right after the destination, so the narrow side pane shows them; the sandbox
    // (the same in every row while one is chosen) last.
    QHeaderView *countHeader = m_countTable->horizontalHeader();
    countHeader->moveSection(countHeader->visualIndex(DestinationCountModel::SandboxColumn),
                             DestinationCountModel::ColumnCount - 1);
    m_countTable->setColumnWidth(DestinationCountModel::SandboxColumn, 90);
    m_countTable->setColumnWidth(DestinationCountModel::DestinationColumn, 160);
    ColumnSizer::fit(m_countTable, DestinationCountModel::AllowedColumn, {QStringLiteral("99999")});
    ColumnSizer::fit(m_countTable, DestinationCountModel::DeniedColumn, {QStringLiteral("99999")});

    m_learnTable->setModel(m_learn);
    setUpTable(m_learnTable, tr("Learned destinations"));
    // As the Destinations tab: the count (Denied) right after the host, the sandbox last.
    QHeaderView *learnHeader = m_learnTable->horizontalHeader();
    learnHeader->moveSection(learnHeader->visualIndex(LearnListModel::SandboxColumn),
                             LearnListModel::ColumnCount - 1);
    learnHeader->moveSection(learnHeader->visualIndex(LearnListModel::CountColumn),
                             learnHeader->visualIndex(LearnListModel::PortColumn) + 1);
    m_learnTable->setColumnWidth(LearnListModel::SandboxColumn, 90);
    m_learnTable->setColumnWidth(LearnListModel::HostColumn, 160);
    ColumnSizer::fit(m_learnTable, LearnListModel::CountColumn, {QStringLiteral("99999")});
    m_learnTable->setColumnWidth(LearnListModel::PortColumn, 50);
    m_promoteButton->setAccessibleName(tr("Add the selected learned destinations as rules"));
    m_promoteButton->setToolTip(tr("Open the policy editor with one rule per selected "
                                   "destination; apply there to allow them"));
    m_dismissButton->setAccessibleName(tr("Dismiss the selected learned destinations"));

    m_map->setModel(m_destinations);
    auto *learnPage = new QWidget(this);
    auto *learnLayout = new QVBoxLayout(learnPage);
    auto *learnHint = new QLabel(tr("With learn mode on, denied destinations of the sandbox "
                                    "are collected here. They stay denied until you add them "
                                    "as rules and apply."),
                                 learnPage);
    learnHint->setWordWrap(true);
    learnLayout->addWidget(learnHint);
    learnLayout->addWidget(m_learnTable, 1);
    auto *learnButtons = new QHBoxLayout;
    learnButtons->addStretch(1);
    learnButtons->addWidget(m_dismissButton);
    learnButtons->addWidget(m_promoteButton);
    learnLayout->addLayout(learnButtons);

    m_sideTabs->addTab(m_map, tr("&Map"));
    m_sideTabs->addTab(m_countTable, tr("D&estinations"));
    m_sideTabs->addTab(learnPage, tr("&Learned"));
    m_sideTabs->setAccessibleName(tr("Egress map, destinations and learned list"));

    auto *left = new QWidget(this);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_table, 1);
    auto *leftButtons = new QHBoxLayout;
    leftButtons->addWidget(m_summary, 1);
    leftButtons->addWidget(m_allowButton);
    leftLayout->addLayout(leftButtons);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(m_sideTabs);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({860, 420});

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(filterRow);
    layout->addWidget(splitter, 1);

    setTabOrder(m_sandbox, m_verdict);
    setTabOrder(m_verdict, m_text);
    setTabOrder(m_text, m_learnMode);
    setTabOrder(m_learnMode, m_threshold);
    setTabOrder(m_threshold, m_table);
    setTabOrder(m_table, m_allowButton);
    setTabOrder(m_allowButton, m_sideTabs);

    connect(m_sandbox, &QComboBox::currentIndexChanged, this, [this, counts] {
        const QString sandbox = m_sandbox->currentData().toString();
        m_filter->setSandbox(sandbox);
        // One sandbox shown: its name in every row says nothing, and the reason needs the room.
        m_table->setColumnHidden(EgressEventModel::SandboxColumn, !sandbox.isEmpty());
        counts->setFilterRegularExpression(
            sandbox.isEmpty() ? QString()
                              : QStringLiteral("^%1$").arg(QRegularExpression::escape(sandbox)));
        updateMapSandbox();
        m_learnMode->setEnabled(!sandbox.isEmpty());
        const QSignalBlocker blocker(m_learnMode);
        m_learnMode->setChecked(m_learn->isLearning(sandbox));
        updateActions();
    });
    connect(m_verdict, &QComboBox::currentIndexChanged, this, [this] {
        m_filter->setVerdict(EgressFilterProxy::Verdict(m_verdict->currentData().toInt()));
    });
    connect(m_text, &QLineEdit::textChanged, m_filter, &EgressFilterProxy::setText);
    connect(m_learnMode, &QCheckBox::toggled, this, [this](bool on) {
        m_learn->setLearning(m_sandbox->currentData().toString(), on);
        if (on)
            m_sideTabs->setCurrentIndex(2);
    });
    connect(m_threshold, &QSpinBox::valueChanged, m_probing, &ProbingMonitor::setThreshold);
    connect(m_allowButton, &QPushButton::clicked, this, &EgressView::allowSelected);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EgressView::updateActions);
    connect(m_learnTable->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EgressView::updateActions);
    connect(m_learn, &QAbstractItemModel::rowsInserted, this, &EgressView::updateActions);
    connect(m_learn, &QAbstractItemModel::rowsRemoved, this, &EgressView::updateActions);
    connect(m_promoteButton, &QPushButton::clicked, this, [this] {
        QList<int> rows;
        for (const QModelIndex &index : m_learnTable->selectionModel()->selectedRows())
            rows.append(index.row());
        if (rows.isEmpty())
            return;
        // One editor per sandbox: promote the rows of the first selected row's sandbox.
        const QString sandbox = m_learn->candidateAt(rows.constFirst()).sandbox;
        rows.removeIf([&](int row) { return m_learn->candidateAt(row).sandbox != sandbox; });
        const QList<EgressRule> rules = m_learn->rulesFor(rows);
        m_learn->removeRows(rows);
        Q_EMIT allowRequested(sandbox, rules);
    });
    connect(m_dismissButton, &QPushButton::clicked, this, [this] {
        QList<int> rows;
        for (const QModelIndex &index : m_learnTable->selectionModel()->selectedRows())
            rows.append(index.row());
        m_learn->removeRows(rows);
    });
    connect(m_events, &EgressEventModel::entryAdded, this, &EgressView::onEntry);
    // Like a log: while the newest row is in view, new rows scroll into view; a person who
    // scrolled up to read keeps their place.
    connect(m_filter, &QAbstractItemModel::rowsAboutToBeInserted, this, [this] {
        const QScrollBar *bar = m_table->verticalScrollBar();
        m_followNewest = bar->value() >= bar->maximum();
    });
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_followNewest)
            m_table->scrollToBottom();
    });

    if (sandboxes) {
        connect(sandboxes, &QAbstractItemModel::rowsInserted, this,
                &EgressView::updateSandboxChoices);
        connect(sandboxes, &QAbstractItemModel::rowsRemoved, this,
                &EgressView::updateSandboxChoices);
        connect(sandboxes, &QAbstractItemModel::modelReset, this,
                &EgressView::updateSandboxChoices);
        connect(sandboxes, &SandboxTableModel::loaded, this, &EgressView::loadHistory);
    }
    if (client)
        connect(client, &HelperClient::notificationReceived, this, &EgressView::onNotification);
    m_learnMode->setEnabled(false);
    updateSandboxChoices();
    updateActions();
    updateSummary();
}

void EgressView::setSelectedSandbox(const QString &sandbox)
{
    m_selectedSandbox = sandbox;
    updateMapSandbox();
}

void EgressView::updateMapSandbox()
{
    QString sandbox = m_sandbox->currentData().toString();
    if (sandbox.isEmpty())
        sandbox = m_selectedSandbox;
    if (sandbox.isEmpty() && m_sandboxes && m_sandboxes->rowCount() == 1)
        sandbox = m_sandboxes->sandboxAt(0)->spec.name;
    m_map->setSandbox(sandbox);
}

void EgressView::setSandbox(const QString &sandbox)
{
    const int index = m_sandbox->findData(sandbox);
    if (index >= 0)
        m_sandbox->setCurrentIndex(index);
}

EgressRule EgressView::ruleFor(const EgressEntry &entry)
{
    EgressRule rule;
    auto host = canonicalizeHostname(entry.destination());
    rule.host = host ? *host : entry.destination();
    rule.ports = {entry.port > 0 ? quint16(entry.port) : EgressRule::kDefaultPort};
    if (!entry.method.isEmpty() && isValidRuleMethod(entry.method))
        rule.methods = {entry.method};
    rule.comment = tr("allowed from a denied request at %1")
                       .arg(entry.time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    return rule;
}

void EgressView::loadHistory()
{
    if (!m_client || !m_sandboxes)
        return;
    for (int row = 0; row < m_sandboxes->rowCount(); ++row) {
        const QString name = m_sandboxes->sandboxAt(row)->spec.name;
        QPointer<EgressView> self(this);
        m_client->call(QString::fromLatin1(protocol::method::EgressHistory),
                       {{QStringLiteral("name"), name}, {QStringLiteral("limit"), 1000}},
                       [self](const Result<QJsonValue> &result) {
                           // An older helper without egress.history simply shows live events.
                           if (self && result)
                               self->m_events->addHistory(result->toObject());
                       });
    }
}

void EgressView::onNotification(const QString &method, const QJsonObject &params)
{
    m_events->handleNotification(method, params);
}

void EgressView::onEntry(const EgressEntry &entry, bool live)
{
    m_destinations->add(entry);
    m_learn->record(entry);
    if (live)
        m_probing->record(entry);
    if (live && entry.alert)
        Q_EMIT credentialAlert(entry);
}

QString EgressView::summary() const
{
    return m_summary->text();
}

void EgressView::updateSummary()
{
    m_summaryUpdate->stop();
    // Decisions, not rows: a summary row stands for `count` of them.
    qint64 shown = 0;
    qint64 denied = 0;
    for (int row = 0; row < m_filter->rowCount(); ++row) {
        const QModelIndex index = m_filter->index(row, 0);
        const qint64 count = index.data(EgressEventModel::CountRole).toLongLong();
        shown += count;
        denied += index.data(EgressEventModel::AllowedRole).toBool() ? 0 : count;
    }
    qint64 total = 0;
    for (const EgressEntry &entry : m_events->entries())
        total += entry.count;
    m_summary->setText(
        m_filter->rowCount() == m_events->rowCount()
            ? tr("Decisions: %1, denied: %2").arg(total).arg(denied)
            : tr("Decisions shown: %1 of %2, denied: %3").arg(shown).arg(total).arg(denied));
}

void EgressView::updateSandboxChoices()
{
    if (!m_sandboxes)
        return;
    const QString current = m_sandbox->currentData().toString();
    const QSignalBlocker blocker(m_sandbox);
    while (m_sandbox->count() > 1)
        m_sandbox->removeItem(1);
    for (int row = 0; row < m_sandboxes->rowCount(); ++row) {
        const QString name = m_sandboxes->sandboxAt(row)->spec.name;
        m_sandbox->addItem(name, name);
    }
    const int index = m_sandbox->findData(current);
    m_sandbox->setCurrentIndex(std::max(0, index));
    updateMapSandbox();
}

const EgressEntry *EgressView::selectedEntry() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    const QModelIndex index = rows.isEmpty() ? m_table->currentIndex() : rows.constFirst();
    if (!index.isValid())
        return nullptr;
    const QModelIndex source = m_filter->mapToSource(index);
    return source.isValid() ? &m_events->entryAt(source.row()) : nullptr;
}

void EgressView::allowSelected()
{
    const EgressEntry *entry = selectedEntry();
    if (!entry || entry->allowed || entry->destination().isEmpty())
        return;
    Q_EMIT allowRequested(entry->sandbox, {ruleFor(*entry)});
}

void EgressView::updateActions()
{
    const EgressEntry *entry = selectedEntry();
    m_allowButton->setEnabled(entry && !entry->allowed
                              && canonicalizeHostname(entry->destination()).has_value());
    const bool learned = m_learnTable->selectionModel()->hasSelection();
    m_promoteButton->setEnabled(learned);
    m_dismissButton->setEnabled(learned);
}

} // namespace airlock
