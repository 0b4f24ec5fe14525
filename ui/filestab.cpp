#include "ui/filestab.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "core/workspace/workspacedownload.h"
#include "core/workspace/workspaceupload.h"
#include "core/workspace/workspacewriter.h"
#include "ui/bringprojectdialog.h"
#include "ui/commandpanel.h"
#include "ui/errortext.h"
#include "ui/guestfilemodel.h"
#include "ui/guestfiletransfer.h"
#include "ui/guesttext.h"
#include "ui/reviewdialog.h"

#include <QAction>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonArray>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace airlock {

namespace {

QString method(const char *name)
{
    return QString::fromLatin1(name);
}

/// Entries per listing: files.list's most (AgentApi::kMaxListEntries).
constexpr int kMaxListEntries = 10000;

} // namespace

FilesTab::FilesTab(HelperClient *client, const QString &sandbox, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_model(new GuestFileModel(this))
    , m_pathEdit(new QLineEdit(this))
    , m_table(new QTableView(this))
    , m_error(new QLabel(this))
    , m_status(new QLabel(this))
    , m_transferLabel(new QLabel(this))
    , m_progress(new QProgressBar(this))
    , m_cancel(new QPushButton(tr("Stop"), this))
    , m_transferRow(new QWidget(this))
    , m_command(new CommandPanel(client, sandbox, this))
{
    setAcceptDrops(true);
    m_pathEdit->setAccessibleName(tr("Guest folder"));
    m_pathEdit->setToolTip(tr("The folder in the sandbox; type a path and press Enter"));

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setShowGrid(false);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setColumnWidth(GuestFileModel::NameColumn, 280);
    m_table->setColumnWidth(GuestFileModel::TypeColumn, 80);
    m_table->setColumnWidth(GuestFileModel::SizeColumn, 90);
    m_table->setColumnWidth(GuestFileModel::ModeColumn, 100);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_table->setAccessibleName(tr("Files of %1").arg(sandbox));

    // Said inside an empty folder's table, so it does not look like a listing that failed.
    auto *emptyHint =
        new QLabel(tr("This folder is empty. Drop files here or use Upload…"), m_table->viewport());
    emptyHint->setForegroundRole(QPalette::PlaceholderText);
    auto *emptyLayout = new QVBoxLayout(m_table->viewport());
    emptyLayout->addWidget(emptyHint, 0, Qt::AlignCenter);
    emptyHint->setVisible(false);
    connect(m_model, &QAbstractItemModel::modelReset, emptyHint, [this, emptyHint] {
        emptyHint->setVisible(!m_path.isEmpty() && m_model->rowCount() == 0);
    });

    m_error->setWordWrap(true);
    m_error->setTextFormat(Qt::PlainText);
    m_error->setVisible(false);
    m_error->setAccessibleName(tr("Files error"));
    m_error->setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #7a1c1c;"
                                          " border: 1px solid #f5c2c0; padding: 4px 8px; }"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setAccessibleName(tr("Files status"));
    m_status->setForegroundRole(QPalette::PlaceholderText);

    m_transferLabel->setTextFormat(Qt::PlainText);
    m_progress->setMinimumWidth(240);
    m_progress->setAccessibleName(tr("Transfer progress"));
    m_cancel->setToolTip(tr("Stop the transfer and the ones waiting"));
    auto *transferLayout = new QHBoxLayout(m_transferRow);
    transferLayout->setContentsMargins(0, 0, 0, 0);
    transferLayout->addWidget(m_transferLabel, 1);
    transferLayout->addWidget(m_progress);
    transferLayout->addWidget(m_cancel);
    m_transferRow->setVisible(false);

    createActions();
    auto *toolbar = new QToolBar(this);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setIconSize(QSize(16, 16));
    toolbar->addAction(m_up);
    toolbar->addWidget(m_pathEdit);
    toolbar->addAction(m_refresh);
    toolbar->addSeparator();
    toolbar->addAction(m_upload);
    toolbar->addAction(m_download);
    toolbar->addAction(m_newFolder);
    toolbar->addAction(m_delete);
    auto *workspaceBar = new QToolBar(this);
    workspaceBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    workspaceBar->addAction(m_bring);
    workspaceBar->addAction(m_review);

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(toolbar, 1);
    top->addWidget(workspaceBar);

    auto *browser = new QWidget(this);
    auto *browserLayout = new QVBoxLayout(browser);
    browserLayout->setContentsMargins(0, 0, 0, 0);
    browserLayout->addWidget(m_error);
    browserLayout->addWidget(m_table, 1);
    browserLayout->addWidget(m_transferRow);
    browserLayout->addWidget(m_status);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(browser);
    splitter->addWidget(m_command);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 4);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    connect(m_pathEdit, &QLineEdit::returnPressed, this,
            [this] { setPath(m_pathEdit->text().trimmed()); });
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        if (const GuestFileInfo *entry = m_model->entryAt(index.row()))
            open(entry->name);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &FilesTab::updateActions);
    connect(m_cancel, &QPushButton::clicked, this, &FilesTab::cancelTransfers);
    m_command->setUser(m_user);
    updateActions();
    setPath(QStringLiteral("/workspace"));
}

