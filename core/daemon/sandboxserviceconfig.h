#pragma once

#include "core/daemon/registry.h"
#include "core/daemon/sandboxnetwork.h"
#include "core/model/sandbox.h"
#include "core/net/addresspool.h"

#include <QString>

#include <sys/types.h>

#include <vector>

namespace airlock {

/// Host facts the service needs that main() determines once at start-up.
struct SandboxServiceConfig
{
    QString stateDir; ///< runtime dirs go to STATE/run/<name>
    Acceleration acceleration = Acceleration::Tcg; ///< chosen by KvmProbe at helper start
    QString accelerationWarning; ///< why not KVM; empty when KVM
    uid_t vmmUid = 0; ///< the `airlock-vmm` user (the KVM probe's identity)
    gid_t vmmGid = 0; ///< group of every VMM
    std::vector<gid_t> vmmGroups; ///< supplementary groups of every VMM (`kvm`)
    /// Each running VMM gets its own uid, vmmUidBase + a slot, so that a guest that escapes
    /// into its QEMU cannot signal another sandbox's QEMU or open its sockets. 0: every VMM
    /// runs as vmmUid (tests without root).
    uid_t vmmUidBase = 0;
    static constexpr uid_t kDefaultVmmUidBase = 0x7ffe0000; ///< above systemd's container range
    static constexpr int kVmmUidSlots = 65536;
    /// Each gateway runs as gatewayUidBase + its VMM's slot (group `airlock-gateway`), a range
    /// of its own. 0: the gateway runs as its VMM's uid (only without vmmUidBase).
    uid_t gatewayUidBase = 0;
    static constexpr uid_t kDefaultGatewayUidBase = 0x7ffd0000;
    /// The pool sandbox links are cut from (AddressPool::create).
    QString addressPool = AddressPool::DefaultPool.toString();
    /// Gateway program, listener ports, upstream resolver and trust store.
    SandboxNetworkConfig network;
    /// Egress events kept per sandbox for egress.history.
    int egressHistory = Registry::kDefaultEgressHistory;
    /// Where guest RAM files live (docs/snapshots.md): a root-owned directory on tmpfs. Empty:
    /// /dev/shm/airlock-<hash of stateDir>, so helpers with different state dirs never meet.
    QString memoryDir;
    /// How long a guest started from a snapshot or template has to confirm its new identity
    /// through the guest agent (GuestAgent::refresh).
    int agentTimeoutMs = 10000;
    /// How often every running sandbox's nftables table is compared with what was loaded
    /// (SandboxNetwork::verifyTable): one that is gone or changed is loaded again at once, and
    /// a guest whose table cannot be restored is killed (docs/network.md). 0: never.
    int tableCheckIntervalMs = 1000;
    /// Every VMM gets the benchmark's raw port (VmmLaunchConfig::benchPort; `airlockd
    /// --bench-port`). Templates are kept apart from those without it (another device layout).
    bool benchPort = false;
    /// The backend of a sandbox whose `sandbox.create` names none (`airlockd --vmm`).
    VmmKind defaultVmm = VmmKind::Qemu;
    /// Why Firecracker cannot run sandboxes here (no binary, no KVM); empty when it can. Its
    /// sandboxes are then refused with BackendUnavailable and this sentence.
    QString firecrackerUnavailable = QStringLiteral("this airlockd has no Firecracker backend");
    /// The firecracker binary (FirecrackerVmm::findFirecracker), reported in `hello`.
    QString firecrackerBinary;
};

} // namespace airlock
