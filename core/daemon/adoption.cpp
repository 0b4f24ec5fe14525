#include "core/daemon/adoption.h"

#include <QLoggingCategory>
#include <QTimer>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcAdoption, "airlock.daemon.sandbox")
} // namespace

Adoption::Adoption(VmmFactory factory, Adopted adopted, QObject *parent)
    : QObject(parent), m_factory(std::move(factory)), m_adopted(std::move(adopted))
{ }

void Adoption::add(Job job)
{
    m_queue.push_back(std::move(job));
    QTimer::singleShot(0, this, &Adoption::startNext);
}

void Adoption::startNext()
{
    while (!m_queue.empty() && int(m_active.size()) < kParallel) {
        Job job = std::move(m_queue.front());
        m_queue.pop_front();
        begin(std::move(job));
    }
}

void Adoption::begin(Job job)
{
    const QString name = job.name;
    const VmmRuntimeInfo runtime = job.runtime;
    const VmmKind kind = job.vmm;
    std::unique_ptr<Vmm> made = m_factory(kind);
    if (!made) {
        m_active.insert_or_assign(name, Active {std::move(job), nullptr});
        return finish(name, SandboxState::Stopped,
                      QStringLiteral("this airlockd cannot run %1 VMMs").arg(vmmKindName(kind)));
    }
    Vmm *vmm = m_active.insert_or_assign(name, Active {std::move(job), std::move(made)})
                   .first->second.vmm.get();
    connect(vmm, &Vmm::consoleOutput, this,
            [this, name](const QByteArray &bytes) { Q_EMIT consoleOutput(name, bytes); });
    // The VMM calls back only while it lives, and it lives in m_active until finish().
    vmm->adopt(runtime, [this, name](const Result<void> &adopted) {
        if (!adopted)
            return finish(name, SandboxState::Stopped, adopted.error().message);
        qCInfo(lcAdoption, "re-adopted %s (VMM pid %lld)", qPrintable(name),
               static_cast<long long>(m_active.at(name).job.runtime.pid));
        reconcile(name);
    });
}

void Adoption::reconcile(const QString &name)
{
    Active &active = m_active.at(name);
    const SandboxState recorded = active.job.recorded;
    Vmm *vmm = active.vmm.get();
    vmm->queryRunning([this, name, recorded, vmm](const Result<bool> &running) {
        if (!running) {
            qCWarning(lcAdoption, "%s: cannot query the VMM's run state: %s", qPrintable(name),
                      qPrintable(running.error().message));
            return finish(name, recorded, {});
        }
        if (*running) {
            if (recorded == SandboxState::Paused)
                qCInfo(lcAdoption, "%s: recorded as paused, but its guest runs", qPrintable(name));
            return finish(name, SandboxState::Running, {});
        }
        if (recorded == SandboxState::Paused)
            return finish(name, recorded, {});
        // Recorded running, CPUs stopped: the helper died between a snapshot's pause and its
        // resume. Nobody asked for the pause, so the guest runs on.
        vmm->resume([this, name](const Result<void> &resumed) {
            if (resumed) {
                qCWarning(lcAdoption, "%s: resumed a guest left paused by an interrupted snapshot",
                          qPrintable(name));
                return finish(name, SandboxState::Running, {});
            }
            qCWarning(lcAdoption,
                      "%s: its guest stands still and cannot be resumed (%s); showing it as paused",
                      qPrintable(name), qPrintable(resumed.error().message));
            finish(name, SandboxState::Paused, {});
        });
    });
}

void Adoption::finish(const QString &name, SandboxState state, const QString &error)
{
    auto node = m_active.extract(name);
    Outcome outcome {std::move(node.mapped().job), std::move(node.mapped().vmm), state, error};
    if (outcome.vmm)
        QObject::disconnect(outcome.vmm.get(), nullptr, this, nullptr);
    if (!error.isEmpty() && outcome.vmm) {
        // Called from inside the VMM's own callback: it goes once that has returned.
        outcome.vmm.release()->deleteLater();
    }
    m_adopted(outcome);
    // An outcome the receiver did not take is a VMM it does not want: the same way out.
    if (outcome.vmm)
        outcome.vmm.release()->deleteLater();
    QTimer::singleShot(0, this, &Adoption::startNext);
}

} // namespace airlock