FilesTab::~FilesTab()
{
    m_queue.clear();
    delete m_current; // cancels its guest side (the transfers' destructors)
}

void FilesTab::createActions()
{
    auto make = [this](QStyle::StandardPixmap pixmap, const QString &text, const QString &tip) {
        auto *action = new QAction(style()->standardIcon(pixmap), text, this);
        action->setToolTip(tip);
        action->setStatusTip(tip);
        return action;
    };
    m_up = make(QStyle::SP_FileDialogToParent, tr("&Up"), tr("Show the folder above"));
    m_refresh = make(QStyle::SP_BrowserReload, tr("Re&fresh"), tr("List the folder again"));
    m_upload = make(QStyle::SP_ArrowUp, tr("&Upload…"),
                    tr("Copy files of this computer into this folder (or drop them here)"));
    m_download = make(QStyle::SP_ArrowDown, tr("&Download…"),
                      tr("Copy the selected entries to this computer"));
    m_newFolder =
        make(QStyle::SP_FileDialogNewFolder, tr("&New Folder…"), tr("Make a folder here"));
    m_delete = make(QStyle::SP_TrashIcon, tr("De&lete…"),
                    tr("Remove the selected entries (folders with their content)"));
    m_bring = new QAction(tr("&Bring Project Folder…"), this);
    m_bring->setToolTip(tr("Copy a project folder of this computer into the sandbox"));
    m_review = new QAction(tr("&Review Changes…"), this);
    m_review->setToolTip(tr("Compare a guest folder with a host folder and take the changes "
                            "you accept"));
    m_refresh->setShortcut(QKeySequence::Refresh);
    m_refresh->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_delete->setShortcut(QKeySequence::Delete);
    m_delete->setShortcutContext(Qt::WidgetShortcut);
    m_up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    m_up->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    for (QAction *action : {m_up, m_refresh})
        addAction(action);

    connect(m_up, &QAction::triggered, this, &FilesTab::goUp);
    connect(m_refresh, &QAction::triggered, this, &FilesTab::refresh);
    connect(m_upload, &QAction::triggered, this, &FilesTab::chooseUpload);
    connect(m_download, &QAction::triggered, this, &FilesTab::chooseDownload);
    connect(m_newFolder, &QAction::triggered, this, &FilesTab::askNewFolder);
    connect(m_delete, &QAction::triggered, this, &FilesTab::confirmDelete);
    connect(m_bring, &QAction::triggered, this, &FilesTab::showBringProject);
    connect(m_review, &QAction::triggered, this, &FilesTab::showReview);
    for (QAction *action : {m_download, m_delete, m_newFolder, m_upload, m_refresh})
        m_table->addAction(action);
}

void FilesTab::setGuestUser(const QString &user)
{
    m_user = user;
    m_command->setUser(user);
}

