#pragma once

#include "core/model/error.h"

#include <QString>

namespace airlock {

/// Where a remote airlockd lives and how to reach it over SSH: the SSH server, the helper's
/// socket path on that host, and the files the client uses. Holds no secrets, so it may be
/// stored in QSettings as it is.
struct SshEndpoint
{
    QString user; ///< login name; empty: the local user name
    QString host; ///< host name or address (IPv6 without brackets)
    quint16 port = 22;
    QString socketPath = QStringLiteral(AIRLOCK_DEFAULT_SOCKET); ///< on the remote host
    QString identityFile; ///< private key file; empty: ssh-agent and the default keys
    /// The remote `airlockctl` run for the bridge fallback (`airlockctl --socket PATH bridge`)
    /// when the server refuses direct-streamlocal channels.
    QString remoteCommand = QStringLiteral("airlockctl");
    /// known_hosts file; empty: ~/.ssh/known_hosts.
    QString knownHostsFile;
    /// OpenSSH client configuration read before connecting; empty: ~/.ssh/config; "none": none.
    QString configFile;

    /// Parses `[USER@]HOST[:PORT]`, with `[v6addr]:PORT` for IPv6 literals. InvalidParams with
    /// the reason for an empty host, a bad port or stray characters.
    static Result<SshEndpoint> parse(const QString &text);
    /// `user@host:port` (port omitted when 22), for titles and error messages.
    QString displayName() const;
    /// The user name actually sent: `user`, else the local login name.
    QString effectiveUser() const;
    /// The bridge command line run remotely, with the socket path shell-quoted.
    QString bridgeCommand() const;

    bool operator==(const SshEndpoint &) const = default;
};

} // namespace airlock
