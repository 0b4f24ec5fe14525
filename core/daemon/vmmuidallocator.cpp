#include "core/daemon/vmmuidallocator.h"

#include "core/net/helperinstance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace airlock {

VmmUidAllocator::VmmUidAllocator(uid_t sharedUid, uid_t vmmUidBase, uid_t gatewayUidBase,
                                 int firstSlot)
    : m_sharedUid(sharedUid)
    , m_vmmUidBase(vmmUidBase)
    , m_gatewayUidBase(gatewayUidBase)
    , m_firstSlot(((firstSlot % kSlots) + kSlots) % kSlots)
{ }

int VmmUidAllocator::firstSlotFor(const QString &stateDir)
{
    return int(HelperInstance::tagFor(stateDir).toUInt(nullptr, 16) % kSlots);
}

Result<uid_t> VmmUidAllocator::allocate(const std::vector<uid_t> &ours,
                                        const std::vector<uid_t> &inUse) const
{
    if (m_vmmUidBase == 0)
        return m_sharedUid;
    std::vector<bool> taken(kSlots, false);
    const auto take = [&taken](uid_t uid, uid_t base) {
        const qint64 slot = qint64(uid) - qint64(base);
        if (base != 0 && slot >= 0 && slot < kSlots)
            taken[size_t(slot)] = true;
    };
    for (uid_t uid : ours) {
        if (uid != 0)
            take(uid, m_vmmUidBase);
    }
    // A process of another helper (a VMM or a gateway) holds its slot in both ranges.
    for (uid_t uid : inUse) {
        take(uid, m_vmmUidBase);
        take(uid, m_gatewayUidBase);
    }
    for (int i = 0; i < kSlots; ++i) {
        const int slot = (m_firstSlot + i) % kSlots;
        if (!taken[size_t(slot)])
            return uid_t(m_vmmUidBase + uid_t(slot));
    }
    return fail(ErrorKind::Busy, QStringLiteral("every VMM uid slot is in use"));
}

uid_t VmmUidAllocator::gatewayUidFor(uid_t vmmUid) const
{
    if (m_vmmUidBase == 0 || m_gatewayUidBase == 0 || vmmUid < m_vmmUidBase)
        return vmmUid;
    return m_gatewayUidBase + (vmmUid - m_vmmUidBase);
}

std::vector<uid_t> VmmUidAllocator::uidsInUse()
{
    // Runs on every start over every process on the host: plain system calls and one stack
    // buffer per process (QFile and split() made it a tenth of a start's time with 50 guests).
    std::vector<uid_t> uids;
    DIR *proc = ::opendir("/proc");
    if (!proc)
        return uids;
    const int procFd = ::dirfd(proc);
    while (const dirent *entry = ::readdir(proc)) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
            continue;
        char path[sizeof entry->d_name + 8];
        std::snprintf(path, sizeof path, "%s/status", entry->d_name);
        const int fd = ::openat(procFd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        // "Uid:" comes within the first lines (proc_pid_status(5)).
        char buffer[2048];
        const ssize_t got = ::read(fd, buffer, sizeof buffer - 1);
        ::close(fd);
        if (got <= 0)
            continue;
        buffer[got] = '\0';
        const char *line = std::strstr(buffer, "\nUid:");
        if (!line)
            continue;
        // Real, effective, saved and file system uid.
        const char *cursor = line + 5;
        for (int i = 0; i < 4; ++i) {
            char *end = nullptr;
            const unsigned long uid = std::strtoul(cursor, &end, 10);
            if (end == cursor)
                break;
            uids.push_back(uid_t(uid));
            cursor = end;
        }
    }
    ::closedir(proc);
    return uids;
}

} // namespace airlock