void FilesTab::setPath(const QString &path)
{
    const QString clean = QDir::cleanPath(path.isEmpty() ? QStringLiteral("/") : path);
    if (!clean.startsWith(u'/')) {
        showError(tr("Cannot show “%1”.").arg(path),
                  {ErrorKind::InvalidParams, tr("a guest path is absolute, e.g. /workspace")});
        m_pathEdit->setText(m_path);
        return;
    }
    const quint64 listing = ++m_listing;
    m_pathEdit->setText(clean);
    // Listing the folder again after an operation keeps the operation's result in view.
    if (clean != m_path)
        setStatus(tr("Listing %1…").arg(clean));
    QPointer<FilesTab> self(this);
    m_client->call(
        method(protocol::method::FilesList),
        {{QStringLiteral("name"), m_sandbox},
         {QStringLiteral("path"), clean},
         {QStringLiteral("maxEntries"), kMaxListEntries}},
        [self, listing, clean](const Result<QJsonValue> &answer) {
            if (!self || listing != self->m_listing)
                return;
            const bool first = std::exchange(self->m_firstListing, false);
            if (!answer) {
                // A guest without /workspace starts at its root.
                if (first && answer.error().kind == ErrorKind::NotFound)
                    return self->setPath(QStringLiteral("/"));
                self->m_pathEdit->setText(self->m_path);
                if (clean != self->m_path)
                    self->setStatus({});
                self->showError(tr("Cannot list %1.").arg(clean), answer.error());
                return;
            }
            const QJsonObject result = answer->toObject();
            const bool changed = clean != self->m_path;
            // An error stays until the next action; a listing after it does not hide it.
            if (changed)
                self->clearError();
            self->m_path = clean;
            self->m_model->setEntries(result.value(QStringLiteral("entries")).toArray(),
                                      result.value(QStringLiteral("truncated")).toBool());
            if (!changed) {
                self->updateActions();
                emit self->listed();
                return;
            }
            self->m_command->setWorkingFolder(clean);
            self->setStatus(self->m_model->isTruncated()
                                ? tr("%n item(s) shown; the folder has more than can be listed.",
                                     nullptr, self->m_model->rowCount())
                                : tr("%n item(s)", nullptr, self->m_model->rowCount()));
            self->updateActions();
            emit self->listed();
        });
}

void FilesTab::goUp()
{
    if (m_path != u"/")
        setPath(QFileInfo(m_path).path());
}

void FilesTab::refresh()
{
    setPath(m_path.isEmpty() ? m_pathEdit->text() : m_path);
}

void FilesTab::open(const QString &name)
{
    const int row = m_model->rowOf(name);
    const GuestFileInfo *entry = m_model->entryAt(row);
    if (entry && entry->isDirectory())
        setPath(guestPathOf(name));
}

QString FilesTab::guestPathOf(const QString &name) const
{
    return m_path == u"/" ? u'/' + name : m_path + u'/' + name;
}

void FilesTab::uploadPaths(const QStringList &hostPaths)
{
    const QString folder = m_path;
    for (const QString &host : hostPaths) {
        const QFileInfo info(host);
        const QString guest = (folder == u"/" ? QString() : folder) + u'/' + info.fileName();
        if (info.isDir()) {
            enqueue({tr("Uploading folder %1").arg(info.fileName()), [this, host, guest] {
                         auto *upload = new workspace::WorkspaceUpload(m_client, m_sandbox, host,
                                                                       guest, m_user, this);
                         connect(upload, &workspace::WorkspaceUpload::progress, this,
                                 [this](quint64 sent) { jobProgress(qint64(sent), -1); });
                         connect(upload, &workspace::WorkspaceUpload::finished, this,
                                 [this, upload, guest](const workspace::PushResult &result) {
                                     QString done =
                                         tr("Uploaded %1: %n item(s)", nullptr, int(result.entries))
                                             .arg(guest);
                                     if (result.refusedCount > 0)
                                         done += u' '
                                             + tr("(%n refused by the guest)", nullptr,
                                                  int(result.refusedCount));
                                     jobEnded(upload, std::nullopt, done);
                                 });
                         connect(
                             upload, &workspace::WorkspaceUpload::failed, this,
                             [this, upload](const Error &error) { jobEnded(upload, error, {}); });
                         return startLater(upload, [upload] { upload->start(); });
                     }});
        } else {
            enqueue(
                {tr("Uploading %1").arg(info.fileName()), [this, host, guest] {
                     auto *transfer = new GuestFileTransfer(m_client, m_sandbox,
                                                            GuestFileTransfer::Direction::Upload,
                                                            host, guest, this);
                     connect(transfer, &GuestFileTransfer::progress, this, &FilesTab::jobProgress);
                     connect(transfer, &GuestFileTransfer::finished, this, [this, transfer, guest] {
                         jobEnded(transfer, std::nullopt, tr("Uploaded %1").arg(guest));
                     });
                     connect(
                         transfer, &GuestFileTransfer::failed, this,
                         [this, transfer](const Error &error) { jobEnded(transfer, error, {}); });
                     return startLater(transfer, [transfer] { transfer->start(); });
                 }});
        }
    }
}

