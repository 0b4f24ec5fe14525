#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"

#include <QJsonObject>
#include <QString>

#include <memory>

namespace airlock {

/// What airlockd's command line decided (app/airlockd/main.cpp parses and validates it).
struct HelperDaemonConfig
{
    QString socketPath; ///< Unix socket to listen on, unless systemd passed one (socket activation)
    QString stateDir; ///< absolute: registry, runtime dirs, vault, snapshots, logs, audit
    QString imageDir; ///< absolute: guest images (ImageStore)
    qint64 scrollbackBytes = 0; ///< console scrollback per sandbox
    QString logLevel; ///< isValidLogLevel()
    QString gatewayProgram; ///< absolute path of airlock-gateway
    QString fcctlProgram; ///< absolute path of airlock-fcctl (Firecracker's API client)
    QString addressPool; ///< CIDR accepted by AddressPool::create
    QJsonObject upstreamDns; ///< upstreamdns::fromText() of the chosen resolver, never empty
    QString
        trustStoreCaFile; ///< PEM CAs for upstream TLS instead of the system store; empty: system
    bool automaticTemplates = true; ///< --templates auto|off
    int templatesMax = 4; ///< --templates-max, 1..64
    bool benchPort = false; ///< --bench-port (SandboxServiceConfig::benchPort)
    /// --vmm qemu|firecracker|auto: the backend of sandboxes that name none. auto: firecracker
    /// when its binary is found and KVM works, else qemu.
    QString vmm = QStringLiteral("qemu");
    QString firecrackerBinary; ///< --firecracker PATH; empty: $AIRLOCK_FIRECRACKER, then PATH
    /// --firecracker-without-kvm: Firecracker is offered although the KVM probe failed, and
    /// FirecrackerVmm does not refuse a host without KVM (the conformance tests' fake needs
    /// none; a real Firecracker fails to open /dev/kvm and its start fails with that).
    bool firecrackerWithoutKvm = false;
};

/// airlockd's composition root: makes the host accounts, probes KVM, opens the registry, vault
/// and snapshot store, builds the services and RPC APIs in dependency order, re-adopts running
/// guests, and listens. Owns every object for the helper's lifetime and destroys them in
/// reverse order; running guests survive it (the next helper re-adopts them).
class HelperDaemon
{
public:
    HelperDaemon();
    ~HelperDaemon();
    HelperDaemon(const HelperDaemon &) = delete;
    HelperDaemon &operator=(const HelperDaemon &) = delete;

    /// Takes the state dir (created if missing, locked against a second helper) and installs
    /// logging there. Errors: Busy when another helper holds the state dir, OperationFailed when
    /// it cannot be created or locked; nothing is logged yet, so the caller reports them.
    Result<void> prepare(const HelperDaemonConfig &config);
    /// After prepare(): brings the helper up; it serves from the caller's event loop once this
    /// returns. Needs root. OperationFailed (or the failing part's kind) for accounts,
    /// registry, store, re-adoption or socket failures, the message saying which.
    Result<void> start(const HelperDaemonConfig &config);
    /// Stops listening; in-flight replies are dropped, guests keep running.
    void close();

private:
    struct Parts;
    std::unique_ptr<Parts> m_parts;
};

} // namespace airlock
