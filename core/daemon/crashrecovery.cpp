#include "core/daemon/crashrecovery.h"

#include "core/daemon/guestmemory.h"
#include "core/daemon/runtimedirectory.h"
#include "core/daemon/sandboxdisks.h"
#include "core/daemon/sandboxnetwork.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/vmm.h"
#include "core/vmm/vmmprocess.h"

#include <QDir>
#include <QFile>
#include <QLoggingCategory>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcRecovery, "airlock.daemon.sandbox")

/// How long killOrphanVmm() waits for a SIGKILLed VMM to be gone.
constexpr int kOrphanWaitMs = 2000;
} // namespace

CrashRecovery::CrashRecovery(QString stateDir, QString instance, const RuntimeDirectory &runtime,
                             const GuestMemory &memory, const SandboxDisks &disks)
    : m_stateDir(std::move(stateDir))
    , m_instance(std::move(instance))
    , m_runtime(runtime)
    , m_memory(memory)
    , m_disks(disks)
{ }

void CrashRecovery::killOrphanVmm(const QString &name, bool wait) const
{
    // Its pid file is written by the VMM user, so only a process of that user whose command
    // line names this runtime dir is believed.
    const QString runtimeDir = m_runtime.pathFor(name);
    QFile pidFile(QDir(runtimeDir).filePath(QemuCommand::kPidFile.toString()));
    if (!pidFile.open(QIODevice::ReadOnly))
        return;
    bool ok = false;
    const pid_t pid = pid_t(pidFile.read(32).trimmed().toLongLong(&ok));
    if (!ok || pid <= 1)
        return;
    // Watched first: the pidfd names this process, never one that gets its pid later.
    VmmProcess process;
    if (!process.watch(pid))
        return;
    const QString proc = QStringLiteral("/proc/%1").arg(pid);
    QFile cmdline(proc + QStringLiteral("/cmdline"));
    struct stat info
    {
    };
    const uid_t owner = m_runtime.owner(name);
    if (owner == 0 || ::stat(QFile::encodeName(proc).constData(), &info) != 0
        || info.st_uid != owner || !cmdline.open(QIODevice::ReadOnly)
        || !cmdline.readAll().contains(QFile::encodeName(runtimeDir)))
        return;
    qCWarning(lcRecovery, "%s: killing VMM pid %d left running by an interrupted start",
              qPrintable(name), int(pid));
    process.sendSignal(SIGKILL);
    // Not our child: its pidfd says when it is gone.
    if (wait)
        process.waitForExit(kOrphanWaitMs);
}

void CrashRecovery::removeInternalLeftovers(const QString &prefix) const
{
    for (const QString &name : m_runtime.names()) {
        if (!name.startsWith(prefix))
            continue;
        qCInfo(lcRecovery, "removing what the internal guest %s left", qPrintable(name));
        SandboxNetwork::killLeftoverGateway(m_stateDir, name);
        killOrphanVmm(name, /*wait=*/true);
        m_runtime.remove(name);
        SandboxNetwork::removeCa(m_stateDir, name);
        ::unlink(QFile::encodeName(m_memory.pathFor(name)).constData());
    }
}

void CrashRecovery::removeLeftovers(const QSet<QString> &sandboxes, const QSet<QString> &tables,
                                    const QSet<QString> &taps) const
{
    for (const QString &file : m_disks.removeLeftovers(sandboxes))
        qCInfo(lcRecovery, "removed leftover disk file %s", qPrintable(file));
    if (auto leftovers = NftablesTable::listLeftoverTables(m_instance); leftovers) {
        for (const QString &sandbox : *leftovers) {
            if (tables.contains(sandbox))
                continue;
            qCInfo(lcRecovery, "removing leftover nftables table of %s", qPrintable(sandbox));
            if (auto removed = NftablesTable::remove(sandbox, m_instance); !removed)
                qCWarning(lcRecovery, "%s", qPrintable(removed.error().message));
        }
    } else {
        qCWarning(lcRecovery, "%s", qPrintable(leftovers.error().message));
    }
    if (auto leftovers = TapDevice::listLeftovers(m_instance); leftovers) {
        for (const QString &tap : *leftovers) {
            if (taps.contains(tap))
                continue;
            qCInfo(lcRecovery, "removing leftover tap %s", qPrintable(tap));
            if (auto removed = TapDevice::remove(tap); !removed)
                qCWarning(lcRecovery, "%s", qPrintable(removed.error().message));
        }
    } else {
        qCWarning(lcRecovery, "%s", qPrintable(leftovers.error().message));
    }
}

void CrashRecovery::removeLeftoversOf(const QString &sandbox, const QString &tap) const
{
    if (auto removed = NftablesTable::remove(sandbox, m_instance); !removed)
        qCWarning(lcRecovery, "%s", qPrintable(removed.error().message));
    if (TapDevice::isTap(tap)) {
        qCInfo(lcRecovery, "removing leftover tap %s", qPrintable(tap));
        if (auto removed = TapDevice::remove(tap); !removed)
            qCWarning(lcRecovery, "%s", qPrintable(removed.error().message));
    }
}

} // namespace airlock
