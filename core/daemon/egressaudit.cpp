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
{
    if (!QDir().mkpath(directory) || ::chmod(QFile::encodeName(directory).constData(), 0700) != 0) {
        qCWarning(lcAudit, "cannot create the audit directory %s", qPrintable(directory));
        return;
    }
    try {
        auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            QFile::encodeName(m_path).toStdString(), kFileBytes, kFiles);
        // Not registered globally: several helpers' tests may run in one process.
        m_logger = std::make_shared<spdlog::logger>("airlock-egress-audit", std::move(sink));
        m_logger->set_pattern("%v");
        m_logger->set_level(spdlog::level::info);
        m_logger->flush_on(spdlog::level::info);
    } catch (const spdlog::spdlog_ex &error) {
        qCWarning(lcAudit, "cannot open the audit log %s: %s", qPrintable(m_path), error.what());
        m_logger.reset();
    }
}

EgressAudit::~EgressAudit() = default;

void EgressAudit::write(qint64 seq, const QJsonObject &event)
{
    if (!m_logger)
        return;
    QJsonObject line = event;
    line.insert(QStringLiteral("seq"), seq);
    m_logger->info(QJsonDocument(line).toJson(QJsonDocument::Compact).toStdString());
}

} // namespace airlock
