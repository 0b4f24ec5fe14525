#include "core/client/helperstartadvice.h"

#include <QDir>
#include <QFileInfo>

namespace airlock {

namespace {
const QString kDefaultSocket = QStringLiteral("/run/airlock/airlockd.sock");
}

QStringList HelperStartAdvice::defaultUnitDirs()
{
    return {QStringLiteral("/etc/systemd/system"), QStringLiteral("/run/systemd/system"),
            QStringLiteral("/usr/local/lib/systemd/system"),
            QStringLiteral("/usr/lib/systemd/system"), QStringLiteral("/lib/systemd/system")};
}

bool HelperStartAdvice::hasSystemdUnit(const QStringList &unitDirs)
{
    for (const QString &dir : unitDirs) {
        if (QFileInfo::exists(QDir(dir).filePath(QStringLiteral("airlockd.service"))))
            return true;
    }
    return false;
}

QString HelperStartAdvice::command(const QString &socketPath, const QStringList &unitDirs)
{
    if (hasSystemdUnit(unitDirs))
        return QStringLiteral("sudo systemctl start airlockd");
    const QString socket =
        socketPath == kDefaultSocket ? QString() : QStringLiteral(" --socket %1").arg(socketPath);
    return QStringLiteral("no airlockd.service is installed, so start it the way a build tree "
                          "does: sudo installers/dev/run-demo.sh from the source tree, or sudo "
                          "airlockd%1 (build/app/airlockd/airlockd)")
        .arg(socket);
}

} // namespace airlock