void FilesTab::downloadTo(const QStringList &names, const QString &hostFolder)
{
    for (const QString &name : names) {
        const GuestFileInfo *entry = m_model->entryAt(m_model->rowOf(name));
        const QString target = QDir(hostFolder).filePath(name);
        if (entry && entry->isDirectory()) {
            const QString guest = guestPathOf(name);
            enqueue({tr("Downloading folder %1").arg(name), [this, guest, target] {
                         auto writer = workspace::WorkspaceWriter::open(target);
                         if (!writer) {
                             // A stand-in job that fails once it is the current one.
                             auto *failed = new QObject(this);
                             const Error error {ErrorKind::OperationFailed, writer.error()};
                             return startLater(
                                 failed, [this, failed, error] { jobEnded(failed, error, {}); });
                         }
                         std::shared_ptr<workspace::WorkspaceWriter> shared(std::move(*writer));
                         auto *download = new workspace::WorkspaceDownload(
                             m_client, m_sandbox, guest,
                             [shared](QByteArrayView chunk) -> std::optional<QString> {
                                 if (!shared->feed(chunk))
                                     return shared->error();
                                 return std::nullopt;
                             },
                             this);
                         connect(download, &workspace::WorkspaceDownload::progress, this,
                                 [this](quint64 bytes) { jobProgress(qint64(bytes), -1); });
                         connect(download, &workspace::WorkspaceDownload::finished, this,
                                 [this, download, shared, target] {
                                     QString done = tr("Downloaded to %1: %n item(s)", nullptr,
                                                       int(shared->entriesWritten()))
                                                        .arg(target);
                                     if (!shared->refusals().empty())
                                         done += u' '
                                             + tr("(%n refused on this computer)", nullptr,
                                                  int(shared->refusals().size()));
                                     jobEnded(download, std::nullopt, done);
                                 });
                         connect(download, &workspace::WorkspaceDownload::failed, this,
                                 [this, download](const Error &error) {
                                     jobEnded(download, error, {});
                                 });
                         return startLater(download, [download] { download->start(); });
                     }});
        } else {
            downloadFile(name, target);
        }
    }
}

void FilesTab::downloadFile(const QString &name, const QString &hostFile)
{
    const QString guest = guestPathOf(name);
    enqueue({tr("Downloading %1").arg(name), [this, guest, hostFile] {
                 auto *transfer = new GuestFileTransfer(m_client, m_sandbox,
                                                        GuestFileTransfer::Direction::Download,
                                                        hostFile, guest, this);
                 connect(transfer, &GuestFileTransfer::progress, this, &FilesTab::jobProgress);
                 connect(transfer, &GuestFileTransfer::finished, this, [this, transfer, hostFile] {
                     jobEnded(transfer, std::nullopt, tr("Downloaded %1").arg(hostFile));
                 });
                 connect(transfer, &GuestFileTransfer::failed, this,
                         [this, transfer](const Error &error) { jobEnded(transfer, error, {}); });
                 return startLater(transfer, [transfer] { transfer->start(); });
             }});
}

void FilesTab::removeEntries(const QStringList &names)
{
    if (names.isEmpty())
        return;
    clearError();
    auto remaining = std::make_shared<int>(int(names.size()));
    QPointer<FilesTab> self(this);
    for (const QString &name : names) {
        const QString guest = guestPathOf(name);
        m_client->call(method(protocol::method::FilesRemove),
                       {{QStringLiteral("name"), m_sandbox},
                        {QStringLiteral("path"), guest},
                        {QStringLiteral("recursive"), true}},
                       [self, guest, remaining](const Result<QJsonValue> &answer) {
                           if (!self)
                               return;
                           if (!answer)
                               self->showError(tr("Cannot delete %1.").arg(guest), answer.error());
                           if (--*remaining > 0)
                               return;
                           self->setStatus(tr("Deleted."));
                           self->refresh();
                           emit self->operationDone();
                       });
    }
}

