#pragma once

#include "core/model/error.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace airlock {

class BindingTableModel;
class HelperClient;
class SandboxTableModel;
class SecretListModel;
class SetSecretDialog;

/// The credentials view: the helper's secrets (name, fingerprint, last use, uses; never a
/// value), Set Secret… (a password field sent once with `secret.set`, then cleared), Delete,
/// and the bindings of every sandbox with their counters (injections, last use, denied), their
/// validation and a warning where the sandbox's policy would deny the binding's host. The
/// counters are read again after each egress event that names a binding. Everything through
/// the helper's RPC.
class CredentialsView final : public QWidget
{
    Q_OBJECT
public:
    CredentialsView(HelperClient *client, SandboxTableModel *sandboxes, QWidget *parent = nullptr);

    SecretListModel *secrets() const { return m_secrets; }
    BindingTableModel *bindings() const { return m_bindings; }
    QTableView *secretTable() const { return m_secretTable; }
    QTableView *bindingTable() const { return m_bindingTable; }
    QString statusText() const;

public Q_SLOTS:
    /// Reads secret.list, binding.list and the policies of the bound sandboxes.
    void refresh();
    /// Opens the set-secret dialog (to replace `name`, or for a new secret).
    SetSecretDialog *showSetSecretDialog(const QString &name = {});
    /// Sends the dialog's value once (secret.set) and clears it.
    void storeSecret(SetSecretDialog *dialog);
    void showAddBindingDialog();

Q_SIGNALS:
    /// A refresh or an action finished (for tests and the status bar).
    void refreshed();
    void secretStored(const QString &name);
    void actionFailed(const QString &text);

private:
    void onNotification(const QString &method, const QJsonObject &params);
    void loadPolicy(const QString &sandbox);
    void deleteSelectedSecret();
    void removeSelectedBinding();
    void setStatus(const QString &text, bool error = false);
    void fail(const QString &what, const Error &error);
    void updateActions();

    QPointer<HelperClient> m_client;
    QPointer<SandboxTableModel> m_sandboxes;
    SecretListModel *m_secrets;
    BindingTableModel *m_bindings;
    QTableView *m_secretTable;
    QTableView *m_bindingTable;
    QPushButton *m_setButton;
    QPushButton *m_replaceButton;
    QPushButton *m_deleteButton;
    QPushButton *m_addBindingButton;
    QPushButton *m_removeBindingButton;
    QLabel *m_status;
    QTimer m_refreshTimer; // binding counters after egress events that name a binding
};

} // namespace airlock
