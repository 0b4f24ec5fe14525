#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <memory>

namespace airlock::e2b {

/// One sandbox made through airlock-e2b: the E2B view (spec/openapi.yml `Sandbox` and
/// `ListedSandbox`: sandboxID, templateID, metadata, startedAt, endAt, cpuCount, memoryMB) of an
/// Airlock sandbox named `e2b-<sandboxID>`, with its envd access token and the envVars every
/// command gets (E2B's `envVars` of POST /v2/sandboxes).
struct E2bSandbox
{
    QString id;
    QString templateId;
    QString image;
    QJsonObject metadata;
    QJsonObject envVars;
    QByteArray accessToken;
    QDateTime startedAt;
    QDateTime endAt;
    int cpuCount = 1;
    int memoryMb = 256;
    /// The hosts of E2B's `network.allowOut`, as they became the sandbox's Airlock policy.
    QStringList allowOut;
    /// Set while the sandbox is paused (E2B's pause: a snapshot, then the VMM stopped): the
    /// snapshot connect restores. A paused sandbox does not expire.
    QString pausedSnapshot;

    /// The Airlock sandbox name (docs/protocol.md: [a-z0-9][a-z0-9-]{0,62}).
    QString airlockName() const { return QStringLiteral("e2b-") + id; }
    QJsonObject toJson() const;
    static E2bSandbox fromJson(const QJsonObject &object);
};

/// The sandboxes this user's airlock-e2b made, kept in a JSON file (0600) so that their end
/// times, tokens and metadata survive a restart; expired() fires at a sandbox's endAt (E2B's
/// timeout: "After the timeout expires the sandbox will be automatically killed"), also for one
/// whose end passed while airlock-e2b was not running (at load()).
class SandboxRegistry : public QObject
{
    Q_OBJECT
public:
    explicit SandboxRegistry(QString stateFile, QObject *parent = nullptr);
    ~SandboxRegistry() override;

    /// Reads the state file (a missing one is an empty registry) and arms the timers.
    void load();
    void insert(const E2bSandbox &sandbox);
    void remove(const QString &id);
    const E2bSandbox *find(const QString &id) const;
    QList<E2bSandbox> all() const;
    /// Moves the sandbox's end to `endAt` (re-arming its timer).
    void setEndAt(const QString &id, const QDateTime &endAt);
    /// Marks the sandbox paused from `snapshot` (empty: running again).
    void setPaused(const QString &id, const QString &snapshot);
    /// A fresh id of 20 lower-case letters and digits, as E2B's sandbox ids look.
    static QString newId();

Q_SIGNALS:
    void expired(const QString &id);

private:
    void arm(const QString &id);
    void save() const;

    QString m_stateFile;
    QHash<QString, E2bSandbox> m_sandboxes;
    QHash<QString, std::shared_ptr<QTimer>> m_timers;
};

} // namespace airlock::e2b
