#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace airlock {

/// Why a snapshot was taken.
enum class SnapshotKind {
    Manual, ///< a person or script asked (snapshot.create)
    Automatic, ///< the sandbox's snapshot schedule; subject to retention
    Safety, ///< taken by snapshot.restore just before it replaced the running state
    Template, ///< a booted image kept for fast starts (not tied to a sandbox)
};

QString snapshotKindName(SnapshotKind kind); ///< "manual", "automatic", "safety", "template"
std::optional<SnapshotKind> snapshotKindFromName(QStringView name);

/// One snapshot as the registry keeps it and the protocol reports it. The snapshots of a
/// sandbox form a tree through `parent` (a restore or a fork starts a branch; a fork's first
/// snapshot has a parent in another sandbox).
struct Snapshot
{
    static constexpr int kMaxLabelLength = 100;

    QString id; ///< 16 lower-case hex digits, chosen by the helper
    QString sandbox; ///< owning sandbox; empty for templates
    QString parent; ///< id of the snapshot this state descends from; empty for a root
    QString label; ///< free text, at most kMaxLabelLength characters, no control characters
    QDateTime createdAt; ///< UTC
    SnapshotKind kind = SnapshotKind::Manual;
    qint64 logicalBytes = 0; ///< everything the snapshot holds (memory + device state ...)
    qint64 newBytes = 0; ///< bytes of chunks the store did not have before (uncompressed)
    qint64 newStoredBytes = 0; ///< the same, as stored (zstd)
    qint64 pauseMs = 0; ///< how long the guest's CPUs were stopped
    bool pinned = false; ///< kept by retention whatever its age
    // What a restore or fork must boot to receive this state:
    QString image;
    int vcpus = 1;
    int memoryMib = 256;
    /// The VMM whose device state it holds (QEMU's migration stream or Firecracker's
    /// snapshot file): a restore or fork boots the same one.
    VmmKind vmm = VmmKind::Qemu;
    /// Templates only: what the template was made from (image files, QEMU, shape; see
    /// TemplateService::templateKey). A template whose key no longer matches is stale.
    QString templateKey;

    /// `{id, sandbox, parent, label, createdAt, kind, logicalBytes, newBytes, newStoredBytes,
    /// pauseMs, pinned, image, vcpus, memoryMib, vmm}`; parent and sandbox null when empty.
    QJsonObject toJson() const;
    static Result<Snapshot> fromJson(const QJsonObject &object);

    /// InvalidParams unless `id` is 16 lower-case hex digits.
    static Result<QString> validateId(const QString &id);
    /// InvalidParams for labels over the limit or with control characters.
    static Result<QString> validateLabel(const QString &label);
    /// A fresh random id.
    static QString newId();

    friend bool operator==(const Snapshot &, const Snapshot &) = default;
};

} // namespace airlock

namespace airlock {

/// A sandbox's automatic snapshots: taken every `intervalMinutes` while it runs (0: off, the
/// default) and thinned by retention: the newest per hour for `hourlyHours`, then the newest
/// per day until `dailyDays`, then dropped; pinned snapshots are always kept.
struct SnapshotSchedule
{
    static constexpr int kMaxIntervalMinutes = 7 * 24 * 60;
    int intervalMinutes = 0;
    int hourlyHours = 24;
    int dailyDays = 7;

    /// `{intervalMinutes, hourlyHours, dailyDays}`.
    QJsonObject toJson() const;
    /// Missing fields keep their defaults; ranges: interval 0..kMaxIntervalMinutes, hourly
    /// 0..720, daily 0..3660. InvalidParams naming the field otherwise.
    static Result<SnapshotSchedule> fromJson(const QJsonObject &object);

    friend bool operator==(const SnapshotSchedule &, const SnapshotSchedule &) = default;
};

} // namespace airlock
