#include "core/daemon/tablewatch.h"

#include "core/daemon/sandboxnetwork.h"
#include "core/model/egressevent.h"
#include "core/net/nftablestable.h"

#include <QLoggingCategory>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcTables, "airlock.daemon.sandbox")
}

TableWatch::TableWatch(QString instance, Networks networks, QObject *parent)
    : QObject(parent), m_instance(std::move(instance)), m_networks(std::move(networks))
{
    connect(&m_timer, &QTimer::timeout, this, &TableWatch::check);
}

void TableWatch::start(int intervalMs)
{
    if (intervalMs > 0)
        m_timer.start(intervalMs);
    else
        m_timer.stop();
}

void TableWatch::check()
{
    const auto networks = m_networks();
    if (networks.empty() || m_checking)
        return;
    QHash<QString, quint64> listed;
    for (const auto &[name, network] : networks)
        listed.insert(name, network->tableGeneration());
    m_checking = true;
    // One listing for all tables: one per table cost O(tables) each, so O(n^2) a pass.
    m_jobs.run<Result<QHash<QString, QByteArray>>>(
        [instance = m_instance] { return NftablesTable::fingerprints(instance); },
        [this, listed](const Result<QHash<QString, QByteArray>> &current) {
            m_checking = false;
            compare(listed, current);
        });
}

void TableWatch::compare(const QHash<QString, quint64> &listed,
                         const Result<QHash<QString, QByteArray>> &current)
{
    // Taken first: a kill on lost() releases that sandbox's network, never another's.
    for (const auto &[name, network] : m_networks()) {
        // Started or reloaded since: the listing may predate its table.
        if (listed.value(name, ~quint64(0)) != network->tableGeneration())
            continue;
        const auto intact = network->verifyTable(current);
        if (intact)
            continue;
        const QString table = NftablesTable::tableName(name, m_instance);
        qCWarning(lcTables, "%s: its nftables table is not as loaded (%s); loading it again",
                  qPrintable(name), qPrintable(intact.error().message));
        EgressEvent event;
        event.time = QDateTime::currentDateTimeUtc();
        event.sandbox = name;
        event.layer = EgressLayer::Tcp;
        event.allowed = false;
        if (auto reloaded = network->reloadTable(); reloaded) {
            event.reason = wireName(EgressReason::FirewallRestored);
            event.detail = QStringLiteral("%1; the table %2 was loaded again. Until then the "
                                          "guest's traffic may have gone unfiltered")
                               .arg(intact.error().message, table);
            Q_EMIT restored(name, event.toJson());
        } else {
            const QString reason =
                QStringLiteral("its nftables table %1 was removed or changed (%2) and could not "
                               "be loaded again (%3); the VMM was killed")
                    .arg(table, intact.error().message, reloaded.error().message);
            qCWarning(lcTables, "%s: %s", qPrintable(name), qPrintable(reason));
            event.reason = wireName(EgressReason::FirewallLost);
            event.detail = reason;
            Q_EMIT lost(name, reason, event.toJson());
        }
    }
}

} // namespace airlock
