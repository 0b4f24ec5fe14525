#include "core/model/snapshot.h"

#include "core/model/jsonfields.h"

#include <QJsonValue>
#include <QRandomGenerator>
#include <QRegularExpression>

namespace airlock {

namespace {

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

Result<QString> optionalText(const QJsonObject &object, const QString &key)
{
    const QJsonValue value = object.value(key);
    if (value.isNull() || value.isUndefined())
        return QString();
    return json::readString(object, key);
}

} // namespace

QString snapshotKindName(SnapshotKind kind)
{
    switch (kind) {
    case SnapshotKind::Manual:
        return QStringLiteral("manual");
    case SnapshotKind::Automatic:
        return QStringLiteral("automatic");
    case SnapshotKind::Safety:
        return QStringLiteral("safety");
    case SnapshotKind::Template:
        return QStringLiteral("template");
    }
    return QStringLiteral("manual");
}

std::optional<SnapshotKind> snapshotKindFromName(QStringView name)
{
    for (auto kind : {SnapshotKind::Manual, SnapshotKind::Automatic, SnapshotKind::Safety,
                      SnapshotKind::Template}) {
        if (name == snapshotKindName(kind))
            return kind;
    }
    return std::nullopt;
}

QJsonObject Snapshot::toJson() const
{
    return QJsonObject {
        {QStringLiteral("id"), id},
        {QStringLiteral("sandbox"), textOrNull(sandbox)},
        {QStringLiteral("parent"), textOrNull(parent)},
        {QStringLiteral("label"), label},
        {QStringLiteral("createdAt"), createdAt.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("kind"), snapshotKindName(kind)},
        {QStringLiteral("logicalBytes"), logicalBytes},
        {QStringLiteral("newBytes"), newBytes},
        {QStringLiteral("newStoredBytes"), newStoredBytes},
        {QStringLiteral("pauseMs"), pauseMs},
        {QStringLiteral("pinned"), pinned},
        {QStringLiteral("image"), image},
        {QStringLiteral("vcpus"), vcpus},
        {QStringLiteral("memoryMib"), memoryMib},
        {QStringLiteral("vmm"), vmmKindName(vmm)},
    };
}

Result<Snapshot> Snapshot::fromJson(const QJsonObject &object)
{
    Snapshot s;
    auto id = json::readString(object, QStringLiteral("id"));
    auto sandbox = optionalText(object, QStringLiteral("sandbox"));
    auto parent = optionalText(object, QStringLiteral("parent"));
    auto label = json::readString(object, QStringLiteral("label"), QString());
    auto created = json::readString(object, QStringLiteral("createdAt"));
    auto kind = json::readString(object, QStringLiteral("kind"));
    constexpr qint64 big = std::numeric_limits<qint64>::max();
    auto logical = json::readInteger(object, QStringLiteral("logicalBytes"), 0, big, 0);
    auto newBytes = json::readInteger(object, QStringLiteral("newBytes"), 0, big, 0);
    auto stored = json::readInteger(object, QStringLiteral("newStoredBytes"), 0, big, 0);
    auto pause = json::readInteger(object, QStringLiteral("pauseMs"), 0, big, 0);
    auto pinned = json::readBool(object, QStringLiteral("pinned"), false);
    auto image = json::readString(object, QStringLiteral("image"), QString());
    auto vcpus = json::readInteger(object, QStringLiteral("vcpus"), 1, 1024, 1);
    auto memory = json::readInteger(object, QStringLiteral("memoryMib"), 1, 1 << 24, 256);
    auto vmm = json::readString(object, QStringLiteral("vmm"), QStringLiteral("qemu"));
    for (const Result<QString> *text :
         {&id, &sandbox, &parent, &label, &created, &kind, &image, &vmm})
        AIRLOCK_TRY(*text);
    for (const Result<qint64> *number : {&logical, &newBytes, &stored, &pause, &vcpus, &memory})
        AIRLOCK_TRY(*number);
    AIRLOCK_TRY(pinned);
    const auto parsedKind = snapshotKindFromName(*kind);
    if (!parsedKind)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'kind' must be manual, automatic, safety or template"));
    s.id = *id;
    s.sandbox = *sandbox;
    s.parent = *parent;
    s.label = *label;
    s.createdAt = QDateTime::fromString(*created, Qt::ISODateWithMs).toUTC();
    if (!s.createdAt.isValid())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'createdAt' must be an ISO 8601 time"));
    s.kind = *parsedKind;
    s.logicalBytes = *logical;
    s.newBytes = *newBytes;
    s.newStoredBytes = *stored;
    s.pauseMs = *pause;
    s.pinned = *pinned;
    s.image = *image;
    s.vcpus = int(*vcpus);
    s.memoryMib = int(*memory);
    const auto parsedVmm = vmmKindFromName(*vmm);
    if (!parsedVmm)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'vmm' must be qemu or firecracker"));
    s.vmm = *parsedVmm;
    return s;
}

Result<QString> Snapshot::validateId(const QString &id)
{
    static const QRegularExpression pattern(QStringLiteral("^[0-9a-f]{16}$"));
    if (!pattern.match(id).hasMatch())
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("snapshot id '%1' is not 16 lower-case hex digits").arg(id.left(40)));
    return id;
}

Result<QString> Snapshot::validateLabel(const QString &label)
{
    if (label.size() > kMaxLabelLength)
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("a snapshot label has at most %1 characters").arg(kMaxLabelLength));
    for (const QChar c : label) {
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("a snapshot label may not contain control characters"));
    }
    return label;
}

QString Snapshot::newId()
{
    return QStringLiteral("%1").arg(QRandomGenerator::system()->generate64(), 16, 16,
                                    QLatin1Char('0'));
}

} // namespace airlock

namespace airlock {

QJsonObject SnapshotSchedule::toJson() const
{
    return QJsonObject {{QStringLiteral("intervalMinutes"), intervalMinutes},
                        {QStringLiteral("hourlyHours"), hourlyHours},
                        {QStringLiteral("dailyDays"), dailyDays}};
}

Result<SnapshotSchedule> SnapshotSchedule::fromJson(const QJsonObject &object)
{
    SnapshotSchedule schedule;
    auto interval = json::readInteger(object, QStringLiteral("intervalMinutes"), 0,
                                      kMaxIntervalMinutes, schedule.intervalMinutes);
    auto hourly =
        json::readInteger(object, QStringLiteral("hourlyHours"), 0, 720, schedule.hourlyHours);
    auto daily =
        json::readInteger(object, QStringLiteral("dailyDays"), 0, 3660, schedule.dailyDays);
    for (const Result<qint64> *value : {&interval, &hourly, &daily})
        AIRLOCK_TRY(*value);
    schedule.intervalMinutes = int(*interval);
    schedule.hourlyHours = int(*hourly);
    schedule.dailyDays = int(*daily);
    return schedule;
}

} // namespace airlock
