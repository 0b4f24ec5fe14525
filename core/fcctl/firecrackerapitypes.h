#pragma once

#include <QJsonObject>
#include <QString>

#include <optional>

namespace airlock::firecracker {

// The request bodies of Firecracker's API (Swagger 2.0 description in
// tests/firecracker/firecracker-api-v1.yaml, "definitions"), one struct per definition Airlock
// sends. Each toJson() writes exactly the fields the definition names, with its JSON types; an
// optional member is left out when unset, as Firecracker's defaults then apply. Firecracker
// refuses unknown fields (its request types are `deny_unknown_fields`), so nothing else may
// ever be added here.

/// `MachineConfiguration` (PUT /machine-config, pre-boot only).
struct MachineConfig
{
    int vcpuCount = 1; ///< vcpu_count, 1..32 (1 or even with SMT, which Airlock leaves off)
    int memSizeMib = 128; ///< mem_size_mib
    bool smt = false;
    /// track_dirty_pages: KVM's dirty page log, which Diff snapshots are made of; set only when
    /// the version has FirecrackerVersion::hasDiffSnapshots().
    std::optional<bool> trackDirtyPages;
    QJsonObject toJson() const;
};

/// `BootSource` (PUT /boot-source, pre-boot only).
struct BootSource
{
    QString kernelImagePath; ///< kernel_image_path: uncompressed ELF vmlinux
    QString initrdPath; ///< initrd_path; empty: none
    QString bootArgs; ///< boot_args; empty: Firecracker's default
    QJsonObject toJson() const;
};

/// `Drive` (PUT /drives/{drive_id}, pre-boot only): a virtio-blk device on a raw file.
struct Drive
{
    QString driveId; ///< drive_id; also the path parameter
    QString pathOnHost; ///< path_on_host: a raw image (Firecracker has no qcow2)
    bool isRootDevice = false; ///< is_root_device: Airlock boots from the initrd, so false
    bool isReadOnly = false; ///< is_read_only
    QJsonObject toJson() const;
};

/// `NetworkInterface` (PUT /network-interfaces/{iface_id}, pre-boot only).
struct NetworkInterface
{
    QString ifaceId; ///< iface_id; also the path parameter
    QString hostDevName; ///< host_dev_name: the tap, opened by Firecracker by name
    QString guestMac; ///< guest_mac; empty: Firecracker picks one
    QJsonObject toJson() const;
};

/// `Vsock` (PUT /vsock, pre-boot only). The host end is a Unix socket Firecracker listens on;
/// host-initiated connections send `CONNECT <port>\n` first (GuestAgent over FirecrackerVsock).
struct Vsock
{
    int guestCid = 3; ///< guest_cid, at least 3
    QString udsPath; ///< uds_path
    QJsonObject toJson() const;
};

/// `Logger` (PUT /logger): Firecracker's own log, kept off its stdout (the serial console).
struct Logger
{
    QString logPath; ///< log_path: an existing file or named pipe
    QString level = QStringLiteral("Warning"); ///< Error, Warning, Info, Debug, Trace, Off
    bool showLevel = true; ///< show_level
    QJsonObject toJson() const;
};

/// `EntropyDevice` (PUT /entropy, pre-boot only): virtio-rng, no rate limiter.
struct EntropyDevice
{
    QJsonObject toJson() const;
};

/// `InstanceActionInfo` (PUT /actions).
struct InstanceActionInfo
{
    enum class Type { InstanceStart, SendCtrlAltDel, FlushMetrics };
    Type actionType = Type::InstanceStart;
    QJsonObject toJson() const;
};

/// `Vm` (PATCH /vm, post-boot only).
struct VmState
{
    enum class State { Paused, Resumed };
    State state = State::Paused;
    QJsonObject toJson() const;
};

/// `SnapshotCreateParams` (PUT /snapshot/create, post-boot, paused guest).
struct SnapshotCreateParams
{
    enum class Type { Full, Diff };
    QString memFilePath; ///< mem_file_path: where the guest memory is written
    QString snapshotPath; ///< snapshot_path: where the microVM (device) state is written
    Type snapshotType = Type::Full; ///< snapshot_type
    QJsonObject toJson() const;
};

/// `SnapshotLoadParams` (PUT /snapshot/load, on a fresh process only). The memory comes from
/// a `MemoryBackend` of type File (`mem_file_path` is deprecated).
struct SnapshotLoadParams
{
    QString snapshotPath; ///< snapshot_path
    QString memBackendPath; ///< mem_backend.backend_path (backend_type File)
    bool resumeVm = false; ///< resume_vm
    /// network_overrides[0]: the tap of this start, when it differs from the snapshot's
    /// (a fork). Empty: none sent.
    QString networkOverrideIfaceId;
    QString networkOverrideHostDevName;
    /// vsock_override.uds_path; empty: none sent.
    QString vsockOverrideUdsPath;
    /// track_dirty_pages (not saved in a snapshot, so given again at each load); unset: not
    /// sent (FirecrackerVersion::hasDiffSnapshots()).
    std::optional<bool> trackDirtyPages;
    QJsonObject toJson() const;
};

/// `FirecrackerVersion` (GET /version), and what Airlock may use of that version. Features are
/// enabled from this, never assumed. Thresholds: PUT /entropy and the snapshot `mem_backend`
/// came with 1.4 (Firecracker's CHANGELOG.md); the two snapshot-load overrides are taken from
/// the 1.17 description this backend is tested against (tests/firecracker), and are not sent
/// to older releases, whose exact first release is not checked here. Diff snapshots: see
/// hasDiffSnapshots().
struct FirecrackerVersion
{
    int major = 0;
    int minor = 0;
    int patch = 0;
    QString text; ///< firecracker_version as reported, e.g. "1.17.0-dev"

    /// Parses `{"firecracker_version": "X.Y.Z[-suffix]"}`; nullopt when it is not that.
    static std::optional<FirecrackerVersion> fromJson(const QJsonObject &object);
    bool atLeast(int wantMajor, int wantMinor) const
    {
        return major > wantMajor || (major == wantMajor && minor >= wantMinor);
    }
    /// The oldest release Airlock drives: 1.8 describes the virtio-mmio devices in ACPI tables
    /// (CHANGELOG 1.8.0), which is how the images' Debian kernel finds them (its virtio_mmio has
    /// no command-line devices, the only way earlier releases describe them).
    bool supported() const { return atLeast(1, 8); }
    /// PUT /entropy (virtio-rng).
    bool hasEntropy() const { return atLeast(1, 4); }
    /// SnapshotLoadParams.network_overrides and vsock_override (a fork's own tap and socket).
    bool hasLoadOverrides() const { return atLeast(1, 17); }
    /// Diff snapshots with KVM dirty page tracking: `track_dirty_pages` in PUT /machine-config
    /// (CHANGELOG 0.23.0) and in PUT /snapshot/load (1.13.0, which deprecated its older name
    /// `enable_diff_snapshots`), and diff memory files that are right for every guest: before
    /// 1.15.0 Firecracker corrupted them for x86 guests of more than 3 GiB (several memory
    /// slots, CHANGELOG 1.15.0 #5705). Older releases get neither field and Full snapshots only.
    bool hasDiffSnapshots() const { return atLeast(1, 15); }
};

} // namespace airlock::firecracker
