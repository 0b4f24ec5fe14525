#include "ui/credentialsview.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/bindingdialog.h"
#include "ui/bindingtablemodel.h"
#include "ui/columnsizer.h"
#include "ui/errortext.h"
#include "ui/sandboxtablemodel.h"
#include "ui/secretlistmodel.h"
#include "ui/setsecretdialog.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace airlock {

namespace {

void setUpTable(QTableView *table, const QString &name)
{
    table->setAccessibleName(name);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
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

CredentialsView::CredentialsView(HelperClient *client, SandboxTableModel *sandboxes,
                                 QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_sandboxes(sandboxes)
    , m_secrets(new SecretListModel(this))
    , m_bindings(new BindingTableModel(this))
    , m_secretTable(new QTableView(this))
    , m_bindingTable(new QTableView(this))
    , m_setButton(new QPushButton(tr("&Set Secret…"), this))
    , m_replaceButton(new QPushButton(tr("R&eplace Value…"), this))
    , m_deleteButton(new QPushButton(tr("&Delete Secret"), this))
    , m_addBindingButton(new QPushButton(tr("&Add Binding…"), this))
    , m_removeBindingButton(new QPushButton(tr("&Remove Binding"), this))
    , m_status(new QLabel(this))
{
    m_secretTable->setModel(m_secrets);
    setUpTable(m_secretTable, tr("Secrets"));
    m_secretTable->setColumnWidth(SecretListModel::NameColumn, 180);
    m_secretTable->setColumnWidth(SecretListModel::FingerprintColumn, 170);
    m_secretTable->setColumnWidth(SecretListModel::LastUsedColumn, 150);
    m_secretTable->setColumnWidth(SecretListModel::UseCountColumn, 70);
    m_bindingTable->setModel(m_bindings);
    setUpTable(m_bindingTable, tr("Credential bindings"));
    m_bindingTable->setColumnWidth(BindingTableModel::SandboxColumn, 90);
    m_bindingTable->setColumnWidth(BindingTableModel::SecretColumn, 120);
    m_bindingTable->setColumnWidth(BindingTableModel::HostColumn, 170);
    m_bindingTable->setColumnWidth(BindingTableModel::PathColumn, 90);
    m_bindingTable->setColumnWidth(BindingTableModel::TemplateColumn, 210);
    m_bindingTable->setColumnWidth(BindingTableModel::InjectionsColumn, 90);
    m_bindingTable->setColumnWidth(BindingTableModel::LastUsedColumn, 145);
    ColumnSizer::fit(m_bindingTable, BindingTableModel::InjectionsColumn,
                     {QStringLiteral("99999")});
    ColumnSizer::fit(m_bindingTable, BindingTableModel::DeniedColumn, {QStringLiteral("99999")});

    m_setButton->setAccessibleName(tr("Set a new secret"));
    m_replaceButton->setAccessibleName(tr("Replace the selected secret's value"));
    m_deleteButton->setAccessibleName(tr("Delete the selected secret"));
    m_addBindingButton->setAccessibleName(tr("Add a credential binding"));
    m_removeBindingButton->setAccessibleName(tr("Remove the selected binding"));
    m_status->setAccessibleName(tr("Credentials status"));
    m_status->setWordWrap(true);

    auto *secretsBox = new QGroupBox(tr("Secrets"), this);
    auto *secretsLayout = new QVBoxLayout(secretsBox);
    auto *secretsNote = new QLabel(tr("Values are stored encrypted by the helper and are never "
                                      "shown again or sent to a sandbox. A sandbox holds only a "
                                      "placeholder; its gateway swaps in the value on HTTPS "
                                      "requests that match a binding exactly, and replaces the "
                                      "value with the placeholder in every response."),
                                   secretsBox);
    secretsNote->setWordWrap(true);
    secretsLayout->addWidget(secretsNote);
    secretsLayout->addWidget(m_secretTable, 1);
    auto *secretButtons = new QHBoxLayout;
    secretButtons->addWidget(m_setButton);
    secretButtons->addWidget(m_replaceButton);
    secretButtons->addWidget(m_deleteButton);
    secretButtons->addStretch(1);
    secretsLayout->addLayout(secretButtons);

    auto *bindingsBox = new QGroupBox(tr("Bindings"), this);
    auto *bindingsLayout = new QVBoxLayout(bindingsBox);
    auto *bindingsNote =
        new QLabel(tr("The guest finds each bound secret's placeholder in /run/airlock/env "
                      "(AIRLOCK_SECRET_NAME). A request that carries it anywhere else (another "
                      "host, path, method or port, or plain HTTP) is refused, counted as "
                      "denied and raises an alert."),
                   bindingsBox);
    bindingsNote->setWordWrap(true);
    bindingsLayout->addWidget(bindingsNote);
    bindingsLayout->addWidget(m_bindingTable, 1);
    auto *bindingButtons = new QHBoxLayout;
    bindingButtons->addWidget(m_addBindingButton);
    bindingButtons->addWidget(m_removeBindingButton);
    bindingButtons->addStretch(1);
    bindingsLayout->addLayout(bindingButtons);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(secretsBox);
    splitter->addWidget(bindingsBox);
    splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(splitter, 1);
    layout->addWidget(m_status);

    setTabOrder(m_secretTable, m_setButton);
    setTabOrder(m_setButton, m_replaceButton);
    setTabOrder(m_replaceButton, m_deleteButton);
    setTabOrder(m_deleteButton, m_bindingTable);
    setTabOrder(m_bindingTable, m_addBindingButton);
    setTabOrder(m_addBindingButton, m_removeBindingButton);

    connect(m_setButton, &QPushButton::clicked, this, [this] { showSetSecretDialog(); });
    connect(m_replaceButton, &QPushButton::clicked, this, [this] {
        const QModelIndex index = m_secretTable->currentIndex();
        if (index.isValid())
            showSetSecretDialog(index.data(SecretListModel::NameRole).toString());
    });
    connect(m_deleteButton, &QPushButton::clicked, this, &CredentialsView::deleteSelectedSecret);
    connect(m_addBindingButton, &QPushButton::clicked, this,
            &CredentialsView::showAddBindingDialog);
    connect(m_removeBindingButton, &QPushButton::clicked, this,
            &CredentialsView::removeSelectedBinding);
    connect(m_secretTable->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &CredentialsView::updateActions);
    connect(m_bindingTable->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &CredentialsView::updateActions);
    if (client) {
        connect(client, &HelperClient::notificationReceived, this,
                &CredentialsView::onNotification);
        connect(client, &HelperClient::ready, this, &CredentialsView::refresh);
    }
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(300);
    connect(&m_refreshTimer, &QTimer::timeout, this, &CredentialsView::refresh);
    updateActions();
}

QString CredentialsView::statusText() const
{
    return m_status->text();
}

void CredentialsView::setStatus(const QString &text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: #b02020;") : QString());
}

void CredentialsView::fail(const QString &what, const Error &error)
{
    const QString text = error.kind == ErrorKind::BackendUnavailable
        ? tr("%1 The vault is not available: %2").arg(what, error.message)
        : QStringLiteral("%1 %2 %3").arg(what, ErrorText::summary(error), error.message);
    setStatus(text, true);
    Q_EMIT actionFailed(text);
}

void CredentialsView::refresh()
{
    if (!m_client)
        return;
    QPointer<CredentialsView> self(this);
    m_client->call(QString::fromLatin1(protocol::method::SecretList), {},
                   [self](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result)
                           return self->fail(tr("Could not list the secrets."), result.error());
                       self->m_secrets->resetFromList(result->toObject());
                       self->updateActions();
                   });
    m_client->call(QString::fromLatin1(protocol::method::BindingList), {},
                   [self](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result)
                           return self->fail(tr("Could not list the bindings."), result.error());
                       if (auto ok = self->m_bindings->resetFromList(result->toObject()); !ok)
                           return self->fail(tr("Could not read the bindings."), ok.error());
                       for (const QString &sandbox : self->m_bindings->sandboxes())
                           self->loadPolicy(sandbox);
                       self->updateActions();
                       Q_EMIT self->refreshed();
                   });
}

void CredentialsView::loadPolicy(const QString &sandbox)
{
    QPointer<CredentialsView> self(this);
    m_client->call(QString::fromLatin1(protocol::method::PolicyGet),
                   {{QStringLiteral("name"), sandbox}},
                   [self, sandbox](const Result<QJsonValue> &result) {
                       if (!self || !result)
                           return;
                       auto policy = EgressPolicy::fromJson(
                           result->toObject().value(QStringLiteral("policy")).toObject());
                       if (policy)
                           self->m_bindings->setPolicy(sandbox, *policy);
                   });
}

void CredentialsView::onNotification(const QString &method, const QJsonObject &params)
{
    if (method == QLatin1String(protocol::notification::PolicyChanged)) {
        const QString sandbox = params.value(QStringLiteral("name")).toString();
        if (m_bindings->sandboxes().contains(sandbox))
            loadPolicy(sandbox);
    } else if (method == QLatin1String(protocol::notification::SandboxRemoved)) {
        refresh();
    } else if (method == QLatin1String(protocol::notification::EgressEvent)
               && params.value(QStringLiteral("event"))
                      .toObject()
                      .contains(QStringLiteral("binding"))) {
        // The helper counts the binding's injections and denials from this event: read the
        // counters again, once for a burst of events.
        if (!m_refreshTimer.isActive())
            m_refreshTimer.start();
    }
}

SetSecretDialog *CredentialsView::showSetSecretDialog(const QString &name)
{
    auto *dialog = new SetSecretDialog(name, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { storeSecret(dialog); });
    dialog->open();
    return dialog;
}

void CredentialsView::storeSecret(SetSecretDialog *dialog)
{
    if (!m_client)
        return;
    const QString name = dialog->name();
    SecretValue value = dialog->takeValue();
    QJsonObject params {{QStringLiteral("name"), name}};
    {
        // The one place the value leaves the SecretValue: the JSON string of secret.set
        // (docs/credentials.md: Qt's JSON keeps copies that cannot be wiped).
        QString text = QString::fromUtf8(value.reveal());
        params.insert(QStringLiteral("value"), text);
        text.fill(QChar(0));
    }
    QPointer<CredentialsView> self(this);
    m_client->call(QString::fromLatin1(protocol::method::SecretSet), params,
                   [self, name](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result)
                           return self->fail(tr("Could not store secret “%1”.").arg(name),
                                             result.error());
                       self->m_secrets->upsert(result->toObject());
                       self->setStatus(tr("Stored secret “%1”.").arg(name));
                       Q_EMIT self->secretStored(name);
                   });
    params = {};
}

