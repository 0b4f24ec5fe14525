#pragma once

#include "core/ssh/sshendpoint.h"

#include <QList>

class QSettings;

namespace airlock {

/// The remote hosts the user configured, in QSettings (group "hosts"): user, host, port,
/// socket path, identity file. Never a password or passphrase: those are asked when needed.
class HostStore
{
public:
    /// Reads from `settings` (not owned; default-constructed QSettings of the application).
    static QList<SshEndpoint> load(QSettings &settings);
    static void save(QSettings &settings, const QList<SshEndpoint> &hosts);
};

} // namespace airlock
