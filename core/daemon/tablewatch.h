#pragma once

#include "core/daemon/workerjobs.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <utility>
#include <vector>

namespace airlock {

class SandboxNetwork;

/// Compares every running sandbox's nftables table with what was loaded
/// (SandboxNetwork::verifyTable), every interval and on check(). The ruleset is listed on a
/// worker (with 50 guests, a listing costs tens of ms), the comparison made here.
/// docs/architecture.md: a VM never runs without its table, so whoever removed or edited one
/// (another helper's cleanup, an administrator's `nft flush ruleset`), it is loaded again at once;
/// a guest whose table cannot be restored must go (lost()).
class TableWatch : public QObject
{
    Q_OBJECT
public:
    /// The networks to check, by sandbox name: those of running or paused guests.
    using Networks = std::function<std::vector<std::pair<QString, SandboxNetwork *>>()>;

    TableWatch(QString instance, Networks networks, QObject *parent = nullptr);

    /// Checks every `intervalMs` from now on; 0: never.
    void start(int intervalMs);
    /// Starts one pass now; nothing while one is under way.
    void check();

Q_SIGNALS:
    /// `name`'s table was not as loaded and has been loaded again; `event` is the egress event
    /// (firewall_restored) that says so.
    void restored(const QString &name, const QJsonObject &event);
    /// `name`'s table was not as loaded and could not be loaded again: its guest must be
    /// killed for `reason`; `event` is the egress event (firewall_lost).
    void lost(const QString &name, const QString &reason, const QJsonObject &event);

private:
    /// Compares with `current` the networks whose table was not loaded again since `listed`
    /// (their table generation when the listing began) was taken.
    void compare(const QHash<QString, quint64> &listed,
                 const Result<QHash<QString, QByteArray>> &current);

    QString m_instance;
    Networks m_networks;
    QTimer m_timer;
    bool m_checking = false;
    WorkerJobs m_jobs; ///< last: waits for a listing under way first
};

} // namespace airlock
