#pragma once

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
/// (SandboxNetwork::verifyTable), every interval and on check(). docs/architecture.md: a VM
/// never runs without its table, so whoever removed or edited one (another helper's cleanup, an
/// administrator's `nft flush ruleset`), it is loaded again at once; a guest whose table cannot
/// be restored must go (lost()).
class TableWatch : public QObject
{
    Q_OBJECT
public:
    /// The networks to check, by sandbox name: those of running or paused guests.
    using Networks = std::function<std::vector<std::pair<QString, SandboxNetwork *>>()>;

    TableWatch(QString instance, Networks networks, QObject *parent = nullptr);

    /// Checks every `intervalMs` from now on; 0: never.
    void start(int intervalMs);
    /// One pass now.
    void check();

Q_SIGNALS:
    /// `name`'s table was not as loaded and has been loaded again; `event` is the egress event
    /// (firewall_restored) that says so.
    void restored(const QString &name, const QJsonObject &event);
    /// `name`'s table was not as loaded and could not be loaded again: its guest must be
    /// killed for `reason`; `event` is the egress event (firewall_lost).
    void lost(const QString &name, const QString &reason, const QJsonObject &event);

private:
    QString m_instance;
    Networks m_networks;
    QTimer m_timer;
};

} // namespace airlock
