#include "core/e2b/sandboxregistry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSaveFile>

#include <algorithm>

namespace airlock::e2b {

namespace {

// QTimer takes an int of milliseconds; a longer end is re-armed when this one fires.
constexpr qint64 kMaxTimerMs = 24LL * 3600 * 1000;

QString isoTime(const QDateTime &time)
{
    return time.toUTC().toString(Qt::ISODateWithMs);
}

} // namespace

QJsonObject E2bSandbox::toJson() const
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("templateId"), templateId},
            {QStringLiteral("image"), image},
            {QStringLiteral("metadata"), metadata},
            {QStringLiteral("envVars"), envVars},
            {QStringLiteral("accessToken"), QString::fromLatin1(accessToken)},
            {QStringLiteral("startedAt"), isoTime(startedAt)},
            {QStringLiteral("endAt"), isoTime(endAt)},
            {QStringLiteral("cpuCount"), cpuCount},
            {QStringLiteral("memoryMb"), memoryMb},
            {QStringLiteral("allowOut"), QJsonArray::fromStringList(allowOut)},
            {QStringLiteral("pausedSnapshot"), pausedSnapshot}};
}

E2bSandbox E2bSandbox::fromJson(const QJsonObject &object)
{
    E2bSandbox sandbox;
    sandbox.id = object.value(QStringLiteral("id")).toString();
    sandbox.templateId = object.value(QStringLiteral("templateId")).toString();
    sandbox.image = object.value(QStringLiteral("image")).toString();
    sandbox.metadata = object.value(QStringLiteral("metadata")).toObject();
    sandbox.envVars = object.value(QStringLiteral("envVars")).toObject();
    sandbox.accessToken = object.value(QStringLiteral("accessToken")).toString().toLatin1();
    sandbox.startedAt =
        QDateTime::fromString(object.value(QStringLiteral("startedAt")).toString(), Qt::ISODate);
    sandbox.endAt =
        QDateTime::fromString(object.value(QStringLiteral("endAt")).toString(), Qt::ISODate);
    sandbox.cpuCount = object.value(QStringLiteral("cpuCount")).toInt(1);
    sandbox.memoryMb = object.value(QStringLiteral("memoryMb")).toInt(256);
    for (const QJsonValue &host : object.value(QStringLiteral("allowOut")).toArray())
        sandbox.allowOut.append(host.toString());
    sandbox.pausedSnapshot = object.value(QStringLiteral("pausedSnapshot")).toString();
    return sandbox;
}

SandboxRegistry::SandboxRegistry(QString stateFile, QObject *parent)
    : QObject(parent), m_stateFile(std::move(stateFile))
{ }

SandboxRegistry::~SandboxRegistry() = default;

QString SandboxRegistry::newId()
{
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    QString id;
    for (int i = 0; i < 20; ++i)
        id.append(QLatin1Char(kAlphabet[QRandomGenerator::system()->bounded(36)]));
    return id;
}

void SandboxRegistry::load()
{
    QFile file(m_stateFile);
    if (!file.open(QIODevice::ReadOnly))
        return;
    const QJsonArray sandboxes = QJsonDocument::fromJson(file.readAll())
                                     .object()
                                     .value(QStringLiteral("sandboxes"))
                                     .toArray();
    for (const QJsonValue &value : sandboxes) {
        const E2bSandbox sandbox = E2bSandbox::fromJson(value.toObject());
        if (sandbox.id.isEmpty() || sandbox.accessToken.isEmpty())
            continue;
        m_sandboxes.insert(sandbox.id, sandbox);
        arm(sandbox.id);
    }
}

void SandboxRegistry::insert(const E2bSandbox &sandbox)
{
    m_sandboxes.insert(sandbox.id, sandbox);
    arm(sandbox.id);
    save();
}

void SandboxRegistry::remove(const QString &id)
{
    m_timers.remove(id);
    if (m_sandboxes.remove(id) > 0)
        save();
}

const E2bSandbox *SandboxRegistry::find(const QString &id) const
{
    const auto it = m_sandboxes.constFind(id);
    return it == m_sandboxes.cend() ? nullptr : &*it;
}

QList<E2bSandbox> SandboxRegistry::all() const
{
    QList<E2bSandbox> list = m_sandboxes.values();
    std::ranges::sort(list, {}, &E2bSandbox::startedAt);
    return list;
}

void SandboxRegistry::setEndAt(const QString &id, const QDateTime &endAt)
{
    const auto it = m_sandboxes.find(id);
    if (it == m_sandboxes.end())
        return;
    it->endAt = endAt;
    arm(id);
    save();
}

void SandboxRegistry::setPaused(const QString &id, const QString &snapshot)
{
    const auto it = m_sandboxes.find(id);
    if (it == m_sandboxes.end())
        return;
    it->pausedSnapshot = snapshot;
    save();
}

void SandboxRegistry::arm(const QString &id)
{
    const E2bSandbox &sandbox = m_sandboxes[id];
    auto timer = std::make_shared<QTimer>();
    timer->setSingleShot(true);
    const qint64 left = std::max<qint64>(0, QDateTime::currentDateTimeUtc().msecsTo(sandbox.endAt));
    timer->setInterval(int(std::min(left, kMaxTimerMs)));
    connect(timer.get(), &QTimer::timeout, this, [this, id, left] {
        if (left > kMaxTimerMs)
            arm(id);
        else if (const E2bSandbox *current = find(id); current && current->pausedSnapshot.isEmpty())
            Q_EMIT expired(id);
    });
    timer->start();
    m_timers.insert(id, timer);
}

void SandboxRegistry::save() const
{
    QDir().mkpath(QFileInfo(m_stateFile).absolutePath());
    QJsonArray sandboxes;
    for (const E2bSandbox &sandbox : all())
        sandboxes.append(sandbox.toJson());
    QSaveFile file(m_stateFile);
    if (!file.open(QIODevice::WriteOnly))
        return;
    // Holds the envd access tokens: the user's own.
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(QJsonDocument(QJsonObject {{QStringLiteral("sandboxes"), sandboxes}}).toJson());
    file.commit();
}

} // namespace airlock::e2b
