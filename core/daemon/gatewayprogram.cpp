#include "core/daemon/gatewayprogram.h"

#include <QDir>
#include <QFileInfo>

namespace airlock {

QString locateHelperProgram(const QString &name, const QString &helperDir,
                            const QString &libexecDir)
{
    const QDir here(helperDir);
    for (const QString &candidate :
         {here.filePath(name), here.filePath(QStringLiteral("../%1/%1").arg(name))}) {
        const QFileInfo info(candidate);
        if (info.isExecutable() && info.isFile())
            return info.canonicalFilePath();
    }
    return QDir(libexecDir).filePath(name);
}

QString locateGatewayProgram(const QString &helperDir, const QString &libexecDir)
{
    return locateHelperProgram(QStringLiteral("airlock-gateway"), helperDir, libexecDir);
}

} // namespace airlock
