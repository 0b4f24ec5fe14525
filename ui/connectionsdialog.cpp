#include "ui/connectionsdialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace airlock {

ConnectionsDialog::ConnectionsDialog(const QList<SshEndpoint> &hosts, QWidget *parent)
    : QDialog(parent)
    , m_hosts(hosts)
    , m_list(new QListWidget(this))
    , m_user(new QLineEdit(this))
    , m_host(new QLineEdit(this))
    , m_port(new QSpinBox(this))
    , m_socket(new QLineEdit(this))
    , m_identity(new QLineEdit(this))
    , m_browse(new QPushButton(tr("Browse…"), this))
    , m_remove(new QPushButton(tr("&Remove"), this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Connections"));
    m_list->setAccessibleName(tr("Remote hosts"));
    m_port->setRange(1, 65535);
    m_port->setValue(22);
    m_user->setPlaceholderText(tr("your login name"));
    m_host->setPlaceholderText(tr("build.example.org"));
    m_socket->setPlaceholderText(QStringLiteral(AIRLOCK_DEFAULT_SOCKET));
    m_identity->setPlaceholderText(tr("ssh-agent and ~/.ssh/id_*"));
    m_problem->setForegroundRole(QPalette::PlaceholderText);
    m_problem->setWordWrap(true);

    auto *add = new QPushButton(tr("&Add"), this);
    auto *listButtons = new QHBoxLayout;
    listButtons->addWidget(add);
    listButtons->addWidget(m_remove);
    listButtons->addStretch();
    auto *left = new QVBoxLayout;
    left->addWidget(m_list, 1);
    left->addLayout(listButtons);

    auto *identityRow = new QHBoxLayout;
    identityRow->addWidget(m_identity, 1);
    identityRow->addWidget(m_browse);
    auto *form = new QFormLayout;
    form->addRow(tr("&User:"), m_user);
    form->addRow(tr("&Host:"), m_host);
    form->addRow(tr("&Port:"), m_port);
    form->addRow(tr("Helper &socket:"), m_socket);
    auto *identityLabel = new QLabel(tr("&Identity file:"), this);
    identityLabel->setBuddy(m_identity); // a layout row has no buddy of its own
    form->addRow(identityLabel, identityRow);
    auto *note = new QLabel(tr("Passwords and passphrases are asked when connecting and never "
                               "stored. Host keys are checked against ~/.ssh/known_hosts."),
                            this);
    note->setWordWrap(true);
    note->setForegroundRole(QPalette::PlaceholderText);
    auto *right = new QVBoxLayout;
    right->addLayout(form);
    right->addWidget(note);
    right->addWidget(m_problem);
    right->addStretch();

    auto *columns = new QHBoxLayout;
    columns->addLayout(left, 2);
    columns->addLayout(right, 3);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(columns, 1);
    layout->addWidget(m_buttons);

    for (int row = 0; row < m_hosts.size(); ++row) {
        m_list->addItem(QString());
        updateListItem(row);
    }
    connect(m_list, &QListWidget::currentRowChanged, this, &ConnectionsDialog::showHost);
    connect(add, &QPushButton::clicked, this, &ConnectionsDialog::addHost);
    connect(m_remove, &QPushButton::clicked, this, &ConnectionsDialog::removeSelectedHost);
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(
            this, tr("Identity File"), QDir::homePath() + QStringLiteral("/.ssh"));
        if (!file.isEmpty())
            m_identity->setText(file);
    });
    for (QLineEdit *edit : {m_user, m_host, m_socket, m_identity})
        connect(edit, &QLineEdit::textChanged, this, &ConnectionsDialog::storeFields);
    connect(m_port, &QSpinBox::valueChanged, this, &ConnectionsDialog::storeFields);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &ConnectionsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    m_list->setCurrentRow(m_hosts.isEmpty() ? -1 : 0);
    showHost(m_list->currentRow());
    resize(640, 360);
}

void ConnectionsDialog::addHost()
{
    m_hosts.append(SshEndpoint {});
    m_list->addItem(QString());
    updateListItem(int(m_hosts.size()) - 1);
    m_list->setCurrentRow(int(m_hosts.size()) - 1);
    m_host->setFocus(Qt::OtherFocusReason);
}

void ConnectionsDialog::removeSelectedHost()
{
    const int row = m_list->currentRow();
    if (row < 0 || row >= m_hosts.size())
        return;
    m_shown = -1;
    m_hosts.removeAt(row);
    delete m_list->takeItem(row);
    showHost(m_list->currentRow());
}

void ConnectionsDialog::showHost(int row)
{
    const bool valid = row >= 0 && row < m_hosts.size();
    m_loading = true;
    const SshEndpoint endpoint = valid ? m_hosts[row] : SshEndpoint {};
    m_user->setText(endpoint.user);
    m_host->setText(endpoint.host);
    m_port->setValue(endpoint.port);
    m_socket->setText(endpoint.socketPath);
    m_identity->setText(endpoint.identityFile);
    m_loading = false;
    m_shown = valid ? row : -1;
    for (QWidget *widget : std::initializer_list<QWidget *> {m_user, m_host, m_port, m_socket,
                                                             m_identity, m_browse, m_remove})
        widget->setEnabled(valid);
}

void ConnectionsDialog::storeFields()
{
    if (m_loading || m_shown < 0 || m_shown >= m_hosts.size())
        return;
    SshEndpoint &endpoint = m_hosts[m_shown];
    endpoint.user = m_user->text().trimmed();
    endpoint.host = m_host->text().trimmed();
    endpoint.port = quint16(m_port->value());
    endpoint.socketPath = m_socket->text().trimmed().isEmpty()
        ? QStringLiteral(AIRLOCK_DEFAULT_SOCKET)
        : m_socket->text().trimmed();
    endpoint.identityFile = m_identity->text().trimmed();
    updateListItem(m_shown);
    m_problem->clear();
}

void ConnectionsDialog::updateListItem(int row)
{
    QListWidgetItem *item = m_list->item(row);
    if (!item)
        return;
    const SshEndpoint &endpoint = m_hosts[row];
    item->setText(endpoint.host.isEmpty() ? tr("(new host)") : endpoint.displayName());
}

void ConnectionsDialog::accept()
{
    for (int row = 0; row < m_hosts.size(); ++row) {
        const SshEndpoint &endpoint = m_hosts[row];
        QString text = endpoint.host;
        if (!endpoint.user.isEmpty())
            text = endpoint.user + QLatin1Char('@') + text;
        if (endpoint.host.isEmpty() || !SshEndpoint::parse(text)) {
            m_list->setCurrentRow(row);
            m_problem->setText(tr("Enter a valid host name or address."));
            m_host->setFocus(Qt::OtherFocusReason);
            return;
        }
    }
    QDialog::accept();
}

} // namespace airlock
