#pragma once

#include "core/model/error.h"

#include <QDateTime>
#include <QJsonObject>
#include <QMap>
#include <QString>

#include <optional>

namespace airlock {

/// Lifecycle state of a sandbox as the helper reports it.
enum class SandboxState {
    Stopped, ///< no VMM process; `stateReason` says why when it was not a requested stop
    Starting, ///< VMM launched, guest not yet confirmed running
    Running, ///< VMM running (the guest may still be booting)
    Stopping, ///< graceful power-down requested, kill follows after the timeout
    Paused, ///< VMM running, guest CPUs stopped (vm.pause); resumed by vm.resume
    /// VMM left running by an earlier helper, being re-adopted in the background after a
    /// helper restart; running, paused or stopped follows. Operations answer `busy` meanwhile.
    Adopting,
};

/// How the guest's CPU is virtualised.
enum class Acceleration {
    Unknown, ///< not probed yet / never started
    Kvm, ///< hardware virtualisation through /dev/kvm
    Tcg, ///< QEMU software emulation (slower; nested KVM on the dev machines fails)
};

/// Which VMM backend runs a sandbox's guest (docs/vmm.md): `airlockd --vmm` picks the default,
/// `sandbox.create` may name one per sandbox.
enum class VmmKind {
    Qemu, ///< QEMU `microvm` (QemuMicrovm): KVM or TCG, qcow2 root disks, snapshots, templates
    Firecracker, ///< Firecracker (FirecrackerVmm): KVM only, raw disks, its own snapshots
};

/// How a sandbox's guest boots when it starts (SandboxSpec::boot, `sandbox.create`).
enum class BootMode {
    /// From the image's template (a snapshot of the booted image, docs/snapshots.md) when the
    /// helper has one for this image and shape; otherwise a cold boot.
    Template,
    Cold, ///< always boots the kernel
};

/// Where a running guest's state came from (Sandbox::startedFrom).
enum class StartSource {
    None, ///< not running
    Boot, ///< a cold boot: hostname and network from the kernel command line
    Template, ///< the image's template, then a new identity through the guest agent
    Snapshot, ///< a snapshot (restore or fork), then a new identity through the guest agent
};

/// "stopped", "starting", "running", "stopping", "paused", "adopting"
QString sandboxStateName(SandboxState state);
std::optional<SandboxState> sandboxStateFromName(QStringView name);
QString accelerationName(Acceleration acceleration); ///< "unknown", "kvm", "tcg"
Acceleration accelerationFromName(QStringView name);
QString bootModeName(BootMode mode); ///< "template", "cold"
std::optional<BootMode> bootModeFromName(QStringView name);
QString startSourceName(StartSource source); ///< "", "boot", "template", "snapshot"
QString vmmKindName(VmmKind kind); ///< "qemu", "firecracker"
std::optional<VmmKind> vmmKindFromName(QStringView name);
StartSource startSourceFromName(QStringView name);

/// What a client asks for in `sandbox.create`. Limits: vCPUs 1..kMaxVcpus, memory
/// kMinMemoryMib..kMaxMemoryMib MiB, image an image id from the helper's image store.
struct SandboxSpec
{
    static constexpr int kDefaultVcpus = 1;
    static constexpr int kMaxVcpus = 32;
    static constexpr int kDefaultMemoryMib = 256;
    static constexpr int kMinMemoryMib = 64;
    static constexpr int kMaxMemoryMib = 65536;

    QString name;
    int vcpus = kDefaultVcpus;
    int memoryMib = kDefaultMemoryMib;
    QString image = QStringLiteral("default");
    BootMode boot = BootMode::Template;
    /// The backend; unset in a `sandbox.create` that names none (the helper's default is
    /// filled in then), always set in a sandbox the helper reports.
    std::optional<VmmKind> vmm;
    /// The client's own key/value notes on the sandbox (airlock-e2b keeps E2B's `metadata`
    /// here), shown by the window and `airlockctl info`; the helper never interprets them.
    /// At most kMaxLabels; keys 1..kMaxLabelKeyChars, values at most kMaxLabelValueChars,
    /// printable (no control characters).
    QMap<QString, QString> labels;
    static constexpr int kMaxLabels = 64;
    static constexpr int kMaxLabelKeyChars = 256;
    static constexpr int kMaxLabelValueChars = 4096;

    /// Checks name, image id, ranges and labels; InvalidName or InvalidParams with the field
    /// named.
    Result<void> validate() const;
    /// `{name, vcpus, memoryMib, image, boot, labels}`, and `vmm` ("qemu", "firecracker") when
    /// set.
    QJsonObject toJson() const;
    /// Reads the fields above; missing optional fields take defaults; wrong types are
    /// InvalidParams errors naming the field. Does not call validate().
    static Result<SandboxSpec> fromJson(const QJsonObject &object);
    /// `labels` as a JSON object of strings, and back (InvalidParams naming what is wrong;
    /// missing or null: none). Does not check the limits (validate() does).
    QJsonObject labelsJson() const;
    static Result<QMap<QString, QString>> labelsFromJson(const QJsonValue &value);

    friend bool operator==(const SandboxSpec &, const SandboxSpec &) = default;
};

/// A sandbox as the helper reports it: the spec plus live state.
struct Sandbox
{
    SandboxSpec spec;
    SandboxState state = SandboxState::Stopped;
    QString stateReason; ///< why it is stopped when it was not asked to, else empty
    Acceleration acceleration = Acceleration::Unknown;
    QString accelerationWarning; ///< e.g. why KVM was not used; empty when none
    QDateTime createdAt; ///< UTC
    QDateTime startedAt; ///< UTC; invalid when not running
    qint64 vmmPid = 0; ///< 0 when not running
    StartSource startedFrom = StartSource::None;
    /// Set when a guest started from a template or snapshot did not confirm its new identity
    /// through the guest agent: its hostname, addresses and CA may be the snapshot's, so its
    /// network may not work. Empty otherwise.
    QString identityWarning;

    /// `{name, vcpus, memoryMib, image, boot, vmm, state, stateReason, acceleration,
    /// accelerationWarning, createdAt, startedAt, vmmPid, startedFrom, identityWarning}`; times
    /// as ISO 8601 UTC with milliseconds, or null; startedFrom "" when not running.
    QJsonObject toJson() const;
    static Result<Sandbox> fromJson(const QJsonObject &object);

    friend bool operator==(const Sandbox &, const Sandbox &) = default;
};

} // namespace airlock
