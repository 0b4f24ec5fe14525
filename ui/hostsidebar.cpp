#include "ui/hostsidebar.h"

#include "ui/hostconnection.h"
#include "ui/sandboxtablemodel.h"

#include <QHeaderView>
#include <QIcon>

namespace airlock {

namespace {

constexpr int HostRole = Qt::UserRole + 1;
constexpr int SandboxRole = Qt::UserRole + 2;
constexpr int StateRole = Qt::UserRole + 3; // int: SandboxState of a sandbox item

} // namespace

HostSidebar::HostSidebar(QWidget *parent) : QTreeWidget(parent)
{
    setHeaderHidden(true);
    setColumnCount(1);
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAccessibleName(tr("Hosts and sandboxes"));
    connect(this, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        HostConnection *host = hostOf(item);
        if (!host)
            return;
        Q_EMIT hostActivated(host);
        const QString sandbox = item->data(0, SandboxRole).toString();
        if (!sandbox.isEmpty())
            Q_EMIT sandboxActivated(host, sandbox);
    });
}

void HostSidebar::addHost(HostConnection *host)
{
    m_hosts.append(host);
    auto *item = new QTreeWidgetItem(this);
    item->setData(0, HostRole, QVariant::fromValue<QObject *>(host));
    item->setExpanded(true);
    auto update = [this, host] { refresh(host); };
    connect(host, &HostConnection::stateChanged, this, update);
    SandboxTableModel *model = host->model();
    connect(model, &QAbstractItemModel::modelReset, this, update);
    connect(model, &QAbstractItemModel::rowsInserted, this, update);
    connect(model, &QAbstractItemModel::rowsRemoved, this, update);
    connect(model, &QAbstractItemModel::dataChanged, this, update); // states
    connect(host, &QObject::destroyed, this, [this, host] { removeHost(host); });
    refresh(host);
    item->setExpanded(true);
}

void HostSidebar::removeHost(HostConnection *host)
{
    m_hosts.removeAll(host);
    delete itemFor(host);
}

QTreeWidgetItem *HostSidebar::itemFor(HostConnection *host) const
{
    for (int i = 0; i < topLevelItemCount(); ++i) {
        QTreeWidgetItem *item = topLevelItem(i);
        if (item->data(0, HostRole).value<QObject *>() == host)
            return item;
    }
    return nullptr;
}

HostConnection *HostSidebar::hostOf(QTreeWidgetItem *item) const
{
    while (item && item->parent())
        item = item->parent();
    if (!item)
        return nullptr;
    auto *host = qobject_cast<HostConnection *>(item->data(0, HostRole).value<QObject *>());
    return m_hosts.contains(host) ? host : nullptr;
}

HostConnection *HostSidebar::currentHost() const
{
    return hostOf(currentItem());
}

void HostSidebar::refresh(HostConnection *host)
{
    QTreeWidgetItem *item = itemFor(host);
    if (!item)
        return;
    item->setText(0, tr("%1 — %2").arg(host->title(), host->stateText()));
    item->setToolTip(0, host->lastError());
    item->setIcon(0,
                  QIcon(host->state() == HostConnection::State::Connected
                            ? QStringLiteral(":/icons/start.svg")
                            : QStringLiteral(":/icons/stop.svg")));
    SandboxTableModel *model = host->model();
    QStringList names;
    for (int row = 0; row < model->rowCount(); ++row)
        names.append(model->index(row, 0).data(SandboxTableModel::NameRole).toString());
    QStringList shown;
    for (int i = 0; i < item->childCount(); ++i)
        shown.append(item->child(i)->data(0, SandboxRole).toString());
    if (shown != names) {
        // Keep the current item when it is still there.
        const QString current = currentItem() && hostOf(currentItem()) == host
            ? currentItem()->data(0, SandboxRole).toString()
            : QString();
        const QSignalBlocker blocker(this);
        qDeleteAll(item->takeChildren());
        for (const QString &name : names) {
            auto *child = new QTreeWidgetItem(item, {name});
            child->setData(0, SandboxRole, name);
            if (!current.isEmpty() && name == current)
                setCurrentItem(child);
        }
    }
    // Each sandbox's state as an icon, and in words for the tooltip and screen readers.
    for (int i = 0; i < item->childCount() && i < model->rowCount(); ++i) {
        QTreeWidgetItem *child = item->child(i);
        const auto state =
            SandboxState(model->index(i, 0).data(SandboxTableModel::StateRole).toInt());
        const char *icon = "stop";
        if (state == SandboxState::Running)
            icon = "start";
        else if (state == SandboxState::Paused)
            icon = "pause";
        else if (state == SandboxState::Starting || state == SandboxState::Stopping
                 || state == SandboxState::Adopting)
            icon = "console";
        QString stateText = SandboxTableModel::stateText(state);
        // The table's badge (identity warning, probing, credential alert) in words too.
        if (const QString badge = model->index(i, 0).data(SandboxTableModel::AlertRole).toString();
            !badge.isEmpty())
            stateText += QLatin1Char('\n') + badge;
        child->setIcon(0, QIcon(QStringLiteral(":/icons/%1.svg").arg(QLatin1String(icon))));
        child->setToolTip(0, stateText);
        child->setData(0, Qt::AccessibleDescriptionRole, stateText);
        child->setData(0, StateRole, int(state));
    }
    item->setExpanded(true);
}

} // namespace airlock
