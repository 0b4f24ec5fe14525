#pragma once

#include "core/model/error.h"

#include <QString>

#include <sys/types.h>

namespace airlock {

/// The kernel's view of who is on the other end of a Unix socket (SO_PEERCRED, taken when the
/// peer connected, so it cannot be changed by the peer afterwards).
struct PeerCredentials
{
    pid_t pid = 0;
    uid_t uid = uid_t(-1);
    gid_t gid = gid_t(-1);
};

/// Reads SO_PEERCRED from a connected Unix socket descriptor. OperationFailed when the
/// descriptor is not a Unix socket.
Result<PeerCredentials> readPeerCredentials(int socketDescriptor);

/// Decides who may talk to the helper (docs/protocol.md, "Access"): root, and members of one
/// group, either as primary group of the process, primary group of the uid's passwd entry, or
/// as a supplementary group of that user (getgrouplist). Membership is looked up on every
/// connection so `usermod -aG` works without restarting the helper.
class AccessPolicy
{
public:
    AccessPolicy(gid_t group, QString groupName);

    bool allows(const PeerCredentials &peer) const;
    /// The permission_denied message for a refused peer, naming the fix.
    QString refusal(const PeerCredentials &peer) const;
    gid_t group() const { return m_group; }

private:
    gid_t m_group;
    QString m_groupName;
};

} // namespace airlock
