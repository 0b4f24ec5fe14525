#pragma once

#include "core/model/error.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/seedimage.h"

#include <QList>
#include <QString>

#include <functional>

namespace airlock {

struct LinkAllocation;

/// Tells a guest that did not boot (a template start, a restore, a fork) who it is now: its
/// hostname, addresses, seed files and fresh entropy, through its guest agent
/// (GuestAgent::refresh). The answer comes from the event loop: a guest that takes its time
/// (or never answers) does not hold up the helper's other clients.
class IdentityRefresh
{
public:
    using Done = std::function<void(const Result<void> &)>;

    /// The identity of sandbox `name` on `link` (nullptr: a guest without network) with the
    /// seed `files` (SandboxService::seedFiles), and 64 fresh random bytes: the guest's RNG state
    /// is otherwise a copy of the snapshot's, shared with every other guest started from it.
    static GuestIdentity identityFor(const QString &name, const LinkAllocation *link,
                                     const QList<SeedFile> &files);
    /// Sends `identity` through `agent` (nullptr: fails at once, the VMM has no agent channel)
    /// and calls `done` with the guest's answer, after at most `timeoutMs`.
    static void send(GuestAgent *agent, const GuestIdentity &identity, int timeoutMs, Done done);
    /// Sandbox::identityWarning of a guest whose refresh failed with `error`.
    static QString warningFor(const Error &error);
};

} // namespace airlock
