#pragma once

#include "core/model/error.h"
#include "core/workspace/workspaceupload.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace airlock {

class HelperClient;

/// "Bring a project folder": sends a host folder into a guest folder (default /workspace)
/// with WorkspaceUpload (docs/workspaces.md), shows the bytes sent, and what the guest wrote
/// and refused (each refusal with its reason) when it ends.
class BringProjectDialog final : public QDialog
{
    Q_OBJECT
public:
    BringProjectDialog(HelperClient *client, const QString &sandbox, const QString &guestUser,
                       QWidget *parent = nullptr);

    /// Starts the push of the folders in the fields (the Send button).
    void push();
    /// Stops a running push (the guest cancels its stream).
    void cancelPush();

    QLineEdit *hostFolderEdit() const { return m_host; }
    QLineEdit *guestFolderEdit() const { return m_guest; }
    QString statusText() const;
    /// The refusals of the last push, one per line ("path: reason").
    QString refusalsText() const;

signals:
    void pushed(const airlock::workspace::PushResult &result);
    void failed(const airlock::Error &error);

private:
    void setBusy(bool busy);

    HelperClient *m_client;
    QString m_sandbox;
    QString m_user;
    QLineEdit *m_host;
    QLineEdit *m_guest;
    QProgressBar *m_progress;
    QLabel *m_status;
    QPlainTextEdit *m_refusals;
    QPushButton *m_send;
    QPushButton *m_cancel;
    workspace::WorkspaceUpload *m_upload = nullptr;
};

} // namespace airlock
