#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace airlock::ctl {

/// `list` output: one row per sandbox under a header (NAME STATE ACCEL VCPUS MEMORY IMAGE
/// UPTIME), columns padded to their widest cell.
QString formatSandboxTable(const QJsonArray &sandboxes, const QDateTime &now);
/// `info` output: every field of one Sandbox as "label: value" lines.
QString formatSandboxInfo(const QJsonObject &sandbox, const QDateTime &now);
/// `images` output: ID KERNEL DISK CREATED DESCRIPTION (DISK `-` for initramfs-only images).
QString formatImageTable(const QJsonArray &images);
/// `secret ls` output: NAME FINGERPRINT CREATED LAST USED USES BINDINGS; never a value.
QString formatSecretTable(const QJsonArray &secrets);
/// `binding ls` output: ID SANDBOX SECRET HOST PATH METHODS PLACEMENT INJECTED DENIED and the
/// guest's environment variable holding the placeholder.
QString formatBindingTable(const QJsonArray &bindings);
/// Rows of cells as text columns padded to the widest cell (the first row is the header).
QString formatTable(const QList<QStringList> &rows);
/// The header of `egress` output: TIME LAYER VERDICT REASON NAME METHOD PATH, fixed widths so
/// that rows printed later (--follow) line up under it.
QString formatEgressHeader();
/// One egress event (docs/protocol.md `egress.event`) as a row under formatEgressHeader();
/// absent fields are "-"; time is UTC "yyyy-MM-dd HH:mm:ss.zzz".
QString formatEgressRow(const QJsonObject &event);
/// "45s", "3m12s", "2h05m", "3d04h": coarse enough to read at a glance.
QString formatDuration(qint64 seconds);

} // namespace airlock::ctl
