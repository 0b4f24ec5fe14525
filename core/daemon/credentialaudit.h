#pragma once

#include <QJsonObject>
#include <QString>

#include <memory>

#include <sys/types.h>

namespace spdlog {
class logger;
}

namespace airlock {

/// The audit trail of credential changes (docs/credentials.md, "Audit"), the sibling of
/// EgressAudit: one JSON object per line in STATE/audit/credentials.jsonl through spdlog's
/// rotating file sink (EgressAudit::kFileBytes per file, EgressAudit::kFiles kept:
/// credentials.1.jsonl is the newest rotated one), flushed after every line, in the root-only
/// audit directory. Each line is also logged at info (category airlock.daemon.audit).
///
/// A line names who and what, never a value:
///
///     {"time":"2026-12-01T10:40:00.123Z","uid":1001,"user":"alice","method":"binding.add",
///      "outcome":"ok","secret":"ci-token","sandbox":"agent","host":"api.test","binding":7}
///
/// `outcome` is "ok" or the error kind of a refused call (permission_denied: someone tried to
/// touch another user's secret). Fields that do not apply are left out; `user` is left out for
/// a uid without a passwd entry.
class CredentialAudit
{
public:
    /// One change; `sandbox`, `host` and `binding` (0: none) as far as they apply, `extra` for
    /// method-specific fields (a fork's `from`).
    struct Entry
    {
        uid_t uid = 0;
        QString method; ///< secret.set, secret.delete, binding.add, binding.remove, snapshot.fork
        QString outcome = QStringLiteral("ok");
        QString secret;
        QString sandbox;
        QString host;
        qint64 binding = 0;
        QJsonObject extra;
    };

    /// Opens (creating) `directory`/credentials.jsonl. A failure is logged and leaves the file
    /// off (isOpen() false); the info log line is still written.
    explicit CredentialAudit(const QString &directory);
    ~CredentialAudit();

    bool isOpen() const { return m_logger != nullptr; }
    QString filePath() const { return m_path; }
    /// Appends one line (time: now, UTC) and logs it.
    void record(const Entry &entry);

    /// The JSON line of `entry` at `time` (what record() writes).
    static QJsonObject line(const Entry &entry, const QDateTime &time);

private:
    QString m_path;
    std::shared_ptr<spdlog::logger> m_logger;
};

} // namespace airlock
