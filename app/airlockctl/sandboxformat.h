#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace airlock::ctl {

/// `list` output: one row per sandbox under a header (NAME STATE ACCEL VCPUS MEMORY IMAGE
/// UPTIME), columns padded to their widest cell.
QString formatSandboxTable(const QJsonArray &sandboxes, const QDateTime &now);
/// `info` output: every field of one Sandbox as "label: value" lines.
QString formatSandboxInfo(const QJsonObject &sandbox, const QDateTime &now);
/// `images` output: ID KERNEL CREATED DESCRIPTION.
QString formatImageTable(const QJsonArray &images);
/// "45s", "3m12s", "2h05m", "3d04h": coarse enough to read at a glance.
QString formatDuration(qint64 seconds);

} // namespace airlock::ctl
