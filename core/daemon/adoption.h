#pragma once

#include "core/model/sandbox.h"
#include "core/vmm/vmm.h"

#include <QObject>
#include <QString>

#include <deque>
#include <functional>
#include <map>
#include <memory>

namespace airlock {

/// Re-adopts, in the background, the VMMs an earlier helper left running (after a restart or a
/// `kill -9`), so a new helper serves at once whatever their number: each adoption (pid check,
/// QMP and console reconnect, QEMU's run state) runs from the event loop, a few at a time, and a
/// VMM that does not answer (hung, or stopped by a debugger) delays only its own. Its sandbox is
/// `adopting` meanwhile (SandboxService answers `busy` for it). A guest left paused by an
/// interrupted snapshot is resumed (docs/reviews/2026-11-30-redteam-pass.md#f1), one that cannot
/// be is shown paused.
class Adoption : public QObject
{
    Q_OBJECT
public:
    /// A VMM of the backend a job names.
    using VmmFactory = std::function<std::unique_ptr<Vmm>(VmmKind)>;
    /// A guest to adopt: its recorded VMM, run state (running or paused) and network link.
    struct Job
    {
        QString name;
        VmmRuntimeInfo runtime;
        SandboxState recorded = SandboxState::Running;
        qint64 linkIndex = -1;
        VmmKind vmm = VmmKind::Qemu; ///< the sandbox's backend
    };
    /// How one adoption ended: `vmm` runs, in `state` (running or paused) as QEMU has it; or
    /// `vmm` is null and `error` says why (the VMM is gone).
    struct Outcome
    {
        Job job;
        std::unique_ptr<Vmm> vmm;
        SandboxState state = SandboxState::Stopped;
        QString error;
    };
    /// Called once per job, from the event loop.
    using Adopted = std::function<void(Outcome &outcome)>;
    /// How many adoptions run at once: each is asynchronous; this only bounds open sockets.
    static constexpr int kParallel = 8;

    Adoption(VmmFactory factory, Adopted adopted, QObject *parent = nullptr);

    /// Queues `job`; it starts from the event loop (never inside this call).
    void add(Job job);
    /// Jobs queued or under way.
    int pending() const { return int(m_queue.size() + m_active.size()); }

Q_SIGNALS:
    /// Console bytes of a guest while it is adopted (its console reconnects first).
    void consoleOutput(const QString &name, const QByteArray &bytes);

private:
    void startNext();
    void begin(Job job);
    /// QEMU's run state of an adopted VMM against the recorded one.
    void reconcile(const QString &name);
    void finish(const QString &name, SandboxState state, const QString &error);

    VmmFactory m_factory;
    Adopted m_adopted;
    std::deque<Job> m_queue;
    struct Active
    {
        Job job;
        std::unique_ptr<Vmm> vmm;
    };
    std::map<QString, Active> m_active;
};

} // namespace airlock
