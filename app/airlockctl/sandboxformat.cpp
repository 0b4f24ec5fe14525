#include "app/airlockctl/sandboxformat.h"

#include "core/model/printabletext.h"

#include <QStringList>

namespace airlock::ctl {

namespace {

/// The field as text a terminal shows as it is (a helper of another version may send a
/// guest's control bytes unescaped).
QString field(const QJsonObject &object, const char *key)
{
    return printableText(object.value(QLatin1String(key)).toVariant().toString());
}

QString orDash(const QString &text)
{
    return text.isEmpty() ? QStringLiteral("-") : text;
}

QString uptime(const QJsonObject &sandbox, const QDateTime &now)
{
    const QDateTime started = QDateTime::fromString(field(sandbox, "startedAt"), Qt::ISODateWithMs);
    if (!started.isValid())
        return QStringLiteral("-");
    return formatDuration(std::max<qint64>(0, started.secsTo(now)));
}

} // namespace

QString formatTable(const QList<QStringList> &rows)
{
    QList<qsizetype> widths;
    for (const QStringList &row : rows) {
        for (qsizetype i = 0; i < row.size(); ++i) {
            if (widths.size() <= i)
                widths.append(0);
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    QString text;
    for (const QStringList &row : rows) {
        QString line;
        for (qsizetype i = 0; i < row.size(); ++i) {
            if (i + 1 < row.size())
                line += row[i].leftJustified(widths[i] + 2);
            else
                line += row[i];
        }
        text += line + QLatin1Char('\n');
    }
    return text;
}

namespace { } // namespace

QString formatDuration(qint64 seconds)
{
    const qint64 days = seconds / 86400;
    const qint64 hours = seconds % 86400 / 3600;
    const qint64 minutes = seconds % 3600 / 60;
    const qint64 secs = seconds % 60;
    if (days > 0)
        return QStringLiteral("%1d%2h").arg(days).arg(hours, 2, 10, QLatin1Char('0'));
    if (hours > 0)
        return QStringLiteral("%1h%2m").arg(hours).arg(minutes, 2, 10, QLatin1Char('0'));
    if (minutes > 0)
        return QStringLiteral("%1m%2s").arg(minutes).arg(secs, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1s").arg(secs);
}

QString formatSandboxTable(const QJsonArray &sandboxes, const QDateTime &now)
{
    QList<QStringList> rows {{QStringLiteral("NAME"), QStringLiteral("STATE"),
                              QStringLiteral("ACCEL"), QStringLiteral("VCPUS"),
                              QStringLiteral("MEMORY"), QStringLiteral("IMAGE"),
                              QStringLiteral("UPTIME")}};
    for (const QJsonValue &value : sandboxes) {
        const QJsonObject sandbox = value.toObject();
        rows.append({field(sandbox, "name"), field(sandbox, "state"),
                     field(sandbox, "acceleration"), field(sandbox, "vcpus"),
                     field(sandbox, "memoryMib") + QStringLiteral(" MiB"), field(sandbox, "image"),
                     uptime(sandbox, now)});
    }
    return formatTable(rows);
}

QString formatSandboxInfo(const QJsonObject &sandbox, const QDateTime &now)
{
    // A client's labels (airlock-e2b: the E2B metadata), key=value sorted by key; the helper
    // refuses control characters in them.
    QStringList labels;
    const QJsonObject labelObject = sandbox.value(QStringLiteral("labels")).toObject();
    for (auto it = labelObject.begin(); it != labelObject.end(); ++it)
        labels.append(it.key() + QLatin1Char('=') + it.value().toString());
    const QList<QPair<QString, QString>> lines {
        {QStringLiteral("Name"), field(sandbox, "name")},
        {QStringLiteral("State"), field(sandbox, "state")},
        {QStringLiteral("State reason"), orDash(field(sandbox, "stateReason"))},
        {QStringLiteral("Acceleration"), field(sandbox, "acceleration")},
        {QStringLiteral("Acceleration warning"), orDash(field(sandbox, "accelerationWarning"))},
        {QStringLiteral("vCPUs"), field(sandbox, "vcpus")},
        {QStringLiteral("Memory"), field(sandbox, "memoryMib") + QStringLiteral(" MiB")},
        {QStringLiteral("Image"), field(sandbox, "image")},
        {QStringLiteral("Boot"), orDash(field(sandbox, "boot"))},
        {QStringLiteral("VMM"), orDash(field(sandbox, "vmm"))},
        {QStringLiteral("Created"), orDash(field(sandbox, "createdAt"))},
        {QStringLiteral("Started"), orDash(field(sandbox, "startedAt"))},
        {QStringLiteral("Started from"), orDash(field(sandbox, "startedFrom"))},
        {QStringLiteral("Identity warning"), orDash(field(sandbox, "identityWarning"))},
        {QStringLiteral("Labels"), orDash(labels.join(QStringLiteral(", ")))},
        {QStringLiteral("Uptime"), uptime(sandbox, now)},
        {QStringLiteral("VMM pid"),
         sandbox.value(QStringLiteral("vmmPid")).toInteger() > 0 ? field(sandbox, "vmmPid")
                                                                 : QStringLiteral("-")},
    };
    qsizetype width = 0;
    for (const auto &line : lines)
        width = std::max(width, line.first.size());
    QString text;
    for (const auto &[label, value] : lines)
        text += (label + QLatin1Char(':')).leftJustified(width + 2) + value + QLatin1Char('\n');
    return text;
}

QString formatImageTable(const QJsonArray &images)
{
    QList<QStringList> rows {{QStringLiteral("ID"), QStringLiteral("KERNEL"),
                              QStringLiteral("DISK"), QStringLiteral("CREATED"),
                              QStringLiteral("DESCRIPTION")}};
    for (const QJsonValue &value : images) {
        const QJsonObject image = value.toObject();
        rows.append({field(image, "id"), orDash(field(image, "kernel")),
                     orDash(field(image, "disk")), orDash(field(image, "createdAt")),
                     field(image, "description")});
    }
    return formatTable(rows);
}

QString formatSecretTable(const QJsonArray &secrets)
{
    QList<QStringList> rows {{QStringLiteral("NAME"), QStringLiteral("OWNER"),
                              QStringLiteral("FINGERPRINT"), QStringLiteral("CREATED"),
                              QStringLiteral("LAST USED"), QStringLiteral("USES"),
                              QStringLiteral("BINDINGS")}};
    for (const QJsonValue &value : secrets) {
        const QJsonObject secret = value.toObject();
        QStringList ids;
        for (const QJsonValue &id : secret.value(QStringLiteral("bindings")).toArray())
            ids.append(QString::number(id.toInteger()));
        const QString problem = field(secret, "problem");
        // A uid without a passwd entry on the helper's host has no name to show.
        const QString owner = field(secret, "owner").isEmpty()
            ? (secret.contains(QStringLiteral("ownerUid"))
                   ? QStringLiteral("uid %1").arg(field(secret, "ownerUid"))
                   : QStringLiteral("-"))
            : field(secret, "owner");
        rows.append({field(secret, "name"), owner,
                     problem.isEmpty() ? orDash(field(secret, "fingerprint"))
                                       : QStringLiteral("DAMAGED: ") + problem,
                     orDash(field(secret, "created")), orDash(field(secret, "lastUsed")),
                     field(secret, "useCount"), orDash(ids.join(QLatin1Char(',')))});
    }
    return formatTable(rows);
}

QString formatBindingTable(const QJsonArray &bindings)
{
    QList<QStringList> rows {{QStringLiteral("ID"), QStringLiteral("SANDBOX"),
                              QStringLiteral("SECRET"), QStringLiteral("HOST"),
                              QStringLiteral("PATH"), QStringLiteral("METHODS"),
                              QStringLiteral("PLACEMENT"), QStringLiteral("INJECTED"),
                              QStringLiteral("DENIED"), QStringLiteral("GUEST VARIABLE")}};
    for (const QJsonValue &value : bindings) {
        const QJsonObject binding = value.toObject();
        const QJsonObject placement = binding.value(QStringLiteral("placement")).toObject();
        const QString where = field(placement, "type") == QStringLiteral("basic")
            ? QStringLiteral("basic auth as %1").arg(field(placement, "username"))
            : QStringLiteral("%1: %2").arg(field(placement, "header"),
                                           field(placement, "template"));
        QStringList methods;
        for (const QJsonValue &method : binding.value(QStringLiteral("methods")).toArray())
            methods.append(method.toString());
        const QJsonObject stats = binding.value(QStringLiteral("stats")).toObject();
        rows.append({field(binding, "id"), field(binding, "sandbox"), field(binding, "secret"),
                     field(binding, "host"), orDash(field(binding, "pathPrefix")),
                     methods.isEmpty() ? QStringLiteral("any") : methods.join(QLatin1Char(',')),
                     where, field(stats, "injections"), field(stats, "denied"),
                     field(binding, "placeholderVariable")});
    }
    return formatTable(rows);
}

namespace {

/// Column widths of the egress table; the last column (PATH) is not padded.
constexpr int kEgressWidths[] = {23, 5, 7, 22, 32, 7};

QString egressLine(const QStringList &cells)
{
    QString line;
    for (qsizetype i = 0; i < cells.size(); ++i) {
        if (i + 1 < cells.size())
            line += cells[i].leftJustified(kEgressWidths[i]) + QLatin1Char(' ');
        else
            line += cells[i];
    }
    return line.trimmed() + QLatin1Char('\n');
}

} // namespace

QString formatEgressHeader()
{
    return egressLine({QStringLiteral("TIME"), QStringLiteral("LAYER"), QStringLiteral("VERDICT"),
                       QStringLiteral("REASON"), QStringLiteral("NAME"), QStringLiteral("METHOD"),
                       QStringLiteral("PATH")});
}

QString formatEgressRow(const QJsonObject &event)
{
    const QDateTime time = QDateTime::fromString(field(event, "time"), Qt::ISODateWithMs);
    QString name = field(event, "name");
    if (name.isEmpty())
        name = field(event, "host");
    const QString port = field(event, "port");
    if (!name.isEmpty() && !port.isEmpty() && field(event, "layer") != u"dns")
        name += QLatin1Char(':') + port;
    return egressLine({
        time.isValid() ? time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"))
                       : orDash(field(event, "time")),
        orDash(field(event, "layer")),
        orDash(field(event, "verdict")),
        orDash(field(event, "reason")),
        orDash(name),
        orDash(field(event, "method")),
        orDash(field(event, "path")),
    });
}

} // namespace airlock::ctl
