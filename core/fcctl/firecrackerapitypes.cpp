#include "core/fcctl/firecrackerapitypes.h"

#include <QJsonArray>
#include <QRegularExpression>

namespace airlock::firecracker {

QJsonObject MachineConfig::toJson() const
{
    QJsonObject object {{QStringLiteral("vcpu_count"), vcpuCount},
                        {QStringLiteral("mem_size_mib"), memSizeMib},
                        {QStringLiteral("smt"), smt}};
    if (trackDirtyPages)
        object.insert(QStringLiteral("track_dirty_pages"), *trackDirtyPages);
    return object;
}

QJsonObject BootSource::toJson() const
{
    QJsonObject object {{QStringLiteral("kernel_image_path"), kernelImagePath}};
    if (!initrdPath.isEmpty())
        object.insert(QStringLiteral("initrd_path"), initrdPath);
    if (!bootArgs.isEmpty())
        object.insert(QStringLiteral("boot_args"), bootArgs);
    return object;
}

QJsonObject Drive::toJson() const
{
    return {{QStringLiteral("drive_id"), driveId},
            {QStringLiteral("path_on_host"), pathOnHost},
            {QStringLiteral("is_root_device"), isRootDevice},
            {QStringLiteral("is_read_only"), isReadOnly}};
}

QJsonObject NetworkInterface::toJson() const
{
    QJsonObject object {{QStringLiteral("iface_id"), ifaceId},
                        {QStringLiteral("host_dev_name"), hostDevName}};
    if (!guestMac.isEmpty())
        object.insert(QStringLiteral("guest_mac"), guestMac);
    return object;
}

QJsonObject Vsock::toJson() const
{
    return {{QStringLiteral("guest_cid"), guestCid}, {QStringLiteral("uds_path"), udsPath}};
}

QJsonObject Logger::toJson() const
{
    return {{QStringLiteral("log_path"), logPath},
            {QStringLiteral("level"), level},
            {QStringLiteral("show_level"), showLevel}};
}

QJsonObject EntropyDevice::toJson() const
{
    return {};
}

QJsonObject InstanceActionInfo::toJson() const
{
    QString type;
    switch (actionType) {
    case Type::InstanceStart:
        type = QStringLiteral("InstanceStart");
        break;
    case Type::SendCtrlAltDel:
        type = QStringLiteral("SendCtrlAltDel");
        break;
    case Type::FlushMetrics:
        type = QStringLiteral("FlushMetrics");
        break;
    }
    return {{QStringLiteral("action_type"), type}};
}

QJsonObject VmState::toJson() const
{
    return {{QStringLiteral("state"),
             state == State::Paused ? QStringLiteral("Paused") : QStringLiteral("Resumed")}};
}

QJsonObject SnapshotCreateParams::toJson() const
{
    return {{QStringLiteral("mem_file_path"), memFilePath},
            {QStringLiteral("snapshot_path"), snapshotPath},
            {QStringLiteral("snapshot_type"),
             snapshotType == Type::Full ? QStringLiteral("Full") : QStringLiteral("Diff")}};
}

QJsonObject SnapshotLoadParams::toJson() const
{
    QJsonObject object {{QStringLiteral("snapshot_path"), snapshotPath},
                        {QStringLiteral("mem_backend"),
                         QJsonObject {{QStringLiteral("backend_type"), QStringLiteral("File")},
                                      {QStringLiteral("backend_path"), memBackendPath}}},
                        {QStringLiteral("resume_vm"), resumeVm}};
    if (!networkOverrideIfaceId.isEmpty())
        object.insert(QStringLiteral("network_overrides"),
                      QJsonArray {QJsonObject {
                          {QStringLiteral("iface_id"), networkOverrideIfaceId},
                          {QStringLiteral("host_dev_name"), networkOverrideHostDevName}}});
    if (!vsockOverrideUdsPath.isEmpty())
        object.insert(QStringLiteral("vsock_override"),
                      QJsonObject {{QStringLiteral("uds_path"), vsockOverrideUdsPath}});
    if (trackDirtyPages)
        object.insert(QStringLiteral("track_dirty_pages"), *trackDirtyPages);
    return object;
}

std::optional<FirecrackerVersion> FirecrackerVersion::fromJson(const QJsonObject &object)
{
    const QJsonValue value = object.value(QStringLiteral("firecracker_version"));
    if (!value.isString())
        return std::nullopt;
    static const QRegularExpression pattern(
        QStringLiteral("^v?(\\d{1,4})\\.(\\d{1,4})\\.(\\d{1,4})([-+][0-9A-Za-z.+-]{0,64})?$"));
    const QString text = value.toString();
    const auto match = pattern.match(text);
    if (!match.hasMatch())
        return std::nullopt;
    return FirecrackerVersion {match.captured(1).toInt(), match.captured(2).toInt(),
                               match.captured(3).toInt(), text};
}

} // namespace airlock::firecracker
