#include "core/vmm/rootdisk.h"

#include "core/model/answerlater.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>

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

void RootDisk::createOverlay(const QString &overlayPath, const QString &basePath, QObject *context,
                             Created done)
{
    const auto answer = [context, done](const Result<void> &result) {
        answerLater(context, done, result);
    };
    const QString qemuImg = findQemuImg();
    if (qemuImg.isEmpty())
        return answer(fail(ErrorKind::BackendUnavailable,
                           QStringLiteral("qemu-img is not installed (package qemu-utils)")));
    QFile::remove(overlayPath);
    // Asynchronous: a slow or hung qemu-img (a stalled disk) must not hold up the event loop.
    auto *process = new QProcess(context);
    auto *deadline = new QTimer(process);
    deadline->setSingleShot(true);
    QObject::connect(deadline, &QTimer::timeout, process, [process] {
        process->setProperty("airlockTimedOut", true);
        process->kill();
    });
    QObject::connect(
        process, &QProcess::finished, process,
        [process, overlayPath, done](int code, QProcess::ExitStatus status) {
            process->deleteLater();
            if (process->property("airlockTimedOut").toBool()) {
                QFile::remove(overlayPath);
                return done(
                    fail(ErrorKind::OperationFailed,
                         QStringLiteral("qemu-img create %1 did not finish").arg(overlayPath)));
            }
            if (status != QProcess::NormalExit || code != 0) {
                QFile::remove(overlayPath);
                return done(fail(
                    ErrorKind::OperationFailed,
                    QStringLiteral("qemu-img create %1 failed: %2")
                        .arg(overlayPath, QString::fromLocal8Bit(process->readAll()).trimmed())));
            }
            if (::chmod(QFile::encodeName(overlayPath).constData(), 0600) != 0)
                return done(fail(ErrorKind::OperationFailed,
                                 QStringLiteral("cannot set the mode of %1").arg(overlayPath)));
            done({});
        });
    QObject::connect(
        process, &QProcess::errorOccurred, process,
        [process, qemuImg, done](QProcess::ProcessError error) {
            // Only a failed start ends here; the others also end in finished().
            if (error != QProcess::FailedToStart)
                return;
            process->deleteLater();
            done(fail(ErrorKind::OperationFailed,
                      QStringLiteral("cannot run %1: %2").arg(qemuImg, process->errorString())));
        });
    process->setProcessChannelMode(QProcess::MergedChannels);
    // The base's format is given (-F), never probed; its virtual size is read from it.
    process->start(qemuImg,
                   {QStringLiteral("create"), QStringLiteral("-q"), QStringLiteral("-f"),
                    QStringLiteral("qcow2"), QStringLiteral("-F"), QStringLiteral("qcow2"),
                    QStringLiteral("-b"), basePath, overlayPath});
    deadline->start(30000);
}

} // namespace airlock
