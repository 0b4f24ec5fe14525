#include "core/daemon/policyhistory.h"

#include "core/daemon/hostaccounts.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <algorithm>
#include <map>
#include <sys/stat.h>

namespace airlock {

namespace {

QByteArray ruleKey(const EgressRule &rule)
{
    return QJsonDocument(rule.toJson()).toJson(QJsonDocument::Compact);
}

QJsonArray rulesJson(const QList<EgressRule> &rules)
{
    QJsonArray array;
    for (const EgressRule &rule : rules) {
        if (array.size() >= PolicyHistory::kMaxListedRules)
            break;
        array.append(rule.toJson());
    }
    return array;
}

} // namespace

PolicyHistory::PolicyHistory(QString directory) : m_directory(std::move(directory)) { }

QString PolicyHistory::filePath(const QString &name) const
{
    return QDir(m_directory).filePath(name + QStringLiteral(".jsonl"));
}

QString PolicyHistory::rotatedFilePath(const QString &name) const
{
    return QDir(m_directory).filePath(name + QStringLiteral(".1.jsonl"));
}

std::pair<QList<EgressRule>, QList<EgressRule>> PolicyHistory::diff(const EgressPolicy &before,
                                                                    const EgressPolicy &after)
{
    // Counted, so that a duplicated rule added or removed once shows once.
    std::map<QByteArray, int> remaining;
    for (const EgressRule &rule : before.rules)
        ++remaining[ruleKey(rule)];
    QList<EgressRule> added;
    for (const EgressRule &rule : after.rules) {
        auto it = remaining.find(ruleKey(rule));
        if (it != remaining.end() && it->second > 0)
            --it->second;
        else
            added.append(rule);
    }
    QList<EgressRule> removed;
    for (const EgressRule &rule : before.rules) {
        auto it = remaining.find(ruleKey(rule));
        if (it != remaining.end() && it->second > 0) {
            --it->second;
            removed.append(rule);
        }
    }
    return {added, removed};
}

QList<QJsonObject> PolicyHistory::readAll(const QString &name) const
{
    QList<QJsonObject> lines;
    for (const QString &path : {rotatedFilePath(name), filePath(name)}) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        // Bounded by rotation: at most kFileBytes plus one line each.
        const QList<QByteArray> raw = file.readAll().split('\n');
        for (const QByteArray &line : raw) {
            if (line.trimmed().isEmpty())
                continue;
            const QJsonDocument document = QJsonDocument::fromJson(line);
            if (document.isObject())
                lines.append(document.object());
        }
    }
    return lines;
}

qint64 PolicyHistory::lastSeq(const QString &name) const
{
    if (auto it = m_lastSeq.constFind(name); it != m_lastSeq.constEnd())
        return *it;
    qint64 last = 0;
    for (const QJsonObject &line : readAll(name))
        last = std::max(last, line.value(QStringLiteral("seq")).toInteger());
    m_lastSeq.insert(name, last);
    return last;
}

Result<void> PolicyHistory::append(const QString &name, const EgressPolicy &before,
                                   const EgressPolicy &after, const PolicyChangeOrigin &origin,
                                   const QDateTime &time)
{
    if (before == after)
        return {};
    if (!QDir().mkpath(m_directory)
        || ::chmod(QFile::encodeName(m_directory).constData(), 0700) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create %1").arg(m_directory));
    const auto [added, removed] = diff(before, after);
    const qint64 seq = lastSeq(name) + 1;
    QJsonObject line {
        {QStringLiteral("seq"), seq},
        {QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("uid"), origin.uid ? QJsonValue(qint64(*origin.uid)) : QJsonValue()},
        {QStringLiteral("user"),
         origin.uid ? HostAccounts::userName(*origin.uid) : QStringLiteral("airlockd")},
        {QStringLiteral("source"), origin.source},
        {QStringLiteral("oldRevision"), before.revision()},
        {QStringLiteral("newRevision"), after.revision()},
        {QStringLiteral("rules"), qint64(after.rules.size())},
        {QStringLiteral("added"), rulesJson(added)},
        {QStringLiteral("removed"), rulesJson(removed)},
        {QStringLiteral("addedCount"), qint64(added.size())},
        {QStringLiteral("removedCount"), qint64(removed.size())},
    };
    const QJsonObject policy = after.toJson();
    if (QJsonDocument(policy).toJson(QJsonDocument::Compact).size() <= kMaxStoredPolicyBytes)
        line.insert(QStringLiteral("policy"), policy);
    const QByteArray bytes = QJsonDocument(line).toJson(QJsonDocument::Compact) + '\n';

    const QString path = filePath(name);
    if (QFileInfo(path).size() + bytes.size() > kFileBytes && QFileInfo::exists(path)) {
        // rename(2) replaces the older rotated file in one step.
        if (::rename(QFile::encodeName(path).constData(),
                     QFile::encodeName(rotatedFilePath(name)).constData())
            != 0)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot rotate %1: %2").arg(path, qt_error_string(errno)));
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadWrite | QIODevice::Append))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot open %1: %2").arg(path, file.errorString()));
    // One write of the whole line: a crash leaves at most a cut last line, which readers skip;
    // the next line starts on a line of its own.
    QByteArray out = bytes;
    if (file.size() > 0 && file.seek(file.size() - 1) && file.read(1) != "\n")
        out.prepend('\n');
    if (file.write(out) != out.size() || !file.flush())
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    m_lastSeq.insert(name, seq);
    return {};
}

QJsonArray PolicyHistory::entries(const QString &name, int limit) const
{
    const QList<QJsonObject> lines = readAll(name);
    QJsonArray newestFirst;
    for (qsizetype i = lines.size() - 1; i >= 0 && newestFirst.size() < limit; --i)
        newestFirst.append(lines.at(i));
    return newestFirst;
}

void PolicyHistory::remove(const QString &name)
{
    QFile::remove(filePath(name));
    QFile::remove(rotatedFilePath(name));
    m_lastSeq.remove(name);
}

} // namespace airlock
