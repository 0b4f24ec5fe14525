#include "core/daemon/accesspolicy.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace airlock {

namespace {

/// The passwd entry's name and primary group; std::nullopt for a uid without an entry.
std::optional<std::pair<QByteArray, gid_t>> passwdEntry(uid_t uid)
{
    std::vector<char> buffer(16384);
    passwd entry {};
    passwd *found = nullptr;
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
        return std::nullopt;
    return std::make_pair(QByteArray(found->pw_name), found->pw_gid);
}

} // namespace

Result<PeerCredentials> readPeerCredentials(int socketDescriptor)
{
    ucred credentials {};
    socklen_t length = sizeof credentials;
    if (getsockopt(socketDescriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot read peer credentials: %1")
                        .arg(QString::fromLocal8Bit(std::strerror(errno))));
    return PeerCredentials {credentials.pid, credentials.uid, credentials.gid};
}

AccessPolicy::AccessPolicy(gid_t group, QString groupName)
    : m_group(group), m_groupName(std::move(groupName))
{ }

bool AccessPolicy::allows(const PeerCredentials &peer) const
{
    if (peer.uid == 0 || peer.gid == m_group)
        return true;
    const auto entry = passwdEntry(peer.uid);
    if (!entry)
        return false;
    if (entry->second == m_group)
        return true;
    int count = 64;
    std::vector<gid_t> groups(count);
    while (getgrouplist(entry->first.constData(), entry->second, groups.data(), &count) < 0)
        groups.resize(count);
    groups.resize(count);
    return std::find(groups.begin(), groups.end(), m_group) != groups.end();
}

QString AccessPolicy::refusal(const PeerCredentials &peer) const
{
    const auto entry = passwdEntry(peer.uid);
    const QString user = entry ? QString::fromLocal8Bit(entry->first) : QString::number(peer.uid);
    return QStringLiteral("user %1 may not use airlockd: only root and members of group '%2' may; "
                          "fix: sudo usermod -aG %2 %1, then log in again")
        .arg(user, m_groupName);
}

} // namespace airlock
