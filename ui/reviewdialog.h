#pragma once

#include "core/model/error.h"
#include "core/workspace/workspacereview.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace airlock {

class HelperClient;
class WorkspaceChangeModel;

/// "Review and take changes": compares a guest folder with a host folder (WorkspaceReview,
/// docs/workspaces.md), lists the changes with a check box each (refused ones with their
/// reason, not selectable), shows the selected file's unified patch, and writes only the
/// checked ones into the host folder ("Take Selected": WorkspaceReview::apply). What is
/// written is exactly what was compared, even if the guest changes the folder meanwhile.
class ReviewDialog final : public QDialog
{
    Q_OBJECT
public:
    ReviewDialog(HelperClient *client, const QString &sandbox, const QString &hostFolder,
                 const QString &guestFolder, QWidget *parent = nullptr);

    /// Pulls the guest folder and compares (the Compare button); ready() or failed() follows.
    void compare();
    /// Writes the checked changes (the Take Selected button); applied() or failed() follows at
    /// once.
    void takeSelected();

    WorkspaceChangeModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QLineEdit *hostFolderEdit() const { return m_host; }
    QLineEdit *guestFolderEdit() const { return m_guest; }
    QPlainTextEdit *patchView() const { return m_patch; }
    QPushButton *takeButton() const { return m_take; }
    QPushButton *allButton() const { return m_all; }
    QPushButton *noneButton() const { return m_none; }
    /// The status line: progress, how many changes, what apply() did, or the error.
    QString statusText() const;
    /// Selects the change at `path` and shows its patch.
    void selectChange(const QString &path);

signals:
    void ready();
    void applied(const airlock::workspace::ApplyResult &result);
    void failed(const airlock::Error &error);

private:
    void showSelected();
    void setStatus(const QString &text);
    void updateButtons();

    HelperClient *m_client;
    QString m_sandbox;
    QLineEdit *m_host;
    QLineEdit *m_guest;
    QPushButton *m_compare;
    QProgressBar *m_progress;
    QLabel *m_status;
    WorkspaceChangeModel *m_model;
    QTableView *m_table;
    QPlainTextEdit *m_patch;
    QPushButton *m_all;
    QPushButton *m_none;
    QPushButton *m_take;
    workspace::WorkspaceReview *m_review = nullptr;
    bool m_ready = false;
};

} // namespace airlock
