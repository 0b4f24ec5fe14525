#pragma once

#include "core/ssh/sshendpoint.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace airlock {

/// The connections manager: the list of remote hosts on the left, the selected one's user,
/// host, port, helper socket path and identity file on the right; Add and Remove below the
/// list. Works on a copy: hosts() is what OK confirms. Secrets are never entered here; they
/// are asked when a connection needs them.
class ConnectionsDialog final : public QDialog
{
    Q_OBJECT
public:
    explicit ConnectionsDialog(const QList<SshEndpoint> &hosts, QWidget *parent = nullptr);

    QList<SshEndpoint> hosts() const { return m_hosts; }

    /// Adds a host and selects it for editing (the Add button).
    void addHost();
    /// Removes the selected host (the Remove button).
    void removeSelectedHost();
    QListWidget *list() const { return m_list; }
    QLineEdit *userEdit() const { return m_user; }
    QLineEdit *hostEdit() const { return m_host; }
    QSpinBox *portEdit() const { return m_port; }
    QLineEdit *socketEdit() const { return m_socket; }
    QLineEdit *identityEdit() const { return m_identity; }

    void accept() override;

private:
    void showHost(int row);
    void storeFields();
    void updateListItem(int row);

    QList<SshEndpoint> m_hosts;
    QListWidget *m_list;
    QLineEdit *m_user;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_socket;
    QLineEdit *m_identity;
    QPushButton *m_browse;
    QPushButton *m_remove;
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
    int m_shown = -1;
    bool m_loading = false;
};

} // namespace airlock
