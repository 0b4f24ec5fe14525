#include "core/vmm/kvmprobe.h"

#include "core/vmm/qemucommand.h"
#include "core/vmm/vmmprocess.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QProcess>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcKvm, "airlock.vmm.kvm")

const QString kTcgConsequence =
    QStringLiteral("using software emulation (TCG), guests run several times slower");

KvmProbeResult tcg(const QString &why)
{
    const QString warning = why + QStringLiteral("; meanwhile ") + kTcgConsequence;
    qCWarning(lcKvm).noquote() << warning;
    return {Acceleration::Tcg, warning};
}

struct CpuFlags
{
    bool virtualisation = false; ///< vmx (Intel VT-x) or svm (AMD-V)
    bool hypervisor = false; ///< this machine is itself a virtual machine
    bool known = false; ///< cpuinfo was readable
};

CpuFlags readCpuFlags(const QString &cpuinfoPath)
{
    CpuFlags flags;
    QFile file(cpuinfoPath);
    if (!file.open(QIODevice::ReadOnly))
        return flags;
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (!line.startsWith("flags"))
            continue;
        flags.known = true;
        const QList<QByteArray> words = line.mid(line.indexOf(':') + 1).simplified().split(' ');
        flags.virtualisation = words.contains("vmx") || words.contains("svm");
        flags.hypervisor = words.contains("hypervisor");
        break;
    }
    return flags;
}

const QString kNestedAdvice = QStringLiteral(
    "this machine is a virtual machine whose hypervisor does not pass hardware virtualisation "
    "on (nested virtualisation is off): enable nested virtualisation for this VM on its host "
    "(e.g. kvm_intel nested=1 and CPU model host-passthrough), then restart airlockd");

QString groupName(gid_t gid)
{
    struct group entry;
    struct group *found = nullptr;
    std::vector<char> buffer(16384);
    if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
        return QString::fromLocal8Bit(found->gr_name);
    return QString::number(gid);
}

QString userName(uid_t uid)
{
    struct passwd entry;
    struct passwd *found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
        return QString::fromLocal8Bit(found->pw_name);
    return QString::number(uid);
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
            return tcg(missingDeviceReason(config.kvmDevice, config.cpuinfoPath));
        return tcg(QStringLiteral("cannot open %1 (%2)")
                       .arg(config.kvmDevice, QString::fromLocal8Bit(std::strerror(error))));
    }
    ::close(fd);
    // The helper may open it as root; the VMMs, which are not root, must be able to as well.
    const std::vector<gid_t> groups = config.vmmGroups.empty()
        ? VmmCredentials::forUser(config.vmmUid, config.vmmGid).groups
        : config.vmmGroups;
    if (const QString problem = accessProblem(config.kvmDevice, config.vmmUid, groups);
        !problem.isEmpty())
        return tcg(problem);

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
    VmmCredentials credentials = VmmCredentials::forUser(config.vmmUid, config.vmmGid);
    if (!config.vmmGroups.empty())
        credentials.groups = config.vmmGroups;
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
    QString why = detail.isEmpty() ? QStringLiteral("a KVM probe guest printed nothing within %1 s")
                                         .arg(config.timeoutMs / 1000.0)
                                   : QStringLiteral("a KVM probe guest failed (%1)").arg(detail);
    // KVM that opens but cannot run a guest is what broken nested virtualisation looks like.
    const CpuFlags flags = readCpuFlags(config.cpuinfoPath);
    if (flags.known && flags.hypervisor && !flags.virtualisation)
        why += QStringLiteral("; ") + kNestedAdvice;
    else if (flags.hypervisor)
        why += QStringLiteral("; under nested virtualisation check that the outer host runs "
                              "this VM with nested virtualisation on and a current kernel");
    return tcg(why);
}

std::optional<gid_t> KvmProbe::deviceGroup(const QString &device)
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(device).constData(), &info) != 0)
        return std::nullopt;
    if (info.st_gid == 0 || (info.st_mode & (S_IRGRP | S_IWGRP)) != (S_IRGRP | S_IWGRP))
        return std::nullopt;
    return info.st_gid;
}

QString KvmProbe::accessProblem(const QString &device, uid_t uid, const std::vector<gid_t> &groups)
{
    struct stat info
    {
    };
    if (uid == 0 || ::stat(QFile::encodeName(device).constData(), &info) != 0)
        return {};
    constexpr mode_t rw = S_IRUSR | S_IWUSR;
    const mode_t granted = info.st_uid == uid                    ? (info.st_mode & S_IRWXU)
        : std::ranges::find(groups, info.st_gid) != groups.end() ? (info.st_mode & S_IRWXG) << 3
                                                                 : (info.st_mode & S_IRWXO) << 6;
    if ((granted & rw) == rw)
        return {};
    const QString owner = QStringLiteral("%1:%2, mode %3")
                              .arg(userName(info.st_uid), groupName(info.st_gid))
                              .arg(info.st_mode & 07777, 4, 8, QLatin1Char('0'));
    return QStringLiteral("permission: the VMM user %1 may not open %2 (%3); give the device to "
                          "group kvm with mode 0660 (sudo chgrp kvm %2 && sudo chmod 0660 %2, "
                          "as the udev rules of Debian's qemu-system and systemd do), then "
                          "restart airlockd")
        .arg(userName(uid), device, owner);
}

QString KvmProbe::missingDeviceReason(const QString &device, const QString &cpuinfoPath)
{
    const QString missing = QStringLiteral("%1 is missing").arg(device);
    const CpuFlags flags = readCpuFlags(cpuinfoPath);
    if (!flags.known)
        return missing
            + QStringLiteral(": load the KVM module (sudo modprobe kvm_intel, or "
                             "kvm_amd), then restart airlockd");
    if (flags.virtualisation)
        return missing
            + QStringLiteral(": the CPU supports virtualisation but KVM is not "
                             "loaded; sudo modprobe kvm_intel (or kvm_amd), then "
                             "restart airlockd");
    if (flags.hypervisor)
        return missing + QStringLiteral(": ") + kNestedAdvice;
    return missing
        + QStringLiteral(": the CPU shows no hardware virtualisation (VT-x or "
                         "AMD-V); enable it in the firmware (BIOS/UEFI) setup, then "
                         "restart airlockd");
}

} // namespace airlock
