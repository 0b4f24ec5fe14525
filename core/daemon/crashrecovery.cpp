#include "core/daemon/crashrecovery.h"

#include "core/daemon/guestmemory.h"
#include "core/daemon/runtimedirectory.h"
#include "core/daemon/sandboxdisks.h"
#include "core/daemon/sandboxnetwork.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "core/vmm/firecrackervmm.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/vmm.h"
#include "core/vmm/vmmcgroup.h"
#include "core/vmm/vmmprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcRecovery, "airlock.daemon.sandbox")

/// How long killOrphanVmm() waits for a SIGKILLed VMM to be gone.
constexpr int kOrphanWaitMs = 2000;

/// A VMM a runtime directory names: QEMU's pid file (QEMU writes it: a pid only), or the one
/// FirecrackerVmm writes right after the spawn (`PID STARTTIME`).
struct OrphanCandidate
{
    pid_t pid = 0;
    std::optional<qint64> startTime;
    bool firecracker = false;
};

/// The first bytes (at most 63) of a pid file in the VMM user's directory, read without
/// following a link and without blocking (a FIFO planted there would hang the helper's start,
/// and every start after it): only a regular file, and with `ownedByHelper` only the helper's
/// own (not writable by group or others). nullopt otherwise.
std::optional<QByteArray> readPidFile(const QString &path, bool ownedByHelper)
{
    const int fd =
        ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat info
    {
    };
    char buffer[64] = {};
    bool usable = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    if (usable && ownedByHelper)
        usable = info.st_uid == ::geteuid() && !(info.st_mode & (S_IWGRP | S_IWOTH));
    const ssize_t got = usable ? ::read(fd, buffer, sizeof buffer - 1) : -1;
    ::close(fd);
    if (got <= 0)
        return std::nullopt;
    return QByteArray(buffer, qsizetype(got));
}

std::optional<OrphanCandidate> readQemuPidFile(const QDir &run)
{
    // QEMU writes it as the VMM user: believed only for a process of that user whose command
    // line names the directory (killOrphanVmm).
    const auto text = readPidFile(run.filePath(QemuCommand::kPidFile.toString()), false);
    if (!text)
        return std::nullopt;
    bool ok = false;
    const pid_t pid = pid_t(text->trimmed().toLongLong(&ok));
    if (!ok || pid <= 1)
        return std::nullopt;
    return OrphanCandidate {pid, std::nullopt, false};
}

std::optional<OrphanCandidate> readFirecrackerPidFile(const QDir &run)
{
    // Only the helper's own file, never through a link: one the VMM user (who owns the
    // directory) planted in its place is not believed.
    const auto text = readPidFile(run.filePath(FirecrackerVmm::kPidFile.toString()), true);
    if (!text)
        return std::nullopt;
    const QList<QByteArray> fields = text->simplified().split(' ');
    bool pidOk = false;
    bool startOk = false;
    const pid_t pid = fields.size() == 2 ? pid_t(fields[0].toLongLong(&pidOk)) : 0;
    const qint64 startTime = fields.size() == 2 ? fields[1].toLongLong(&startOk) : 0;
    if (!pidOk || !startOk || pid <= 1 || startTime <= 0)
        return std::nullopt;
    return OrphanCandidate {pid, startTime, true};
}

/// Whether `pid` is the Firecracker of `runtimeDir`: its command line names the API socket
/// there, or (jailed) its root is that directory (FirecrackerJail chroots into it, and every
/// path it was given is then a path inside).
bool isFirecrackerOf(pid_t pid, const QString &runtimeDir, const QByteArray &cmdline)
{
    const QString apiSocket = QDir(runtimeDir).filePath(FirecrackerVmm::kApiSocket.toString());
    if (cmdline.contains(QFile::encodeName(apiSocket)))
        return true;
    const QString root = QFileInfo(QStringLiteral("/proc/%1/root").arg(pid)).symLinkTarget();
    return !root.isEmpty() && root == QDir(runtimeDir).canonicalPath();
}
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
    // The pid files lie in the VMM user's directory, so only a process of that user that
    // belongs to this runtime dir is believed (its command line, or a jailed Firecracker's
    // root), and a Firecracker only with the start time its helper recorded: a recycled pid is
    // never killed.
    const QString runtimeDir = m_runtime.pathFor(name);
    const QDir run(runtimeDir);
    for (const auto &candidate : {readQemuPidFile(run), readFirecrackerPidFile(run)}) {
        if (!candidate)
            continue;
        const pid_t pid = candidate->pid;
        // Watched first: the pidfd names this process, never one that gets its pid later.
        VmmProcess process;
        if (!process.watch(pid, candidate->startTime))
            continue;
        const QString proc = QStringLiteral("/proc/%1").arg(pid);
        QFile cmdlineFile(proc + QStringLiteral("/cmdline"));
        struct stat info
        {
        };
        const uid_t owner = m_runtime.owner(name);
        if (owner == 0 || ::stat(QFile::encodeName(proc).constData(), &info) != 0
            || info.st_uid != owner || !cmdlineFile.open(QIODevice::ReadOnly))
            continue;
        const QByteArray cmdline = cmdlineFile.readAll();
        if (candidate->firecracker ? !isFirecrackerOf(pid, runtimeDir, cmdline)
                                   : !cmdline.contains(QFile::encodeName(runtimeDir)))
            continue;
        // A jailed Firecracker's group (QEMU has none), removed once it is empty.
        std::optional<VmmCgroup> group =
            candidate->firecracker ? VmmCgroup::ofProcess(pid) : std::nullopt;
        qCWarning(lcRecovery, "%s: killing %s pid %d left running by an interrupted start",
                  qPrintable(name), candidate->firecracker ? "Firecracker" : "VMM", int(pid));
        process.sendSignal(SIGKILL);
        // Not our child: its pidfd says when it is gone. Its console relay and airlock-fcctl
        // follow by themselves (the relay's stdout ends, airlock-fcctl's channel closed with
        // the old helper).
        if (wait || group)
            process.waitForExit(kOrphanWaitMs);
        if (group && process.hasExited() && !group->remove())
            qCWarning(lcRecovery, "%s: cannot remove the cgroup %s: %s", qPrintable(name),
                      qPrintable(group->path()), std::strerror(errno));
        if (candidate->firecracker)
            QFile::remove(run.filePath(FirecrackerVmm::kPidFile.toString()));
    }
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
