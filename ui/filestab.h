#pragma once

#include "core/model/error.h"

#include <QList>
#include <QPointer>
#include <QWidget>

#include <functional>

class QAction;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace airlock {

class BringProjectDialog;
class CommandPanel;
class GuestFileModel;
class HelperClient;
class ReviewDialog;

/// One sandbox's Files tab (next to its console tab): a guest folder browser over the guest
/// agent (files.*, docs/protocol.md "Files"; no network needed), with upload (also by dropping
/// host files or folders onto it), download, delete (recursive for folders), new folder, a
/// progress bar with bytes and Stop for transfers, errors in words (ErrorText::fileSummary),
/// a Run command panel, and the workspace dialogs (Bring a project folder, Review changes).
/// Files go through GuestFileTransfer, folders through WorkspaceUpload / WorkspaceDownload;
/// host files are read and written by the window, as the person's user. One transfer runs at
/// a time; more wait in a queue.
class FilesTab final : public QWidget
{
    Q_OBJECT
public:
    FilesTab(HelperClient *client, const QString &sandbox, QWidget *parent = nullptr);
    ~FilesTab() override;

    QString sandbox() const { return m_sandbox; }
    /// The guest folder shown.
    QString path() const { return m_path; }
    /// The guest user owning what uploads write and running commands ("agent" unless set).
    void setGuestUser(const QString &user);
    QString guestUser() const { return m_user; }

    /// Lists guest folder `path` (absolute); listed() or an error follows.
    void setPath(const QString &path);
    void goUp();
    void refresh();
    /// Opens the entry `name` of the current folder: a folder is entered.
    void open(const QString &name);
    /// Copies host files (and folders) into the current guest folder.
    void uploadPaths(const QStringList &hostPaths);
    /// Copies entries of the current folder into host folder `hostFolder`, each under its name.
    void downloadTo(const QStringList &names, const QString &hostFolder);
    /// Copies the guest file `name` of the current folder to host file `hostFile`.
    void downloadFile(const QString &name, const QString &hostFile);
    /// Removes entries of the current folder (folders with their content), without asking.
    void removeEntries(const QStringList &names);
    /// Makes the folder `name` in the current folder.
    void makeFolder(const QString &name);
    /// Stops the running transfer and drops the queued ones.
    void cancelTransfers();

    /// Opens the Bring a project folder dialog (non-modal); it is returned for tests.
    BringProjectDialog *showBringProject();
    /// Opens the Review changes dialog for the last pushed pair of folders.
    ReviewDialog *showReview();

    GuestFileModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    CommandPanel *commandPanel() const { return m_command; }
    QLineEdit *pathEdit() const { return m_pathEdit; }
    QProgressBar *progressBar() const { return m_progress; }
    /// The error shown above the table; empty when none.
    QString errorText() const;
    /// The last status line (what a finished operation did).
    QString statusText() const;
    /// A transfer runs or waits.
    bool isBusy() const;
    /// Names of the selected entries.
    QStringList selectedNames() const;

signals:
    /// A folder listing arrived (path() is the folder).
    void listed();
    /// An operation or transfer failed; errorText() says it.
    void errorShown(const QString &text);
    /// The queue of transfers ran empty (and the folder was listed again).
    void transfersDone();
    /// mkdir or remove answered (and the folder is listed again).
    void operationDone();

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    struct Job
    {
        QString label;
        std::function<QObject *()> start; ///< makes and starts it
    };
    void createActions();
    void chooseUpload();
    void chooseDownload();
    void confirmDelete();
    void askNewFolder();
    void enqueue(Job job);
    void runNext();
    void jobProgress(qint64 done, qint64 total);
    /// Starts `job` from the event loop; returns it.
    QObject *startLater(QObject *job, std::function<void()> start);
    /// `job` ended (if it is the current one): the status or the error, then the next job.
    void jobEnded(QObject *job, const std::optional<Error> &error, const QString &done);
    void showError(const QString &what, const Error &error);
    void clearError();
    void setStatus(const QString &text);
    void updateActions();
    QString guestPathOf(const QString &name) const;

    HelperClient *m_client;
    QString m_sandbox;
    QString m_user = QStringLiteral("agent");
    QString m_path;
    quint64 m_listing = 0; ///< the current files.list call; older answers are dropped
    bool m_firstListing = true;
    GuestFileModel *m_model;
    QLineEdit *m_pathEdit;
    QTableView *m_table;
    QLabel *m_error;
    QLabel *m_status;
    QLabel *m_transferLabel;
    QProgressBar *m_progress;
    QPushButton *m_cancel;
    QWidget *m_transferRow;
    CommandPanel *m_command;
    QAction *m_up = nullptr;
    QAction *m_refresh = nullptr;
    QAction *m_upload = nullptr;
    QAction *m_download = nullptr;
    QAction *m_delete = nullptr;
    QAction *m_newFolder = nullptr;
    QAction *m_bring = nullptr;
    QAction *m_review = nullptr;
    QList<Job> m_queue;
    QPointer<QObject> m_current;
    QString m_currentLabel; ///< what m_current does, e.g. "Uploading big.bin"
    QString m_lastHostFolder; ///< Bring a project folder's, for Review
    QString m_lastGuestFolder = QStringLiteral("/workspace");
};

} // namespace airlock
