#include "core/daemon/logging.h"

#include <cstdlib>
#include <utility>

#include <QDir>
#include <QLoggingCategory>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

namespace airlock {

namespace {

constexpr std::size_t kLogFileBytes = 10 * 1024 * 1024;
constexpr std::size_t kLogFiles = 5;

spdlog::level::level_enum levelFromName(const QString &level)
{
    if (level == u"trace")
        return spdlog::level::trace;
    if (level == u"debug")
        return spdlog::level::debug;
    if (level == u"warning")
        return spdlog::level::warn;
    if (level == u"error")
        return spdlog::level::err;
    return spdlog::level::info;
}

void forwardToSpdlog(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    spdlog::level::level_enum level = spdlog::level::info;
    switch (type) {
    case QtDebugMsg:
        level = spdlog::level::debug;
        break;
    case QtInfoMsg:
        level = spdlog::level::info;
        break;
    case QtWarningMsg:
        level = spdlog::level::warn;
        break;
    case QtCriticalMsg:
        level = spdlog::level::err;
        break;
    case QtFatalMsg:
        level = spdlog::level::critical;
        break;
    }
    const char *category = context.category ? context.category : "default";
    spdlog::log(level, "[{}] {}", category, message.toStdString());
    if (type == QtFatalMsg) {
        spdlog::default_logger()->flush();
        std::abort();
    }
}

} // namespace

bool isValidLogLevel(const QString &level)
{
    return level == u"trace" || level == u"debug" || level == u"info" || level == u"warning"
        || level == u"error";
}

void installLogHandler(const QString &logDir, const QString &baseName, const QString &level)
{
    std::vector<spdlog::sink_ptr> sinks;
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    QString fileError;
    if (QDir().mkpath(logDir)) {
        try {
            const QString path = QDir(logDir).filePath(baseName + QStringLiteral(".log"));
            sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
                path.toStdString(), kLogFileBytes, kLogFiles));
        } catch (const spdlog::spdlog_ex &error) {
            // spdlog reports through exceptions; keep them inside this function.
            fileError = QString::fromLocal8Bit(error.what());
        }
    } else {
        fileError = QStringLiteral("cannot create %1").arg(logDir);
    }
    auto logger =
        std::make_shared<spdlog::logger>(baseName.toStdString(), sinks.begin(), sinks.end());
    logger->set_level(levelFromName(level));
    logger->flush_on(spdlog::level::info);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_default_logger(logger);

    const bool verbose = level == u"debug" || level == u"trace";
    QLoggingCategory::setFilterRules(verbose ? QStringLiteral("airlock.*.debug=true")
                                             : QStringLiteral("airlock.*.debug=false"));
    qInstallMessageHandler(forwardToSpdlog);
    // Qt's own static destructors may still log after main() returned, when spdlog's registry
    // (a static created before this point, so destroyed after this handler runs) is gone: the
    // sanitizer run found that use after free. Back to Qt's handler first.
    static bool uninstallRegistered = false;
    if (!std::exchange(uninstallRegistered, true))
        std::atexit([] { qInstallMessageHandler(nullptr); });
    if (!fileError.isEmpty())
        spdlog::warn("log file disabled: {}", fileError.toStdString());
}

} // namespace airlock
