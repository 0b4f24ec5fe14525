#pragma once

#include "core/model/credentialbinding.h"
#include "core/model/egresspolicy.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

namespace airlock {

/// Credential bindings as `binding.list` reports them: Sandbox, Secret, Host, Path prefix,
/// Header template, the helper's counters (Injections, Last use, Denied: requests that carried
/// the placeholder where the binding does not allow it, `credential_exfil`, or that matched but
/// got no value, `credential_unavailable`; docs/credentials.md "Counters") and a Warning column.
/// The warning says when the sandbox's policy does not allow the binding's host on https/443 (or
/// its path and methods): the gateway would deny such requests before injecting, so the binding can
/// never be used. Policies are judged with the gateway's own PolicyMatcher.
class BindingTableModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        SandboxColumn,
        SecretColumn,
        HostColumn,
        PathColumn,
        TemplateColumn,
        InjectionsColumn,
        LastUsedColumn,
        DeniedColumn,
        WarningColumn,
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64
        WarningRole, ///< QString, empty when the policy allows the binding
    };

    explicit BindingTableModel(QObject *parent = nullptr);

    /// Replaces the rows with a `binding.list` result ({bindings: [Binding]}).
    Result<void> resetFromList(const QJsonObject &listResult);
    void upsert(const CredentialBinding &binding);
    void remove(qint64 id);
    /// The applied policy of `sandbox`, for the warnings.
    void setPolicy(const QString &sandbox, const EgressPolicy &policy);
    QStringList sandboxes() const;
    const CredentialBinding &bindingAt(int row) const { return m_rows.at(row); }
    /// The binding with helper id `id`, or nullptr.
    const CredentialBinding *bindingById(qint64 id) const;
    /// How alerts name a binding: "binding 3 (secret “api-token” for api.test/v1)", or
    /// "binding 3" while it is not (or no longer) listed, "an unnamed binding" for id -1.
    /// Never a value or a placeholder.
    QString describe(qint64 id) const;
    /// Why the policy of the binding's sandbox would block it, or empty (also while the policy
    /// is not known yet).
    QString warning(const CredentialBinding &binding) const;
    /// "Authorization: Bearer {secret}" or "Basic, user ci-bot".
    static QString placementText(const CredentialPlacement &placement);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<CredentialBinding> m_rows; // ordered by id
    QHash<QString, EgressPolicy> m_policies;
};

/// Reads a Binding object of binding.list / binding.add (fromJson reads only the user's part).
Result<CredentialBinding> bindingFromHelperJson(const QJsonObject &object);

} // namespace airlock
