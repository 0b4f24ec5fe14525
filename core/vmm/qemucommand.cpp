#include "core/vmm/qemucommand.h"

#include "core/vmm/rootdisk.h"
#include "core/vmm/seedimage.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace airlock {

namespace {
/// QEMU option values escape ',' by doubling it.
QString optionValue(const QString &value)
{
    QString escaped = value;
    return escaped.replace(u',', QStringLiteral(",,"));
}
} // namespace

QString QemuCommand::findQemu()
{
    const QString override = qEnvironmentVariable("AIRLOCK_QEMU");
    if (!override.isEmpty())
        return QFileInfo(override).isExecutable() ? QFileInfo(override).absoluteFilePath()
                                                  : QString();
    return QStandardPaths::findExecutable(QStringLiteral("qemu-system-x86_64"));
}

QString QemuCommand::kernelCommandLine(const VmmLaunchConfig &config)
{
    QString line = QStringLiteral("console=ttyS0 tsc_early_khz=2000000 airlock.name=%1")
                       .arg(config.sandboxName);
    if (!config.network.tapName.isEmpty())
        line += QStringLiteral(" airlock.ip=%1/%2 airlock.gw=%3 airlock.dns=%3")
                    .arg(config.network.guestAddress)
                    .arg(config.network.prefixLength)
                    .arg(config.network.gateway);
    if (!config.rootDiskPath.isEmpty())
        line += QStringLiteral(" airlock.root=") + QLatin1StringView(RootDisk::kSerial);
    if (!config.kernelArgs.trimmed().isEmpty())
        line += u' ' + config.kernelArgs.trimmed();
    return line;
}

QStringList QemuCommand::machineArguments(Acceleration acceleration, int vcpus, int memoryMib)
{
    return {
        // acpi=on: system_powerdown reaches the guest as an ACPI power button event (GED).
        QStringLiteral("-M"),
        QStringLiteral("microvm,x-option-roms=off,rtc=on,pit=on,pic=on,acpi=on"),
        QStringLiteral("-accel"),
        acceleration == Acceleration::Kvm ? QStringLiteral("kvm") : QStringLiteral("tcg"),
        // `host` aborts on an MSR under nested virtualisation (see the architecture page).
        QStringLiteral("-cpu"),
        QStringLiteral("max"),
        QStringLiteral("-smp"),
        QString::number(vcpus),
        QStringLiteral("-m"),
        QString::number(memoryMib),
        QStringLiteral("-nodefaults"),
        QStringLiteral("-no-user-config"),
        QStringLiteral("-display"),
        QStringLiteral("none"),
        QStringLiteral("-nic"),
        QStringLiteral("none"),
        QStringLiteral("-no-reboot"),
        QStringLiteral("-sandbox"),
        QStringLiteral("on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"),
    };
}

