#include "ui/bindingtablemodel.h"

#include "core/policy/policymatcher.h"
#include "ui/policytext.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>
#include <QLocale>

namespace airlock {

Result<CredentialBinding> bindingFromHelperJson(const QJsonObject &object)
{
    QJsonObject user;
    for (const char *key : {"sandbox", "secret", "host", "pathPrefix", "methods", "placement"}) {
        const QString name = QString::fromLatin1(key);
        if (object.contains(name))
            user.insert(name, object.value(name));
    }
    auto binding = CredentialBinding::fromJson(user);
    if (!binding)
        return binding;
    binding->id = object.value(QStringLiteral("id")).toInteger();
    binding->createdAt = QDateTime::fromString(object.value(QStringLiteral("createdAt")).toString(),
                                               Qt::ISODateWithMs);
    const QJsonObject stats = object.value(QStringLiteral("stats")).toObject();
    binding->stats.injections = quint64(stats.value(QStringLiteral("injections")).toInteger());
    binding->stats.denied = quint64(stats.value(QStringLiteral("denied")).toInteger());
    binding->stats.lastUsed = QDateTime::fromString(
        stats.value(QStringLiteral("lastUsed")).toString(), Qt::ISODateWithMs);
    return binding;
}

BindingTableModel::BindingTableModel(QObject *parent) : QAbstractTableModel(parent) { }

Result<void> BindingTableModel::resetFromList(const QJsonObject &listResult)
{
    const QJsonValue bindings = listResult.value(QStringLiteral("bindings"));
    if (!bindings.isArray())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'bindings' must be an array"));
    QList<CredentialBinding> rows;
    for (const QJsonValue &value : bindings.toArray()) {
        auto binding = bindingFromHelperJson(value.toObject());
        AIRLOCK_TRY(binding);
        rows.append(*binding);
    }
    std::sort(rows.begin(), rows.end(),
              [](const CredentialBinding &a, const CredentialBinding &b) { return a.id < b.id; });
    beginResetModel();
    m_rows = rows;
    endResetModel();
    return {};
}

void BindingTableModel::upsert(const CredentialBinding &binding)
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).id == binding.id) {
            m_rows[row] = binding;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
            return;
        }
    }
    const int row = int(m_rows.size());
    beginInsertRows({}, row, row);
    m_rows.append(binding);
    endInsertRows();
}

void BindingTableModel::remove(qint64 id)
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).id == id) {
            beginRemoveRows({}, row, row);
            m_rows.removeAt(row);
            endRemoveRows();
            return;
        }
    }
}

void BindingTableModel::setPolicy(const QString &sandbox, const EgressPolicy &policy)
{
    m_policies.insert(sandbox, policy);
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).sandbox == sandbox)
            Q_EMIT dataChanged(index(row, WarningColumn), index(row, WarningColumn));
    }
}

QStringList BindingTableModel::sandboxes() const
{
    QStringList names;
    for (const CredentialBinding &binding : m_rows) {
        if (!names.contains(binding.sandbox))
            names.append(binding.sandbox);
    }
    return names;
}

QString BindingTableModel::warning(const CredentialBinding &binding) const
{
    const auto policy = m_policies.constFind(binding.sandbox);
    if (policy == m_policies.constEnd())
        return {};
    auto matcher = policy::PolicyMatcher::create(*policy);
    if (!matcher)
        return {};
    const QStringList methods =
        binding.methods.isEmpty() ? QStringList {QStringLiteral("GET")} : binding.methods;
    const QString path = binding.pathPrefix.isEmpty() ? QStringLiteral("/") : binding.pathPrefix;
    for (const QString &method : methods) {
        const policy::Verdict verdict =
            matcher->checkRequest(binding.host, EgressRule::kDefaultPort, method, path);
        if (!verdict.allowed())
            return tr("The policy of %1 does not allow %2 %3%4 on port 443 (%5): the gateway "
                      "denies these requests before the secret is injected.")
                .arg(binding.sandbox, method, binding.host, path,
                     PolicyText::reasonText(verdict.reason));
    }
    return {};
}

const CredentialBinding *BindingTableModel::bindingById(qint64 id) const
{
    for (const CredentialBinding &binding : m_rows) {
        if (binding.id == id)
            return &binding;
    }
    return nullptr;
}

QString BindingTableModel::describe(qint64 id) const
{
    if (id <= 0)
        return tr("an unnamed binding");
    const CredentialBinding *binding = bindingById(id);
    if (!binding)
        return tr("binding %1").arg(id);
    return tr("binding %1 (secret “%2” for %3%4)")
        .arg(QString::number(id), binding->secret, binding->host, binding->pathPrefix);
}

QString BindingTableModel::placementText(const CredentialPlacement &placement)
{
    if (placement.kind == CredentialPlacement::Kind::Basic)
        return tr("Basic, user %1").arg(placement.username);
    return QStringLiteral("%1: %2").arg(placement.header, placement.valueTemplate);
}

int BindingTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int BindingTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BindingTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const CredentialBinding &binding = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SandboxColumn:
            return binding.sandbox;
        case SecretColumn:
            return binding.secret;
        case HostColumn:
            return binding.methods.isEmpty()
                ? binding.host
                : QStringLiteral("%1 (%2)").arg(binding.host, joinListCell(binding.methods));
        case PathColumn:
            return binding.pathPrefix.isEmpty() ? tr("any") : binding.pathPrefix;
        case TemplateColumn:
            return placementText(binding.placement);
        case InjectionsColumn:
            return qint64(binding.stats.injections);
        case LastUsedColumn:
            return binding.stats.lastUsed.isValid()
                ? QLocale().toString(binding.stats.lastUsed.toLocalTime(), QLocale::ShortFormat)
                : tr("never");
        case DeniedColumn:
            return qint64(binding.stats.denied);
        case WarningColumn: {
            const QString text = warning(binding);
            return text.isEmpty() ? QString() : text;
        }
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == WarningColumn)
            return warning(binding);
        if (index.column() == InjectionsColumn)
            return tr("Requests the gateway injected the secret into");
        if (index.column() == DeniedColumn)
            return binding.stats.denied == 0
                ? tr("No request misused this binding's placeholder")
                : tr("%n request(s) carried this binding's placeholder where the binding does "
                     "not allow it, or matched it while the gateway had no value: refused",
                     nullptr, int(binding.stats.denied));
        return {};
    case Qt::ForegroundRole:
        if (index.column() == WarningColumn)
            return QBrush(QColor(0xb3, 0x5c, 0x00));
        if (index.column() == DeniedColumn && binding.stats.denied > 0)
            return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == InjectionsColumn || index.column() == DeniedColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case IdRole:
        return binding.id;
    case WarningRole:
        return warning(binding);
    default:
        return {};
    }
}

QVariant BindingTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SandboxColumn:
        return tr("Sandbox");
    case SecretColumn:
        return tr("Secret");
    case HostColumn:
        return tr("Host");
    case PathColumn:
        return tr("Path prefix");
    case TemplateColumn:
        return tr("Header template");
    case InjectionsColumn:
        return tr("Injections");
    case LastUsedColumn:
        return tr("Last use");
    case DeniedColumn:
        return tr("Denied");
    case WarningColumn:
        return tr("Warning");
    default:
        return {};
    }
}

} // namespace airlock
