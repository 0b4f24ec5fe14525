#include "core/vmm/kvmprobe.h"

#include "core/vmm/qemucommand.h"
#include "core/vmm/vmmprocess.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QProcess>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcKvm, "airlock.vmm.kvm")

const QString kTcgConsequence =
    QStringLiteral("using software emulation (TCG), guests run several times slower");

KvmProbeResult tcg(const QString &why)
{
    const QString warning = why + QStringLiteral(": ") + kTcgConsequence;
    qCWarning(lcKvm).noquote() << warning;
    return {Acceleration::Tcg, warning};
}

QString lastLine(const QByteArray &text)
{
    const QList<QByteArray> lines = text.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last().trimmed()).left(300);
}
} // namespace

KvmProbeResult KvmProbe::run(const Config &config)
{
    const QByteArray device = QFile::encodeName(config.kvmDevice);
    const int fd = ::open(device.constData(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT)
            return tcg(QStringLiteral("%1 is missing").arg(config.kvmDevice));
        return tcg(QStringLiteral("cannot open %1 (%2)")
                       .arg(config.kvmDevice, QString::fromLocal8Bit(std::strerror(error))));
    }
    ::close(fd);

    const QString qemu = QemuCommand::findQemu();
    if (qemu.isEmpty())
        return tcg(QStringLiteral("qemu-system-x86_64 is not installed, KVM was not probed"));
    if (!QFileInfo(config.kernelPath).isFile())
        return tcg(QStringLiteral("no guest kernel to probe KVM with (%1)").arg(config.kernelPath));

    // No initrd: the kernel prints its banner, panics for lack of a root fs and, with
    // panic=-1 and -no-reboot, ends QEMU. Only the banner matters.
    QStringList args = QemuCommand::machineArguments(Acceleration::Kvm, 1, 128);
    args << QStringList {
        QStringLiteral("-kernel"), config.kernelPath,
        QStringLiteral("-append"), QStringLiteral("console=ttyS0 panic=-1"),
        QStringLiteral("-serial"), QStringLiteral("stdio"),
    };
    QProcess process;
    process.setProcessChannelMode(QProcess::SeparateChannels);
    const VmmCredentials credentials = VmmCredentials::forUser(config.vmmUid, config.vmmGid);
    process.setChildProcessModifier([&credentials] {
        if (credentials.apply() != 0)
            ::_exit(126);
    });
    // Blocking on purpose: the helper probes once in HelperDaemon::start(), before it serves.
    process.start(qemu, args);
    if (!process.waitForStarted(config.timeoutMs))
        return tcg(
            QStringLiteral("the KVM probe could not start QEMU (%1)").arg(process.errorString()));

    const QDeadlineTimer deadline(config.timeoutMs);
    QByteArray console;
    bool banner = false;
    while (!banner && !deadline.hasExpired() && process.state() == QProcess::Running) {
        process.waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime())));
        console += process.readAllStandardOutput();
        banner = console.contains("Linux version");
    }
    console += process.readAllStandardOutput();
    banner = banner || console.contains("Linux version");
    process.kill();
    process.waitForFinished(3000);
    const QByteArray errors = process.readAllStandardError();

    if (banner) {
        qCInfo(lcKvm) << "KVM probe guest booted; using KVM";
        return {Acceleration::Kvm, QString()};
    }
    const QString detail = lastLine(errors);
    return tcg(detail.isEmpty() ? QStringLiteral("a KVM probe guest printed nothing within %1 s")
                                      .arg(config.timeoutMs / 1000.0)
                                : QStringLiteral("a KVM probe guest failed (%1)").arg(detail));
}

} // namespace airlock