QStringList QemuCommand::arguments(const QString &qemu, const VmmLaunchConfig &config, bool paused)
{
    const QDir run(config.runtimeDir);
    QStringList args {
        qemu,
        QStringLiteral("-name"),
        QStringLiteral("%1,process=airlock-%1").arg(config.sandboxName),
    };
    QStringList machine = machineArguments(config.acceleration, config.vcpus, config.memoryMib);
    if (!config.memoryPath.isEmpty()) {
        // Guest RAM in the helper's file, mapped shared: x-ignore-shared then leaves it out of
        // the migration stream, which is only the device state (docs/snapshots.md).
        machine[1] += QStringLiteral(",memory-backend=ram");
        machine << QStringLiteral("-object")
                << QStringLiteral("memory-backend-file,id=ram,size=%1M,mem-path=%2,share=on")
                       .arg(config.memoryMib)
                       .arg(optionValue(config.memoryPath));
    }
    args << machine;
    args << QStringList {
        QStringLiteral("-kernel"),
        config.kernelPath,
        QStringLiteral("-initrd"),
        config.initrdPath,
        QStringLiteral("-append"),
        kernelCommandLine(config),
        QStringLiteral("-chardev"),
        QStringLiteral("socket,id=console,path=%1,server=on,wait=off")
            .arg(optionValue(run.filePath(kConsoleSocket))),
        QStringLiteral("-serial"),
        QStringLiteral("chardev:console"),
        QStringLiteral("-qmp"),
        QStringLiteral("unix:%1,server=on,wait=off").arg(optionValue(run.filePath(kQmpSocket))),
        QStringLiteral("-pidfile"),
        run.filePath(kPidFile),
    };
    if (!config.network.tapName.isEmpty()) {
        // The helper opened the tap and passes it as fd 3 (/dev/net/tun is root's); by name,
        // the tap's owner (TUNSETOWNER) would let the VMM attach. No scripts, no vhost.
        args << QStringLiteral("-netdev")
             << (config.network.tapFd >= 0
                     ? QStringLiteral("tap,id=net0,fd=%1,vhost=off").arg(kTapFd)
                     : QStringLiteral("tap,id=net0,ifname=%1,script=no,downscript=no,vhost=off")
                           .arg(optionValue(config.network.tapName)))
             << QStringLiteral("-device")
             << QStringLiteral("virtio-net-device,netdev=net0,mac=%1").arg(config.network.mac);
    }
    if (!config.rootDiskPath.isEmpty()) {
        // Four nodes: the base read-only, the overlay's `backing` set to it by node name (so the
        // backing file name in the overlay's header, which the VMM user could rewrite, is never
        // opened), formats given, never probed.
        args << QStringLiteral("-blockdev")
             << QStringLiteral("driver=file,node-name=rootbase-file,filename=%1,read-only=on")
                    .arg(optionValue(config.rootDiskBasePath))
             << QStringLiteral("-blockdev")
             << QStringLiteral("driver=qcow2,node-name=rootbase,file=rootbase-file,read-only=on")
             << QStringLiteral("-blockdev")
             << QStringLiteral("driver=file,node-name=root-file,filename=%1")
                    .arg(optionValue(config.rootDiskPath))
             << QStringLiteral("-blockdev")
             << QStringLiteral("driver=qcow2,node-name=root,file=root-file,backing=rootbase")
             << QStringLiteral("-device")
             << QStringLiteral("virtio-blk-device,drive=root,serial=%1")
                    .arg(QLatin1StringView(RootDisk::kSerial));
    }
    if (!config.seedImagePath.isEmpty()) {
        args << QStringLiteral("-drive")
             << QStringLiteral("file=%1,format=raw,if=none,id=seed,readonly=on")
                    .arg(optionValue(config.seedImagePath))
             << QStringLiteral("-device")
             << QStringLiteral("virtio-blk-device,drive=seed,serial=%1")
                    .arg(QLatin1StringView(SeedImage::kSerial));
    }
    // The guest agent channel, after net and seed so their virtio-mmio slots stay where they
    // were. Like the console, QEMU serves the socket and only the helper connects.
    args << QStringLiteral("-device") << QStringLiteral("virtio-serial-device,id=agentbus")
         << QStringLiteral("-chardev")
         << QStringLiteral("socket,id=agent,path=%1,server=on,wait=off")
                .arg(optionValue(run.filePath(kAgentSocket)))
         << QStringLiteral("-device")
         << QStringLiteral("virtserialport,bus=agentbus.0,chardev=agent,name=%1")
                .arg(kAgentPortName);
    if (config.benchPort) {
        // The same bus, so the same virtio device and path as the agent's port; port 2.
        args << QStringLiteral("-chardev")
             << QStringLiteral("socket,id=bench,path=%1,server=on,wait=off")
                    .arg(optionValue(run.filePath(kBenchSocket)))
             << QStringLiteral("-device")
             << QStringLiteral("virtserialport,bus=agentbus.0,chardev=bench,name=%1")
                    .arg(kBenchPortName);
    }
    if (paused)
        args << QStringLiteral("-S");
    if (config.incomingStateFd >= 0)
        args << QStringLiteral("-incoming") << QStringLiteral("defer");
    return args;
}

} // namespace airlock
