#include "core/daemon/credentialaudit.h"

#include "core/daemon/egressaudit.h"
#include "core/daemon/hostaccounts.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QLoggingCategory>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcCredentialAudit, "airlock.daemon.audit")
}

CredentialAudit::CredentialAudit(const QString &directory)
    : m_path(QDir(directory).filePath(QStringLiteral("credentials.jsonl")))
{
    if (!QDir().mkpath(directory) || ::chmod(QFile::encodeName(directory).constData(), 0700) != 0) {
        qCWarning(lcCredentialAudit, "cannot create the audit directory %s", qPrintable(directory));
        return;
    }
    try {
        auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            QFile::encodeName(m_path).toStdString(), EgressAudit::kFileBytes, EgressAudit::kFiles);
        // Not registered globally: several helpers' tests may run in one process.
        m_logger = std::make_shared<spdlog::logger>("airlock-credential-audit", std::move(sink));
        m_logger->set_pattern("%v");
        m_logger->set_level(spdlog::level::info);
        m_logger->flush_on(spdlog::level::info);
    } catch (const spdlog::spdlog_ex &error) {
        qCWarning(lcCredentialAudit, "cannot open the audit log %s: %s", qPrintable(m_path),
                  error.what());
        m_logger.reset();
    }
}

CredentialAudit::~CredentialAudit() = default;

QJsonObject CredentialAudit::line(const Entry &entry, const QDateTime &time)
{
    QJsonObject object {
        {QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("uid"), qint64(entry.uid)},
        {QStringLiteral("method"), entry.method},
        {QStringLiteral("outcome"), entry.outcome},
    };
    const QString user = HostAccounts::userName(entry.uid);
    if (!user.isEmpty())
        object.insert(QStringLiteral("user"), user);
    if (!entry.secret.isEmpty())
        object.insert(QStringLiteral("secret"), entry.secret);
    if (!entry.sandbox.isEmpty())
        object.insert(QStringLiteral("sandbox"), entry.sandbox);
    if (!entry.host.isEmpty())
        object.insert(QStringLiteral("host"), entry.host);
    if (entry.binding > 0)
        object.insert(QStringLiteral("binding"), entry.binding);
    for (auto it = entry.extra.constBegin(); it != entry.extra.constEnd(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

void CredentialAudit::record(const Entry &entry)
{
    const QByteArray text =
        QJsonDocument(line(entry, QDateTime::currentDateTimeUtc())).toJson(QJsonDocument::Compact);
    qCInfo(lcCredentialAudit, "credentials: %s", text.constData());
    if (m_logger)
        m_logger->info(text.toStdString());
}

} // namespace airlock
