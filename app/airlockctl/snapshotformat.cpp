#include "app/airlockctl/snapshotformat.h"

#include <QDateTime>
#include <QJsonArray>
#include <QList>
#include <QStringList>

namespace airlock::ctl {

QString formatBytes(qint64 bytes)
{
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    if (bytes < 1024 * 1024)
        return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'f', 1);
    if (bytes < 1024LL * 1024 * 1024)
        return QStringLiteral("%1 MiB").arg(double(bytes) / (1024 * 1024), 0, 'f', 1);
    return QStringLiteral("%1 GiB").arg(double(bytes) / (1024.0 * 1024 * 1024), 0, 'f', 2);
}

QString formatSnapshotTable(const QJsonObject &listing)
{
    const QString head = listing.value(QStringLiteral("head")).toString();
    QList<QStringList> rows {
        {QStringLiteral("ID"), QStringLiteral("PARENT"), QStringLiteral("CREATED"),
         QStringLiteral("KIND"), QStringLiteral("LABEL"), QStringLiteral("SIZE"),
         QStringLiteral("NEW"), QStringLiteral("STORED"), QStringLiteral("PAUSE")}};
    for (const QJsonValue &value : listing.value(QStringLiteral("snapshots")).toArray()) {
        const QJsonObject s = value.toObject();
        const QString id = s.value(QStringLiteral("id")).toString();
        QString kind = s.value(QStringLiteral("kind")).toString();
        if (s.value(QStringLiteral("pinned")).toBool())
            kind += QStringLiteral(",pinned");
        const QDateTime created = QDateTime::fromString(
            s.value(QStringLiteral("createdAt")).toString(), Qt::ISODateWithMs);
        rows.append({id + (id == head ? QStringLiteral("*") : QString()),
                     s.value(QStringLiteral("parent")).toString().left(8),
                     created.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), kind,
                     s.value(QStringLiteral("label")).toString(),
                     formatBytes(s.value(QStringLiteral("logicalBytes")).toInteger()),
                     formatBytes(s.value(QStringLiteral("newBytes")).toInteger()),
                     formatBytes(s.value(QStringLiteral("newStoredBytes")).toInteger()),
                     QStringLiteral("%1 ms").arg(s.value(QStringLiteral("pauseMs")).toInteger())});
    }
    QList<qsizetype> widths(rows.first().size(), 0);
    for (const QStringList &row : rows) {
        for (qsizetype i = 0; i < row.size(); ++i)
            widths[i] = qMax(widths[i], row[i].size());
    }
    QString text;
    for (const QStringList &row : rows) {
        QString line;
        for (qsizetype i = 0; i < row.size(); ++i)
            line += row[i].leftJustified(widths[i] + 2);
        text += line.trimmed() + u'\n';
    }
    const QJsonObject schedule = listing.value(QStringLiteral("schedule")).toObject();
    if (!schedule.isEmpty()) {
        const int interval = schedule.value(QStringLiteral("intervalMinutes")).toInt();
        text += interval > 0 ? QStringLiteral("automatic snapshots every %1 min; keep hourly %2 h, "
                                              "daily %3 days; * marks the current state's parent\n")
                                   .arg(interval)
                                   .arg(schedule.value(QStringLiteral("hourlyHours")).toInt())
                                   .arg(schedule.value(QStringLiteral("dailyDays")).toInt())
                             : QStringLiteral("automatic snapshots off; * marks the current "
                                              "state's parent\n");
    }
    return text;
}

} // namespace airlock::ctl
