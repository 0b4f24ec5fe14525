#include "ui/reviewdialog.h"

#include "ui/errortext.h"
#include "ui/guesttext.h"
#include "ui/patchhighlighter.h"
#include "ui/refusaltext.h"
#include "ui/workspacechangemodel.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace airlock {

using workspace::WorkspaceChange;

ReviewDialog::ReviewDialog(HelperClient *client, const QString &sandbox, const QString &hostFolder,
                           const QString &guestFolder, QWidget *parent)
    : QDialog(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_host(new QLineEdit(hostFolder, this))
    , m_guest(new QLineEdit(guestFolder, this))
    , m_compare(new QPushButton(tr("&Compare"), this))
    , m_progress(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_model(new WorkspaceChangeModel(this))
    , m_table(new QTableView(this))
    , m_patch(new QPlainTextEdit(this))
    , m_all(new QPushButton(tr("Select &All"), this))
    , m_none(new QPushButton(tr("Select &None"), this))
    , m_take(new QPushButton(tr("&Take Selected"), this))
{
    setWindowTitle(tr("Review Changes in %1").arg(sandbox));
    auto *browse = new QPushButton(tr("&Browse…"), this);
    auto *hostRow = new QHBoxLayout;
    hostRow->addWidget(m_host, 1);
    hostRow->addWidget(browse);
    auto *guestRow = new QHBoxLayout;
    guestRow->addWidget(m_guest, 1);
    guestRow->addWidget(m_compare);
    // Labels of their own: a QFormLayout row label only gets its buddy (and its mnemonic)
    // for a widget field, and these fields are rows of a field and a button.
    auto *hostLabel = new QLabel(tr("&Host folder:"), this);
    hostLabel->setBuddy(m_host);
    auto *guestLabel = new QLabel(tr("&Guest folder:"), this);
    guestLabel->setBuddy(m_guest);
    auto *form = new QFormLayout;
    form->addRow(hostLabel, hostRow);
    form->addRow(guestLabel, guestRow);
    m_host->setAccessibleName(tr("Host folder"));
    m_guest->setAccessibleName(tr("Guest folder"));

    m_progress->setRange(0, 0);
    m_progress->setVisible(false);
    m_progress->setTextVisible(false);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setAccessibleName(tr("Review status"));

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setShowGrid(false);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setColumnWidth(WorkspaceChangeModel::PathColumn, 200);
    m_table->setColumnWidth(WorkspaceChangeModel::StatusColumn, 80);
    m_table->setAccessibleName(tr("Changes"));

    m_patch->setReadOnly(true);
    m_patch->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_patch->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_patch->setAccessibleName(tr("Patch"));
    m_patch->setPlaceholderText(tr("Select a change to see its patch."));
    new PatchHighlighter(m_patch->document());

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_patch);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    // Wide enough for a refusal's reason, which has no patch pane to show it.
    splitter->setSizes({560, 540});

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_all, QDialogButtonBox::ActionRole);
    buttons->addButton(m_none, QDialogButtonBox::ActionRole);
    buttons->addButton(m_take, QDialogButtonBox::ApplyRole);
    m_take->setToolTip(tr("Write the checked changes into the host folder"));
    for (QPushButton *button : {m_all, m_none, m_take, m_compare})
        button->setAutoDefault(false);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(splitter, 1);
    layout->addWidget(buttons);
    resize(1100, 680);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Host Folder to Compare"), m_host->text());
        if (!folder.isEmpty())
            m_host->setText(folder);
    });
    connect(m_compare, &QPushButton::clicked, this, &ReviewDialog::compare);
    connect(m_all, &QPushButton::clicked, this, [this] { m_model->setAllAccepted(true); });
    connect(m_none, &QPushButton::clicked, this, [this] { m_model->setAllAccepted(false); });
    connect(m_take, &QPushButton::clicked, this, &ReviewDialog::takeSelected);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ReviewDialog::showSelected);
    connect(m_model, &WorkspaceChangeModel::acceptedChanged, this, &ReviewDialog::updateButtons);
    updateButtons();
}

