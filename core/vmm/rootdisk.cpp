#include "core/vmm/rootdisk.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

#include <sys/stat.h>

namespace airlock {

QString RootDisk::findQemuImg()
{
    const QString override = qEnvironmentVariable("AIRLOCK_QEMU_IMG");
    if (!override.isEmpty())
        return QFileInfo(override).isExecutable() ? QFileInfo(override).absoluteFilePath()
                                                  : QString();
    return QStandardPaths::findExecutable(QStringLiteral("qemu-img"));
}

Result<void> RootDisk::createOverlay(const QString &overlayPath, const QString &basePath)
{
    const QString qemuImg = findQemuImg();
    if (qemuImg.isEmpty())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("qemu-img is not installed (package qemu-utils)"));
    QFile::remove(overlayPath);
    // The base's format is given (-F), never probed; its virtual size is read from it.
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(qemuImg,
                  {QStringLiteral("create"), QStringLiteral("-q"), QStringLiteral("-f"),
                   QStringLiteral("qcow2"), QStringLiteral("-F"), QStringLiteral("qcow2"),
                   QStringLiteral("-b"), basePath, overlayPath});
    if (!process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished(1000);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("qemu-img create %1 did not finish").arg(overlayPath));
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        QFile::remove(overlayPath);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("qemu-img create %1 failed: %2")
                        .arg(overlayPath, QString::fromLocal8Bit(process.readAll()).trimmed()));
    }
    if (::chmod(QFile::encodeName(overlayPath).constData(), 0600) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot set the mode of %1").arg(overlayPath));
    return {};
}

} // namespace airlock
