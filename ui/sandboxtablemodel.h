#pragma once

#include "core/model/sandbox.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QMap>
#include <QPointer>
#include <QTimer>

namespace airlock {

class HelperClient;

/// The sandboxes of one helper as a table (name, state, acceleration, vCPUs, memory, uptime).
/// Filled once from `sandbox.list`, then kept current by `sandbox.changed`/`sandbox.removed`
/// notifications; nothing is polled. A 1 s timer only re-renders the uptime text.
///
/// The name carries a warning badge (icon, tooltip, accessible text) while the sandbox has an
/// alert set by the window (probing, a credential sent where it may not go) or the helper
/// reports an `identityWarning` (docs/protocol.md: a guest started from a template or snapshot
/// did not confirm its new identity, so its network may not work).
class SandboxTableModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        StateColumn,
        AccelerationColumn,
        VcpusColumn,
        MemoryColumn,
        UptimeColumn,
        ColumnCount
    };
    enum Role {
        NameRole = Qt::UserRole + 1, ///< QString: the sandbox name
        StateRole, ///< int: SandboxState
        /// QString: everything the badge says (alerts, then the identity warning in words),
        /// one per line; empty when there is no badge
        AlertRole,
        IdentityWarningRole, ///< QString: the helper's `identityWarning`, empty when none
    };
    /// The window's alerts on a sandbox, shown together in the badge.
    enum class AlertKind {
        Probing, ///< denied often within a minute (ProbingMonitor)
        Credential, ///< an egress event with `alert: true` (credential_exfil, scrubbed response)
    };

    explicit SandboxTableModel(QObject *parent = nullptr);

    /// Follows `client`: on every ready() it subscribes to events and reloads the list, so a
    /// helper restart is picked up without polling.
    void setClient(HelperClient *client);

    /// Replaces all rows with the `sandbox.list` result (`{sandboxes: [...]}`).
    Result<void> resetFromList(const QJsonObject &listResult);
    /// Applies one helper notification; other methods are ignored.
    void handleNotification(const QString &method, const QJsonObject &params);
    /// Inserts or updates one sandbox, keeping rows ordered by name.
    void upsert(const Sandbox &sandbox);
    void remove(const QString &name);
    void clear();
    /// Shows a badge (warning icon, tooltip `text`) on the sandbox's name; empty clears that
    /// kind. Kept across list reloads.
    void setAlert(const QString &name, const QString &text, AlertKind kind = AlertKind::Probing);
    QString alert(const QString &name, AlertKind kind = AlertKind::Probing) const;
    /// Everything the badge of `name` says (AlertRole); empty when it has none.
    QString badgeText(const QString &name) const;

    /// Row of `name`, or -1.
    int rowOf(const QString &name) const;
    /// The sandbox in `row`; nullptr outside the table.
    const Sandbox *sandboxAt(int row) const;
    /// True once the first list arrived (since the last clear()).
    bool isLoaded() const { return m_loaded; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// "1 h 02 min", "3 min 07 s", "42 s"; empty for an invalid start.
    static QString formatUptime(const QDateTime &startedAt, const QDateTime &now);
    /// Translated state name, e.g. "Running".
    static QString stateText(SandboxState state);
    /// Translated acceleration, e.g. "TCG (software)".
    static QString accelerationText(Acceleration acceleration);
    /// "QEMU microvm", "Firecracker"; empty for a sandbox whose helper does not say.
    static QString vmmText(std::optional<VmmKind> vmm);
    /// Where a running guest's state came from: "booted", "from template", "from snapshot";
    /// empty for StartSource::None.
    static QString startSourceText(StartSource source);
    /// The identity warning in words with what to do (restart the sandbox), then the
    /// helper's own text; empty when `identityWarning` is empty.
    static QString identityWarningText(const QString &identityWarning);

Q_SIGNALS:
    /// The first list after a (re)connection arrived.
    void loaded();
    /// A list or notification could not be read; the message is for a status bar or log.
    void loadFailed(const QString &message);

private:
    void refreshUptime();
    void updateUptimeTimer();

    QList<Sandbox> m_sandboxes; // ordered by name
    QHash<QString, QMap<AlertKind, QString>> m_alerts; // sandbox -> kind -> alert text
    QPointer<HelperClient> m_client;
    QTimer m_uptimeTimer;
    bool m_loaded = false;
};

} // namespace airlock