void FilesTab::makeFolder(const QString &name)
{
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty() || trimmed.contains(u'/') || trimmed == u"." || trimmed == u"..") {
        showError(tr("Cannot make the folder “%1”.").arg(name),
                  {ErrorKind::InvalidParams, tr("a folder name has no “/” and is not . or ..")});
        return;
    }
    clearError();
    const QString guest = guestPathOf(trimmed);
    QPointer<FilesTab> self(this);
    m_client->call(method(protocol::method::FilesMkdir),
                   {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("path"), guest}},
                   [self, guest](const Result<QJsonValue> &answer) {
                       if (!self)
                           return;
                       if (!answer)
                           self->showError(tr("Cannot make the folder %1.").arg(guest),
                                           answer.error());
                       else
                           self->setStatus(tr("Made %1.").arg(guest));
                       self->refresh();
                       emit self->operationDone();
                   });
}

void FilesTab::cancelTransfers()
{
    const bool any = m_current || !m_queue.isEmpty();
    m_queue.clear();
    if (m_current) {
        if (auto *transfer = qobject_cast<GuestFileTransfer *>(m_current))
            transfer->cancel();
        else if (auto *upload = qobject_cast<workspace::WorkspaceUpload *>(m_current))
            upload->cancel();
        else if (auto *download = qobject_cast<workspace::WorkspaceDownload *>(m_current))
            download->cancel();
        m_current->deleteLater();
        m_current = nullptr;
    }
    m_transferRow->setVisible(false);
    updateActions();
    if (any) {
        setStatus(tr("Transfer stopped."));
        refresh();
        emit transfersDone();
    }
}

BringProjectDialog *FilesTab::showBringProject()
{
    auto *dialog = new BringProjectDialog(m_client, m_sandbox, m_user, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->hostFolderEdit()->setText(m_lastHostFolder);
    dialog->guestFolderEdit()->setText(m_lastGuestFolder);
    connect(dialog, &BringProjectDialog::pushed, this, [this, dialog] {
        m_lastHostFolder = dialog->hostFolderEdit()->text();
        m_lastGuestFolder = dialog->guestFolderEdit()->text();
        refresh();
    });
    dialog->show();
    return dialog;
}

ReviewDialog *FilesTab::showReview()
{
    auto *dialog = new ReviewDialog(m_client, m_sandbox, m_lastHostFolder, m_lastGuestFolder, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    if (!m_lastHostFolder.isEmpty())
        dialog->compare();
    return dialog;
}

QString FilesTab::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

QString FilesTab::statusText() const
{
    return m_status->text();
}

bool FilesTab::isBusy() const
{
    return m_current || !m_queue.isEmpty();
}

QStringList FilesTab::selectedNames() const
{
    QStringList names;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        if (const GuestFileInfo *entry = m_model->entryAt(index.row()))
            names << entry->name;
    return names;
}

void FilesTab::dragEnterEvent(QDragEnterEvent *event)
{
    if (!event->mimeData()->hasUrls())
        return;
    const QList<QUrl> urls = event->mimeData()->urls();
    if (std::all_of(urls.begin(), urls.end(), [](const QUrl &url) { return url.isLocalFile(); }))
        event->acceptProposedAction();
}

void FilesTab::dropEvent(QDropEvent *event)
{
    QStringList paths;
    for (const QUrl &url : event->mimeData()->urls())
        if (url.isLocalFile())
            paths << url.toLocalFile();
    if (paths.isEmpty())
        return;
    event->acceptProposedAction();
    uploadPaths(paths);
}

void FilesTab::chooseUpload()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Upload to %1 in %2").arg(m_path, m_sandbox), QDir::homePath());
    if (!files.isEmpty())
        uploadPaths(files);
}

void FilesTab::chooseDownload()
{
    const QStringList names = selectedNames();
    if (names.isEmpty())
        return;
    const GuestFileInfo *entry = m_model->entryAt(m_model->rowOf(names.constFirst()));
    if (names.size() == 1 && entry && !entry->isDirectory()) {
        const QString file =
            QFileDialog::getSaveFileName(this, tr("Download %1").arg(names.constFirst()),
                                         QDir(QDir::homePath()).filePath(names.constFirst()));
        if (!file.isEmpty())
            downloadFile(names.constFirst(), file);
        return;
    }
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("Download %n item(s) into", nullptr, int(names.size())), QDir::homePath());
    if (!folder.isEmpty())
        downloadTo(names, folder);
}