void CredentialsView::deleteSelectedSecret()
{
    const QModelIndex index = m_secretTable->currentIndex();
    if (!index.isValid() || !m_client)
        return;
    const QString name = index.data(SecretListModel::NameRole).toString();
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Delete Secret"),
                                tr("Delete secret “%1”?").arg(name), QMessageBox::Cancel, this);
    box->setInformativeText(tr("The encrypted value is removed from the helper. Remove its "
                               "bindings first."));
    QAbstractButton *deleteButton = box->addButton(tr("&Delete"), QMessageBox::DestructiveRole);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPointer<CredentialsView> self(this);
    connect(box, &QMessageBox::finished, this, [self, box, deleteButton, name] {
        if (!self || box->clickedButton() != deleteButton)
            return;
        self->m_client->call(
            QString::fromLatin1(protocol::method::SecretDelete), {{QStringLiteral("name"), name}},
            [self, name](const Result<QJsonValue> &result) {
                if (!self)
                    return;
                if (!result)
                    return self->fail(tr("Could not delete secret “%1”.").arg(name),
                                      result.error());
                self->m_secrets->remove(name);
                self->setStatus(tr("Deleted secret “%1”.").arg(name));
            });
    });
    box->open();
}

void CredentialsView::showAddBindingDialog()
{
    QStringList sandboxes;
    if (m_sandboxes) {
        for (int row = 0; row < m_sandboxes->rowCount(); ++row)
            sandboxes.append(m_sandboxes->sandboxAt(row)->spec.name);
    }
    for (const QString &sandbox : sandboxes)
        loadPolicy(sandbox);
    auto *dialog = new BindingDialog(
        sandboxes, m_secrets->names(),
        [bindings = QPointer<BindingTableModel>(m_bindings)](const CredentialBinding &binding) {
            return bindings ? bindings->warning(binding) : QString();
        },
        this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    QPointer<CredentialsView> self(this);
    connect(dialog, &QDialog::accepted, this, [self, dialog] {
        const CredentialBinding binding = dialog->binding();
        QJsonObject params = binding.toJson();
        for (const char *key : {"id", "createdAt", "stats", "placeholderVariable"})
            params.remove(QString::fromLatin1(key));
        self->m_client->call(QString::fromLatin1(protocol::method::BindingAdd), params,
                             [self](const Result<QJsonValue> &result) {
                                 if (!self)
                                     return;
                                 if (!result)
                                     return self->fail(tr("Could not add the binding."),
                                                       result.error());
                                 self->setStatus(tr("Binding added."));
                                 self->refresh();
                             });
    });
    dialog->open();
}

void CredentialsView::removeSelectedBinding()
{
    const QModelIndex index = m_bindingTable->currentIndex();
    if (!index.isValid() || !m_client)
        return;
    const qint64 id = index.data(BindingTableModel::IdRole).toLongLong();
    QPointer<CredentialsView> self(this);
    m_client->call(QString::fromLatin1(protocol::method::BindingRemove),
                   {{QStringLiteral("id"), id}}, [self, id](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result)
                           return self->fail(tr("Could not remove the binding."), result.error());
                       self->m_bindings->remove(id);
                       self->setStatus(tr("Binding removed."));
                       self->refresh();
                   });
}

void CredentialsView::updateActions()
{
    const bool secret = m_secretTable->selectionModel()->hasSelection();
    m_replaceButton->setEnabled(secret);
    m_deleteButton->setEnabled(secret);
    m_removeBindingButton->setEnabled(m_bindingTable->selectionModel()->hasSelection());
    m_addBindingButton->setEnabled(m_secrets->rowCount() > 0);
}

} // namespace airlock
