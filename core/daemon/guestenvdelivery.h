#pragma once

#include "core/daemon/agentapi.h"
#include "core/vmm/seedimage.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <functional>

namespace airlock {

/// Rewrites a running guest's `/run/airlock/env` (the placeholders of its credential bindings,
/// docs/credentials.md) through its agent when its bindings change, so a binding added while
/// the guest runs reaches new commands without a restart. The content is the seed's `env` file
/// (SandboxService::seedFiles, the one list of what a guest gets). A guest without a connected
/// agent gets the file at its next start; deliveries of one sandbox never overlap (a change
/// during a write is written again after it), so the last change wins.
class GuestEnvDelivery : public QObject
{
    Q_OBJECT
public:
    /// The sandbox's seed files, or why not (not running, no network).
    using SeedFiles = std::function<Result<QList<SeedFile>>(const QString &sandbox)>;
    /// Path of the file inside the guest.
    static constexpr const char *kGuestPath = "/run/airlock/env";

    GuestEnvDelivery(AgentApi::ClientLookup agents, SeedFiles seedFiles, QObject *parent = nullptr);

    /// Starts writing `sandbox`'s env file into its guest; returns at once. delivered() or
    /// failed() follows from the event loop (nothing when the sandbox does not run).
    void deliver(const QString &sandbox);

Q_SIGNALS:
    /// The guest's file holds the bindings as they were when the write began.
    void delivered(const QString &sandbox);
    /// The file could not be written (no agent, the guest refused); it comes with the next
    /// start. `reason` is an English sentence.
    void failed(const QString &sandbox, const QString &reason);

private:
    void write(const QString &sandbox);
    void written(const QString &sandbox, const QString &error);

    AgentApi::ClientLookup m_agents;
    SeedFiles m_seedFiles;
    /// Sandboxes with a write under way, and whether they changed again meanwhile.
    QHash<QString, bool> m_writing;
};

} // namespace airlock
