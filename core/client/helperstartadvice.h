#pragma once

#include <QString>
#include <QStringList>

namespace airlock {

/// How to start the helper on this computer, for the "not running" messages of the window and
/// `airlockctl`: `systemctl start airlockd` only where the airlockd.service unit is installed
/// (the package); a build tree has none, and there the helper is started by run-demo.sh or by
/// hand, so that is what the advice says.
class HelperStartAdvice
{
public:
    /// The directories systemd loads units from (systemd.unit(5)), where the package's unit is.
    static QStringList defaultUnitDirs();
    /// Whether airlockd.service is in one of `unitDirs`.
    static bool hasSystemdUnit(const QStringList &unitDirs = defaultUnitDirs());
    /// The command that starts the helper, plain text: "sudo systemctl start airlockd", or
    /// without the unit "sudo installers/dev/run-demo.sh (from the source tree), or sudo
    /// airlockd --socket PATH".
    static QString command(const QString &socketPath,
                           const QStringList &unitDirs = defaultUnitDirs());
};

} // namespace airlock
