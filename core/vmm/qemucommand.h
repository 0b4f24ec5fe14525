#pragma once

#include "core/vmm/vmm.h"

#include <QString>
#include <QStringList>

namespace airlock {

/// The QEMU `microvm` command line Airlock boots guests with; shared by QemuMicrovm, the KVM
/// probe and the boot benchmark so all three measure the same thing.
class QemuCommand
{
public:
    /// File names inside VmmLaunchConfig::runtimeDir.
    static constexpr QLatin1StringView kQmpSocket {"qmp.sock"};
    static constexpr QLatin1StringView kConsoleSocket {"console.sock"};
    /// Host end of the guest agent's virtio-serial port (GuestAgent).
    static constexpr QLatin1StringView kAgentSocket {"agent.sock"};
    /// The port's name, which the guest agent looks for in /sys/class/virtio-ports/*/name.
    static constexpr QLatin1StringView kAgentPortName {"org.airlock.agent"};
    /// Host end and name of the benchmark's raw port (VmmLaunchConfig::benchPort).
    static constexpr QLatin1StringView kBenchSocket {"bench.sock"};
    static constexpr QLatin1StringView kBenchPortName {"org.airlock.bench"};
    static constexpr QLatin1StringView kPidFile {"qemu.pid"};
    static constexpr QLatin1StringView kLogFile {"qemu.log"};
    /// Changes whenever the guest's devices do: a snapshot (and a template) only loads into
    /// the device layout it was saved from. 2: the guest agent's virtio-serial port.
    static constexpr int kDeviceLayoutVersion = 2;
    /// The descriptor number the tap queue has in QEMU (VmmNetwork::tapFd).
    static constexpr int kTapFd = 3;

    /// Absolute path of qemu-system-x86_64 from PATH (or $AIRLOCK_QEMU), empty when missing.
    static QString findQemu();

    /// The machine every Airlock VMM gets, shared by guests and the KVM probe: microvm with ACPI
    /// (for the power button), `-cpu max`, no default devices, no network, no display,
    /// -no-reboot, and the seccomp sandbox on. No argv[0], kernel, console or control sockets.
    static QStringList machineArguments(Acceleration acceleration, int vcpus, int memoryMib);

    /// Full argv (argv[0] = `qemu`) for `config`: microvm with ACPI (for the power button),
    /// no default devices, no network, no display, seccomp sandbox on, serial console on
    /// RUNDIR/console.sock and QMP on RUNDIR/qmp.sock (both servers that never wait), pid file,
    /// -no-reboot (a guest reboot ends the VMM); with a network a virtio-net device on the
    /// tap, with a root disk its overlay on the read-only base as a virtio-blk device (serial
    /// `airlock-root`), with a seed image a read-only virtio-blk device (serial `airlock-seed`),
    /// and the guest agent's virtio-serial port (`org.airlock.agent`) on RUNDIR/agent.sock
    /// (with benchPort, `org.airlock.bench` on RUNDIR/bench.sock beside it).
    /// With `paused`,
    /// the CPUs wait for QMP `cont`, so no console output is lost before the helper attaches.
    /// With a memoryPath, RAM is a
    /// shared memory-backend-file; with an incomingStateFd, QEMU waits for `-incoming defer`.
    static QStringList arguments(const QString &qemu, const VmmLaunchConfig &config, bool paused);

    /// The kernel command line: `console=ttyS0`, a fixed early TSC rate (TCG calibrates it
    /// slowly and badly otherwise), `airlock.name=NAME` (the guest's hostname), with a network
    /// `airlock.ip=ADDR/PREFIX airlock.gw=GW airlock.dns=GW`, with a root disk
    /// `airlock.root=airlock-root`, and the image's own arguments.
    static QString kernelCommandLine(const VmmLaunchConfig &config);
};

} // namespace airlock
