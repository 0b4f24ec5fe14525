#include "core/daemon/gatewayprogram.h"

#include <QDir>
#include <QFileInfo>

namespace airlock {

QString locateGatewayProgram(const QString &helperDir, const QString &libexecDir)
{
    const QDir here(helperDir);
    for (const QString &candidate :
         {here.filePath(QStringLiteral("airlock-gateway")),
          here.filePath(QStringLiteral("../airlock-gateway/airlock-gateway"))}) {
        const QFileInfo info(candidate);
        if (info.isExecutable() && info.isFile())
            return info.canonicalFilePath();
    }
    return QDir(libexecDir).filePath(QStringLiteral("airlock-gateway"));
}

} // namespace airlock
