#include "ui/sandboxtablemodel.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QIcon>
#include <QJsonArray>

#include <algorithm>

namespace airlock {

SandboxTableModel::SandboxTableModel(QObject *parent)
    : QAbstractTableModel(parent), m_uptimeTimer(this)
{
    m_uptimeTimer.setObjectName(QStringLiteral("uptime")); // tests find it
    m_uptimeTimer.setInterval(1000);
    connect(&m_uptimeTimer, &QTimer::timeout, this, &SandboxTableModel::refreshUptime);
}

void SandboxTableModel::setClient(HelperClient *client)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    if (!client)
        return;
    connect(client, &HelperClient::notificationReceived, this,
            &SandboxTableModel::handleNotification);
    connect(client, &HelperClient::ready, this, [this] {
        // Subscribe first: notifications sent before the list answer are older than the list
        // (one ordered connection), so the reset below cannot lose an update.
        m_client->call(QString::fromLatin1(protocol::method::EventsSubscribe), {},
                       [](const Result<QJsonValue> &) {});
        m_client->call(QString::fromLatin1(protocol::method::SandboxList), {},
                       [this](const Result<QJsonValue> &result) {
                           if (!result) {
                               Q_EMIT loadFailed(result.error().message);
                               return;
                           }
                           if (const auto reset = resetFromList(result->toObject()); !reset)
                               Q_EMIT loadFailed(reset.error().message);
                       });
    });
}

Result<void> SandboxTableModel::resetFromList(const QJsonObject &listResult)
{
    QList<Sandbox> sandboxes;
    const QJsonArray array = listResult.value(QStringLiteral("sandboxes")).toArray();
    for (const QJsonValue &value : array) {
        auto sandbox = Sandbox::fromJson(value.toObject());
        AIRLOCK_TRY(sandbox);
        sandboxes.append(*sandbox);
    }
    std::sort(sandboxes.begin(), sandboxes.end(),
              [](const Sandbox &a, const Sandbox &b) { return a.spec.name < b.spec.name; });
    beginResetModel();
    m_sandboxes = std::move(sandboxes);
    m_loaded = true;
    endResetModel();
    updateUptimeTimer();
    Q_EMIT loaded();
    return {};
}

void SandboxTableModel::handleNotification(const QString &method, const QJsonObject &params)
{
    if (method == QLatin1String(protocol::notification::SandboxChanged)) {
        auto sandbox = Sandbox::fromJson(params.value(QStringLiteral("sandbox")).toObject());
        if (!sandbox) {
            Q_EMIT loadFailed(sandbox.error().message);
            return;
        }
        upsert(*sandbox);
    } else if (method == QLatin1String(protocol::notification::SandboxRemoved)) {
        remove(params.value(QStringLiteral("name")).toString());
    }
}

void SandboxTableModel::upsert(const Sandbox &sandbox)
{
    const int row = rowOf(sandbox.spec.name);
    if (row >= 0) {
        if (m_sandboxes.at(row) == sandbox)
            return;
        m_sandboxes[row] = sandbox;
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    } else {
        const auto pos = std::lower_bound(
            m_sandboxes.cbegin(), m_sandboxes.cend(), sandbox.spec.name,
            [](const Sandbox &s, const QString &name) { return s.spec.name < name; });
        const int insertRow = int(pos - m_sandboxes.cbegin());
        beginInsertRows({}, insertRow, insertRow);
        m_sandboxes.insert(insertRow, sandbox);
        endInsertRows();
    }
    updateUptimeTimer();
}

void SandboxTableModel::remove(const QString &name)
{
    const int row = rowOf(name);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_sandboxes.removeAt(row);
    endRemoveRows();
    updateUptimeTimer();
}

void SandboxTableModel::clear()
{
    beginResetModel();
    m_sandboxes.clear();
    m_loaded = false;
    endResetModel();
    updateUptimeTimer();
}

void SandboxTableModel::setAlert(const QString &name, const QString &text, AlertKind kind)
{
    auto alerts = m_alerts.find(name);
    if (text.isEmpty()) {
        if (alerts == m_alerts.end() || alerts->remove(kind) == 0)
            return;
        if (alerts->isEmpty())
            m_alerts.erase(alerts);
    } else {
        if (alerts != m_alerts.end() && alerts->value(kind) == text)
            return;
        m_alerts[name].insert(kind, text);
    }
    const int row = rowOf(name);
    if (row >= 0)
        Q_EMIT dataChanged(index(row, NameColumn), index(row, NameColumn));
}

QString SandboxTableModel::alert(const QString &name, AlertKind kind) const
{
    return m_alerts.value(name).value(kind);
}

QString SandboxTableModel::badgeText(const QString &name) const
{
    QStringList lines = m_alerts.value(name).values();
    if (const Sandbox *sandbox = sandboxAt(rowOf(name)); sandbox)
        lines.append(identityWarningText(sandbox->identityWarning));
    lines.removeAll(QString());
    return lines.join(QLatin1Char('\n'));
}

int SandboxTableModel::rowOf(const QString &name) const
{
    for (int row = 0; row < m_sandboxes.size(); ++row) {
        if (m_sandboxes.at(row).spec.name == name)
            return row;
    }
    return -1;
}

const Sandbox *SandboxTableModel::sandboxAt(int row) const
{
    if (row < 0 || row >= m_sandboxes.size())
        return nullptr;
    return &m_sandboxes.at(row);
}

int SandboxTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_sandboxes.size());
}

int SandboxTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SandboxTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Sandbox &sandbox = m_sandboxes.at(index.row());
    switch (role) {
    case NameRole:
        return sandbox.spec.name;
    case StateRole:
        return int(sandbox.state);
    case AlertRole:
        return badgeText(sandbox.spec.name);
    case IdentityWarningRole:
        return sandbox.identityWarning;
    case Qt::DecorationRole:
        if (index.column() == NameColumn && !badgeText(sandbox.spec.name).isEmpty())
            return QIcon(QStringLiteral(":/icons/alert.svg"));
        return {};
    case Qt::DisplayRole:
    case Qt::AccessibleTextRole:
        switch (index.column()) {
        case NameColumn:
            if (const QString badge = badgeText(sandbox.spec.name);
                role == Qt::AccessibleTextRole && !badge.isEmpty())
                return tr("%1 (alert: %2)").arg(sandbox.spec.name, badge);
            return sandbox.spec.name;
        case StateColumn:
            return stateText(sandbox.state);
        case AccelerationColumn:
            return accelerationText(sandbox.acceleration);
        case VcpusColumn:
            return sandbox.spec.vcpus;
        case MemoryColumn:
            return tr("%1 MiB").arg(sandbox.spec.memoryMib);
        case UptimeColumn:
            if (sandbox.state != SandboxState::Running && sandbox.state != SandboxState::Paused)
                return QString();
            return formatUptime(sandbox.startedAt, QDateTime::currentDateTimeUtc());
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (const QString badge = badgeText(sandbox.spec.name);
            index.column() == NameColumn && !badge.isEmpty())
            return badge;
        if (index.column() == StateColumn && !sandbox.stateReason.isEmpty())
            return sandbox.stateReason;
        if (index.column() == StateColumn && sandbox.startedFrom != StartSource::None)
            return tr("%1, %2").arg(stateText(sandbox.state), startSourceText(sandbox.startedFrom));
        if (index.column() == AccelerationColumn && !sandbox.accelerationWarning.isEmpty())
            return sandbox.accelerationWarning;
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == VcpusColumn || index.column() == MemoryColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant SandboxTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Name");
    case StateColumn:
        return tr("State");
    case AccelerationColumn:
        return tr("Acceleration");
    case VcpusColumn:
        return tr("vCPUs");
    case MemoryColumn:
        return tr("Memory");
    case UptimeColumn:
        return tr("Uptime");
    default:
        return {};
    }
}

QString SandboxTableModel::formatUptime(const QDateTime &startedAt, const QDateTime &now)
{
    if (!startedAt.isValid())
        return {};
    const qint64 seconds = std::max<qint64>(0, startedAt.secsTo(now));
    const qint64 hours = seconds / 3600;
    const qint64 minutes = (seconds % 3600) / 60;
    const qint64 secs = seconds % 60;
    if (hours > 0)
        return tr("%1 h %2 min").arg(hours).arg(minutes, 2, 10, QLatin1Char('0'));
    if (minutes > 0)
        return tr("%1 min %2 s").arg(minutes).arg(secs, 2, 10, QLatin1Char('0'));
    return tr("%1 s").arg(secs);
}

QString SandboxTableModel::stateText(SandboxState state)
{
    switch (state) {
    case SandboxState::Stopped:
        return tr("Stopped");
    case SandboxState::Starting:
        return tr("Starting");
    case SandboxState::Running:
        return tr("Running");
    case SandboxState::Stopping:
        return tr("Stopping");
    case SandboxState::Paused:
        return tr("Paused");
    case SandboxState::Adopting:
        return tr("Adopting");
    }
    return {};
}

QString SandboxTableModel::vmmText(std::optional<VmmKind> vmm)
{
    if (!vmm)
        return {};
    switch (*vmm) {
    case VmmKind::Qemu:
        return tr("QEMU microvm");
    case VmmKind::Firecracker:
        return tr("Firecracker");
    }
    return {};
}

QString SandboxTableModel::accelerationText(Acceleration acceleration)
{
    switch (acceleration) {
    case Acceleration::Kvm:
        return tr("KVM");
    case Acceleration::Tcg:
        return tr("TCG (software)");
    case Acceleration::Unknown:
        break;
    }
    return tr("—");
}

QString SandboxTableModel::startSourceText(StartSource source)
{
    switch (source) {
    case StartSource::Boot:
        return tr("booted");
    case StartSource::Template:
        return tr("from template");
    case StartSource::Snapshot:
        return tr("from snapshot");
    case StartSource::None:
        break;
    }
    return {};
}

QString SandboxTableModel::identityWarningText(const QString &identityWarning)
{
    if (identityWarning.isEmpty())
        return {};
    return tr("The guest did not confirm its new identity, so its network may not work. "
              "Restart the sandbox (Stop, then Start). The helper says: %1")
        .arg(identityWarning);
}

void SandboxTableModel::refreshUptime()
{
    for (int row = 0; row < m_sandboxes.size(); ++row) {
        if (m_sandboxes.at(row).state == SandboxState::Running)
            Q_EMIT dataChanged(index(row, UptimeColumn), index(row, UptimeColumn),
                               {Qt::DisplayRole});
    }
}

void SandboxTableModel::updateUptimeTimer()
{
    const bool anyRunning =
        std::any_of(m_sandboxes.cbegin(), m_sandboxes.cend(),
                    [](const Sandbox &s) { return s.state == SandboxState::Running; });
    if (anyRunning && !m_uptimeTimer.isActive())
        m_uptimeTimer.start();
    else if (!anyRunning)
        m_uptimeTimer.stop();
}

} // namespace airlock
