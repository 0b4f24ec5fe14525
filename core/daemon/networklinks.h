#pragma once

#include "core/daemon/sandboxnetwork.h"
#include "core/model/error.h"
#include "core/net/addresspool.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace airlock {

class Vmm;
class VmmUidAllocator;

/// The sandboxes' networks and the address pool their links are cut from: brings a
/// SandboxNetwork up on a fresh link (a start) or on its recorded one (a re-adopted guest),
/// wires its gateway's reports to egress(), and tears it down again, returning the link.
class NetworkLinks : public QObject
{
    Q_OBJECT
public:
    /// Where a sandbox's gateway gets its credentials (SandboxService::CredentialSource).
    using CredentialSource = std::function<QList<GatewayCredentialGrant>(const QString &name)>;

    NetworkLinks(SandboxNetworkConfig config, const VmmUidAllocator &uids,
                 QObject *parent = nullptr);

    /// Makes the pool (AddressPool::create); call once before anything else.
    Result<void> createPool(const QString &pool);
    bool hasPool() const { return m_pool.has_value(); }
    void setCredentialSource(CredentialSource source) { m_credentialSource = std::move(source); }

    /// Called once (from the event loop) with the network that is up, or the error.
    using Brought = std::function<void(const Result<SandboxNetwork *> &)>;
    /// A network for `name`'s VMM running as `vmmUid`, up on a new link (tap, CA, gateway,
    /// table), handed to `done`. Owned by this object until released. Returns it while it comes
    /// up (a policy set on it meanwhile is in force when `done` runs; it is deleted if that
    /// fails), or nullptr when no link is free (`done` gets the error).
    SandboxNetwork *bringUp(const QString &name, uid_t vmmUid, const EgressPolicy &policy,
                            Brought done);
    /// The network of a re-adopted guest, up again on its recorded link `linkIndex` (the
    /// existing tap adopted, the table loaded, a new gateway).
    void restore(const QString &name, qint64 linkIndex, uid_t vmmUid, const EgressPolicy &policy,
                 Brought done);
    /// Takes `network` down and returns its link: now, or once `vmmStillRunning` exited. A
    /// deferred teardown asks `superseded` whether the sandbox runs again meanwhile with a newer
    /// network of the same names (table, tap, pid file), which are then not this one's.
    void release(SandboxNetwork *network, Vmm *vmmStillRunning = nullptr,
                 std::function<bool()> superseded = {});

Q_SIGNALS:
    /// An egress event (a gateway's decision, or the notice that it was restarted) of `name`.
    void egress(const QString &name, const QJsonObject &event);

private:
    /// Gives `index` back to the pool once `network`'s gateways are gone.
    void releaseLinkOf(SandboxNetwork *network, quint32 index);
    /// The lowest free link of the pool that no interface of this namespace overlaps (another
    /// helper's taps, the host's own networks). Errors: Busy when none is left, naming
    /// --address-pool when links were skipped.
    Result<LinkAllocation> allocateUnused();
    /// Brings `network` up; on error deletes it and returns its link.
    void up(SandboxNetwork *network, bool adopt, Brought done);
    SandboxNetwork *make(const QString &name, const LinkAllocation &link, uid_t vmmUid,
                         const EgressPolicy &policy);

    SandboxNetworkConfig m_config;
    const VmmUidAllocator &m_uids;
    std::optional<AddressPool> m_pool;
    CredentialSource m_credentialSource;
};

} // namespace airlock
