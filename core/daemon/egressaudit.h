#pragma once

#include <QJsonObject>
#include <QString>

#include <memory>

namespace spdlog {
class logger;
}

namespace airlock {

/// The host's egress audit trail: one JSON object per line (the gateway's event plus `seq`),
/// written through spdlog's rotating file sink to STATE/audit/egress.jsonl (10 MiB per file,
/// 10 files kept: egress.1.jsonl is the newest rotated one). One file per host, every sandbox
/// in it; flushed after each line so a crash loses nothing already decided. The directory is
/// root-only (0700). Events with `alert` go to STATE/audit/alerts.jsonl as well (same
/// rotation), so a flood of ordinary decisions cannot rotate them away
/// (docs/reviews/2026-12-01-credentials-redteam.md#f6; the gateways' alert rate is bounded,
/// docs/gateway.md "Event rate").
class EgressAudit
{
public:
    static constexpr std::size_t kFileBytes = 10 * 1024 * 1024;
    static constexpr std::size_t kFiles = 10;

    /// Opens (creating) `directory`/egress.jsonl. A failure is logged and leaves the audit off
    /// (isOpen() false): the helper keeps serving.
    explicit EgressAudit(const QString &directory);
    ~EgressAudit();

    bool isOpen() const { return m_logger != nullptr; }
    QString filePath() const { return m_path; }
    QString alertsFilePath() const { return m_alertsPath; }
    /// Appends one line.
    void write(qint64 seq, const QJsonObject &event);

private:
    QString m_path;
    QString m_alertsPath;
    std::shared_ptr<spdlog::logger> m_logger;
    std::shared_ptr<spdlog::logger> m_alerts;
};

} // namespace airlock
