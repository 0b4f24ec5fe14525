#include "core/daemon/egressaudit.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QLoggingCategory>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcAudit, "airlock.daemon.audit")
}

EgressAudit::EgressAudit(const QString &directory)
    : m_path(QDir(directory).filePath(QStringLiteral("egress.jsonl")))
    , m_alertsPath(QDir(directory).filePath(QStringLiteral("alerts.jsonl")))
{
    if (!QDir().mkpath(directory) || ::chmod(QFile::encodeName(directory).constData(), 0700) != 0) {
        qCWarning(lcAudit, "cannot create the audit directory %s", qPrintable(directory));
        return;
    }
    auto open = [](const QString &path, const char *name) -> std::shared_ptr<spdlog::logger> {
        try {
            auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
                QFile::encodeName(path).toStdString(), kFileBytes, kFiles);
            // Not registered globally: several helpers' tests may run in one process.
            auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
            logger->set_pattern("%v");
            logger->set_level(spdlog::level::info);
            logger->flush_on(spdlog::level::info);
            return logger;
        } catch (const spdlog::spdlog_ex &error) {
            qCWarning(lcAudit, "cannot open the audit log %s: %s", qPrintable(path), error.what());
            return nullptr;
        }
    };
    m_logger = open(m_path, "airlock-egress-audit");
    if (m_logger)
        m_alerts = open(m_alertsPath, "airlock-egress-alerts");
}

EgressAudit::~EgressAudit() = default;

void EgressAudit::write(qint64 seq, const QJsonObject &event)
{
    if (!m_logger)
        return;
    QJsonObject line = event;
    line.insert(QStringLiteral("seq"), seq);
    const std::string text = QJsonDocument(line).toJson(QJsonDocument::Compact).toStdString();
    m_logger->info(text);
    if (m_alerts && event.value(QStringLiteral("alert")).toBool())
        m_alerts->info(text);
}

} // namespace airlock