void ReviewDialog::compare()
{
    if (m_review) {
        m_review->disconnect(this);
        m_review->cancel();
        m_review->deleteLater();
    }
    m_ready = false;
    m_model->setChanges({});
    m_patch->clear();
    m_review =
        new workspace::WorkspaceReview(m_client, m_sandbox, m_host->text(), m_guest->text(), this);
    m_progress->setVisible(true);
    setStatus(tr("Reading %1 from the sandbox…").arg(m_guest->text()));
    connect(m_review, &workspace::WorkspaceReview::progress, this, [this](quint64 bytes) {
        setStatus(tr("Reading %1 from the sandbox… %2")
                      .arg(m_guest->text(), QLocale().formattedDataSize(qint64(bytes))));
    });
    connect(m_review, &workspace::WorkspaceReview::ready, this, [this] {
        m_progress->setVisible(false);
        m_ready = true;
        m_model->setChanges(m_review->changes());
        qsizetype refused = 0;
        for (const WorkspaceChange &change : m_review->changes())
            refused += change.status == WorkspaceChange::Status::Refused;
        if (m_model->rowCount() == 0)
            setStatus(tr("No differences: the host folder has what the guest folder has."));
        else
            setStatus(tr("%n change(s); ", nullptr, m_model->rowCount() - int(refused))
                      + tr("%n refused.", nullptr, int(refused)));
        for (int row = 0; row < m_model->rowCount(); ++row) {
            if (m_model->flags(m_model->index(row, 0)) & Qt::ItemIsSelectable) {
                m_table->selectRow(row);
                break;
            }
        }
        updateButtons();
        emit ready();
    });
    connect(m_review, &workspace::WorkspaceReview::failed, this, [this](const Error &error) {
        m_progress->setVisible(false);
        setStatus(tr("Could not compare: %1 %2").arg(ErrorText::summary(error), error.message));
        updateButtons();
        emit failed(error);
    });
    updateButtons();
    m_review->start();
}

void ReviewDialog::takeSelected()
{
    if (!m_review || !m_ready)
        return;
    const Result<workspace::ApplyResult> result = m_review->apply(m_model->accepted());
    if (!result) {
        setStatus(tr("Could not take the changes: %1").arg(result.error().message));
        emit failed(result.error());
        return;
    }
    QString text =
        tr("Took the selected changes into %1: %n written, ", nullptr, int(result->written))
            .arg(m_host->text())
        + tr("%n removed", nullptr, int(result->removed));
    QStringList problems;
    for (const auto &[path, reason] : result->refused)
        problems << tr("%1 refused: %2").arg(path, RefusalText::describe(reason));
    for (const auto &[path, why] : result->failed)
        problems << tr("%1 not removed: %2").arg(path, why);
    if (!problems.isEmpty())
        text += u'\n' + problems.join(u'\n');
    setStatus(GuestText::shown(text));
    emit applied(*result);
}

QString ReviewDialog::statusText() const
{
    return m_status->text();
}

void ReviewDialog::selectChange(const QString &path)
{
    const int row = m_model->rowOf(path);
    if (row >= 0)
        m_table->selectRow(row);
    showSelected();
}

void ReviewDialog::showSelected()
{
    const WorkspaceChange *change = m_model->changeAt(m_table->currentIndex().row());
    if (!change) {
        m_patch->clear();
        return;
    }
    QString text;
    if (!change->patch.isEmpty())
        text = change->patch;
    else if (change->binary)
        text = tr("%1: binary content, no patch shown.").arg(change->path);
    else if (!change->summary.isEmpty())
        text = tr("%1: %2").arg(change->path, change->summary);
    else
        text = tr("%1: %2").arg(change->path, WorkspaceChangeModel::statusText(change->status));
    m_patch->setPlainText(GuestText::shown(text));
}

void ReviewDialog::setStatus(const QString &text)
{
    m_status->setText(text);
}

void ReviewDialog::updateButtons()
{
    const bool busy = m_review && !m_ready && m_progress->isVisible();
    m_compare->setEnabled(!busy);
    m_all->setEnabled(m_ready);
    m_none->setEnabled(m_ready);
    m_take->setEnabled(m_ready && !m_model->accepted().isEmpty());
}

} // namespace airlock
