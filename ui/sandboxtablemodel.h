#pragma once

#include "core/model/sandbox.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QPointer>
#include <QTimer>

namespace airlock {

class HelperClient;

/// The sandboxes of one helper as a table (name, state, acceleration, vCPUs, memory, uptime).
/// Filled once from `sandbox.list`, then kept current by `sandbox.changed`/`sandbox.removed`
/// notifications; nothing is polled. A 1 s timer only re-renders the uptime text.
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
        AlertRole, ///< QString: the alert shown as a badge (e.g. probing), empty when none
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
    /// Shows a badge (warning icon, tooltip `text`) on the sandbox's name; empty clears it.
    /// Kept across list reloads.
    void setAlert(const QString &name, const QString &text);
    QString alert(const QString &name) const { return m_alerts.value(name); }

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

Q_SIGNALS:
    /// The first list after a (re)connection arrived.
    void loaded();
    /// A list or notification could not be read; the message is for a status bar or log.
    void loadFailed(const QString &message);

private:
    void refreshUptime();
    void updateUptimeTimer();

    QList<Sandbox> m_sandboxes; // ordered by name
    QHash<QString, QString> m_alerts; // sandbox -> alert text
    QPointer<HelperClient> m_client;
    QTimer m_uptimeTimer;
    bool m_loaded = false;
};

} // namespace airlock
