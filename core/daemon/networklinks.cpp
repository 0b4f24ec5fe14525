#include "core/daemon/networklinks.h"

#include "core/daemon/egressrecorder.h"
#include "core/daemon/vmmuidallocator.h"
#include "core/model/answerlater.h"
#include "core/net/interfacenetworks.h"
#include "core/net/tapdevice.h"
#include "core/vmm/vmm.h"

#include <QLoggingCategory>
#include <QPointer>
#include <QSet>

namespace airlock {

Q_LOGGING_CATEGORY(lcLinks, "airlock.network")

NetworkLinks::NetworkLinks(SandboxNetworkConfig config, const VmmUidAllocator &uids,
                           QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_uids(uids)
{ }

Result<void> NetworkLinks::createPool(const QString &pool)
{
    AIRLOCK_TRY_INIT(created, AddressPool::create(pool));
    m_pool = std::move(*created);
    return {};
}

SandboxNetwork *NetworkLinks::make(const QString &name, const LinkAllocation &link, uid_t vmmUid,
                                   const EgressPolicy &policy)
{
    auto *network = new SandboxNetwork(m_config, name, link, vmmUid, m_uids.gatewayUidFor(vmmUid),
                                       policy, this);
    network->setCredentialSource([this, name] {
        return m_credentialSource ? m_credentialSource(name) : QList<GatewayCredentialGrant>();
    });
    connect(network, &SandboxNetwork::egress, this,
            [this, name](const QJsonObject &event) { Q_EMIT egress(name, event); });
    connect(network, &SandboxNetwork::gatewayRestarted, this,
            [this, name](const QString &reason, int attempt) {
                Q_EMIT egress(name, EgressRecorder::gatewayRestartedEvent(name, reason, attempt));
            });
    return network;
}

Result<LinkAllocation> NetworkLinks::allocateUnused()
{
    // This helper's own taps are skipped only while they may belong to a guest the pool does not
    // know yet (one still being adopted after a restart). A tap of its own that is down is being
    // made on a worker, for a link the pool holds, and shows the classful /8 for a moment
    // (SIOCSIFADDR comes before SIOCSIFNETMASK): taken at its word, every link would look used.
    QList<InterfaceNetwork> inUse = InterfaceNetworks::ipv4();
    inUse.removeIf([this](const InterfaceNetwork &network) {
        if (!TapDevice::belongsTo(network.interface, m_config.instance))
            return false;
        const std::optional<quint32> index = m_pool->indexOf(network.address);
        return !network.up || (index && m_pool->isAllocated(*index));
    });
    QList<quint32> skipped;
    Result<LinkAllocation> link = m_pool->allocate();
    QSet<QString> reported; // one line per interface: a /8 covers the whole default pool
    while (link) {
        const InterfaceNetwork *taken =
            InterfaceNetworks::overlapping(inUse, link->network, link->prefixLength);
        if (!taken)
            break;
        if (!reported.contains(taken->interface)) {
            reported.insert(taken->interface);
            qCWarning(lcLinks,
                      "link %s/%d is in use on interface %s (%s/%d): another airlockd on this "
                      "host, or the host's own network; skipping it and the other links it "
                      "covers (give each helper its own --address-pool)",
                      qPrintable(link->network.toString()), link->prefixLength,
                      qPrintable(taken->interface), qPrintable(taken->address.toString()),
                      taken->prefixLength);
        }
        skipped.append(link->index);
        link = m_pool->allocate();
    }
    // Not kept: the other user may let go of them, and they are checked again next time.
    for (const quint32 index : std::as_const(skipped))
        m_pool->release(index);
    if (!link && !skipped.isEmpty())
        return fail(link.error().kind,
                    QStringLiteral("%1; %2 of its links are in use on this host's interfaces "
                                   "(another airlockd?): start this one with another "
                                   "--address-pool")
                        .arg(link.error().message)
                        .arg(skipped.size()));
    return link;
}

SandboxNetwork *NetworkLinks::bringUp(const QString &name, uid_t vmmUid, const EgressPolicy &policy,
                                      Brought done)
{
    auto link = allocateUnused();
    if (!link) {
        answerLater(this, std::move(done), Result<SandboxNetwork *>(std::unexpected(link.error())));
        return nullptr;
    }
    SandboxNetwork *network = make(name, *link, vmmUid, policy);
    up(network, /*adopt=*/false, std::move(done));
    return network;
}

void NetworkLinks::restore(const QString &name, qint64 linkIndex, uid_t vmmUid,
                           const EgressPolicy &policy, Brought done)
{
    auto link = linkIndex >= 0 && linkIndex < qint64(m_pool->capacity())
        ? m_pool->reserve(quint32(linkIndex))
        : Result<LinkAllocation>(
            fail(ErrorKind::NotFound, QStringLiteral("no network link was recorded")));
    if (!link) {
        answerLater(this, std::move(done), Result<SandboxNetwork *>(std::unexpected(link.error())));
        return;
    }
    up(make(name, *link, vmmUid, policy), /*adopt=*/true, std::move(done));
}

void NetworkLinks::up(SandboxNetwork *network, bool adopt, Brought done)
{
    const quint32 index = network->link().index;
    network->up(adopt, [this, network, index, done = std::move(done)](const Result<void> &up) {
        if (!up) {
            network->deleteLater();
            releaseLinkOf(network, index);
            return done(std::unexpected(up.error()));
        }
        done(network);
    });
}

void NetworkLinks::release(SandboxNetwork *network, Vmm *vmmStillRunning,
                           std::function<bool()> superseded)
{
    if (!network)
        return;
    const quint32 index = network->link().index;
    auto teardown = [this, network, index, superseded = std::move(superseded)] {
        network->down(superseded && superseded());
        network->deleteLater();
        releaseLinkOf(network, index);
    };
    // The table stays until the VMM is really gone.
    if (vmmStillRunning)
        connect(vmmStillRunning, &Vmm::exited, network, teardown);
    else
        teardown();
}

void NetworkLinks::releaseLinkOf(SandboxNetwork *network, quint32 index)
{
    // The gateway's listeners hold the link's address and ports until its process is gone; a
    // network given the link earlier would fail to bind them.
    network->whenGatewaysGone([links = QPointer<NetworkLinks>(this), index] {
        if (links && links->m_pool)
            links->m_pool->release(index);
    });
}

} // namespace airlock
