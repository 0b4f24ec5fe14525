#include "core/daemon/vmmuidallocator.h"

#include "core/net/helperinstance.h"

#include <QDir>
#include <QFile>

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
    std::vector<uid_t> uids;
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &pid : pids) {
        if (pid.isEmpty() || !pid.at(0).isDigit())
            continue;
        QFile status(QStringLiteral("/proc/%1/status").arg(pid));
        if (!status.open(QIODevice::ReadOnly))
            continue;
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (!line.startsWith("Uid:"))
                continue;
            // Real, effective, saved and file system uid.
            for (const QByteArray &field : line.mid(4).simplified().split(' ')) {
                bool ok = false;
                const uint uid = field.toUInt(&ok);
                if (ok)
                    uids.push_back(uid_t(uid));
            }
            break;
        }
    }
    return uids;
}

} // namespace airlock