void FilesTab::confirmDelete()
{
    const QStringList names = selectedNames();
    if (names.isEmpty())
        return;
    auto *box = new QMessageBox(
        QMessageBox::Warning, tr("Delete in %1").arg(m_sandbox),
        names.size() == 1 ? tr("Delete “%1” in %2?").arg(names.constFirst(), m_path)
                          : tr("Delete %n item(s) in %1?", nullptr, int(names.size())).arg(m_path),
        QMessageBox::Cancel, this);
    box->setTextFormat(Qt::PlainText);
    box->setInformativeText(tr("Folders are deleted with everything in them. This cannot be "
                               "undone."));
    QAbstractButton *deleteButton = box->addButton(tr("&Delete"), QMessageBox::DestructiveRole);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPointer<FilesTab> self(this);
    connect(box, &QMessageBox::finished, this, [self, box, deleteButton, names] {
        if (self && box->clickedButton() == deleteButton)
            self->removeEntries(names);
    });
    box->open();
}

void FilesTab::askNewFolder()
{
    auto *dialog = new QInputDialog(this);
    dialog->setWindowTitle(tr("New Folder in %1").arg(m_path));
    dialog->setLabelText(tr("Folder name:"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QInputDialog::textValueSelected, this, &FilesTab::makeFolder);
    dialog->open();
}

void FilesTab::enqueue(Job job)
{
    if (!isBusy())
        clearError();
    m_queue.append(std::move(job));
    if (!m_current)
        runNext();
    updateActions();
}

void FilesTab::runNext()
{
    while (!m_current && !m_queue.isEmpty()) {
        Job job = m_queue.takeFirst();
        m_currentLabel = job.label;
        m_transferLabel->setText(GuestText::shown(job.label));
        m_progress->setRange(0, 0);
        m_progress->setFormat({});
        m_transferRow->setVisible(true);
        m_current = job.start();
    }
    if (!m_current && m_queue.isEmpty()) {
        m_transferRow->setVisible(false);
    }
}

void FilesTab::jobProgress(qint64 done, qint64 total)
{
    const QLocale locale;
    if (total > 0) {
        // Per mille: QProgressBar's range is an int, files are not.
        m_progress->setRange(0, 1000);
        m_progress->setValue(int(qMin<qint64>(1000, done * 1000 / total)));
        m_progress->setFormat(
            tr("%1 of %2").arg(locale.formattedDataSize(done), locale.formattedDataSize(total)));
    } else {
        m_progress->setRange(0, 0);
        m_transferLabel->setText(
            GuestText::shown(tr("%1 — %2").arg(m_currentLabel, locale.formattedDataSize(done))));
    }
}

QObject *FilesTab::startLater(QObject *job, std::function<void()> start)
{
    // Started from the event loop, once it is m_current: a start that fails at once (a host
    // file that cannot be opened) then ends the right job.
    QTimer::singleShot(0, job, std::move(start));
    return job;
}

void FilesTab::jobEnded(QObject *job, const std::optional<Error> &error, const QString &done)
{
    if (!job || job != m_current)
        return;
    job->deleteLater();
    m_current = nullptr;
    if (error) {
        showError(tr("%1 failed.").arg(m_currentLabel), *error);
    } else {
        setStatus(GuestText::shown(done));
    }
    runNext();
    updateActions();
    if (!m_current) {
        refresh();
        emit transfersDone();
    }
}

void FilesTab::showError(const QString &what, const Error &error)
{
    const QString text = what + u' ' + ErrorText::fileSummary(error) + u' ' + error.message;
    m_error->setText(GuestText::shown(text));
    m_error->setVisible(true);
    emit errorShown(m_error->text());
}

void FilesTab::clearError()
{
    m_error->clear();
    m_error->setVisible(false);
}

void FilesTab::setStatus(const QString &text)
{
    m_status->setText(text);
}

void FilesTab::updateActions()
{
    const QStringList names = selectedNames();
    m_up->setEnabled(!m_path.isEmpty() && m_path != u"/");
    m_download->setEnabled(!names.isEmpty());
    m_delete->setEnabled(!names.isEmpty());
}

} // namespace airlock
