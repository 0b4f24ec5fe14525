#pragma once

#include "core/model/error.h"

#include <QString>

#include <sys/types.h>

namespace airlock {

/// A system account the helper relies on.
struct SystemAccount
{
    uid_t uid = 0;
    gid_t gid = 0;
};

/// Creates the host's system group and user that Airlock needs when they are missing
/// (`groupadd --system`, `useradd --system --no-create-home --shell /usr/sbin/nologin`), the
/// way a sysusers.d file would on an installed system. Both tolerate a concurrent creation by
/// another helper (the tests start several). Errors: OperationFailed naming the command.
class HostAccounts
{
public:
    /// The gid of `name`, created as a system group if missing.
    static Result<gid_t> ensureGroup(const QString &name);
    /// uid and primary gid of `name`, created as a system user without home or shell if missing.
    static Result<SystemAccount> ensureSystemUser(const QString &name);
    /// The passwd name of `uid` (getpwuid_r), or an empty string when it has no entry.
    static QString userName(uid_t uid);
};

} // namespace airlock
