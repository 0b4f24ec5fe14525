#pragma once

#include "core/model/sandbox.h"

#include <QSet>
#include <QString>

namespace airlock {

class GuestMemory;
class RuntimeDirectory;
class SandboxDisks;
class Vmm;

/// What a helper that died (or was killed) left behind, found and removed when the next one
/// starts (SandboxService::restore): VMMs it never recorded, its internal guests, taps, tables
/// and disk files no sandbox owns. Only this helper's (its instance tag): another helper in the
/// same namespace keeps its own (docs/reviews/2026-12-01-newuser-pass.md#h1).
class CrashRecovery
{
public:
    CrashRecovery(QString stateDir, QString instance, const RuntimeDirectory &runtime,
                  const GuestMemory &memory, const SandboxDisks &disks);

    /// Kills a VMM that still runs for a sandbox recorded as stopped: a helper killed while a
    /// VMM was starting never recorded its pid. With `wait`, returns once the process is gone
    /// (at most 2 s; its tap is then free for removal).
    void killOrphanVmm(const QString &name, bool wait = false) const;
    /// Kills and removes what a crashed helper's internal guests (names starting with
    /// `prefix`) left: gateways, VMMs, runtime dirs, CAs, RAM files. They are never in the
    /// registry. Their taps and tables go in removeLeftovers().
    void removeInternalLeftovers(const QString &prefix) const;
    /// Removes the nftables table and the tap `tap` of one sandbox whose VMM vanished while no
    /// helper watched (found during the background adoption, after removeLeftovers() kept them
    /// for it). Failures are logged.
    void removeLeftoversOf(const QString &sandbox, const QString &tap) const;
    /// Disk files of sandboxes not in `sandboxes`, and the tables and taps of this helper
    /// that are not in `tables` (sandbox names) and `taps` (interface names).
    void removeLeftovers(const QSet<QString> &sandboxes, const QSet<QString> &tables,
                         const QSet<QString> &taps) const;

private:
    QString m_stateDir;
    QString m_instance;
    const RuntimeDirectory &m_runtime;
    const GuestMemory &m_memory;
    const SandboxDisks &m_disks;
};

} // namespace airlock
