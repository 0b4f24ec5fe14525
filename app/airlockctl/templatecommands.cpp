#include "app/airlockctl/templatecommands.h"

#include "app/airlockctl/commandrunner.h"
#include "core/protocol/methods.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QTimer>

namespace airlock::ctl {

QList<Command> TemplateCommands::commands()
{
    return {
        {.name = QStringLiteral("template"),
         .summary = QStringLiteral("Templates: snapshots of a booted image that sandboxes start "
                                   "from instead of a cold boot (docs/snapshots.md). prepare "
                                   "makes one for the image and shape unless a current one "
                                   "exists; --wait waits until it is ready."),
         .options = {QCommandLineOption(QStringLiteral("image"),
                                        QStringLiteral("Image id (default default)."),
                                        QStringLiteral("ID")),
                     QCommandLineOption(QStringLiteral("vcpus"),
                                        QStringLiteral("Virtual CPUs (default 1)."),
                                        QStringLiteral("N")),
                     QCommandLineOption(QStringLiteral("memory"),
                                        QStringLiteral("Guest memory in MiB (default 256)."),
                                        QStringLiteral("MIB")),
                     QCommandLineOption(QStringLiteral("vmm"),
                                        QStringLiteral("qemu or firecracker (default: the "
                                                       "helper's)."),
                                        QStringLiteral("VMM")),
                     QCommandLineOption(QStringLiteral("wait"),
                                        QStringLiteral("Wait until the template is ready (up to "
                                                       "5 min)."))},
         .actions = {{.name = QStringLiteral("ls"), .handler = handler(&TemplateCommands::list)},
                     {.name = QStringLiteral("prepare"),
                      .arguments =
                          QStringLiteral("[--image ID] [--vcpus N] [--memory MIB] [--vmm VMM] "
                                         "[--wait]"),
                      .handler = handler(&TemplateCommands::prepare)}}},
    };
}

int TemplateCommands::list(const Invocation &)
{
    const auto result = call(protocol::method::TemplateList, {});
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonArray templates = result->toObject().value(QStringLiteral("templates")).toArray();
    if (templates.isEmpty()) {
        m_out << "no templates (make one with: airlockctl template prepare)" << Qt::endl;
        return ExitOk;
    }
    m_out
        << "ID                IMAGE     VMM          VCPUS  MEMORY    CREATED              CURRENT"
        << Qt::endl;
    for (const QJsonValue &value : templates) {
        const QJsonObject t = value.toObject();
        m_out << t.value(QStringLiteral("id")).toString().leftJustified(18)
              << t.value(QStringLiteral("image")).toString().leftJustified(10)
              << t.value(QStringLiteral("vmm")).toString(QStringLiteral("qemu")).leftJustified(13)
              << QString::number(t.value(QStringLiteral("vcpus")).toInt()).leftJustified(7)
              << (QString::number(t.value(QStringLiteral("memoryMib")).toInt())
                  + QStringLiteral(" MiB"))
                     .leftJustified(10)
              << QDateTime::fromString(t.value(QStringLiteral("createdAt")).toString(),
                                       Qt::ISODateWithMs)
                     .toLocalTime()
                     .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                     .leftJustified(21)
              << (t.value(QStringLiteral("current")).toBool() ? "yes" : "no (stale)") << Qt::endl;
    }
    return ExitOk;
}

int TemplateCommands::prepare(const Invocation &invocation)
{
    const QCommandLineParser &options = invocation.options;
    QJsonObject params;
    if (options.isSet(QStringLiteral("image")))
        params.insert(QStringLiteral("image"), options.value(QStringLiteral("image")));
    if (options.isSet(QStringLiteral("vmm")))
        params.insert(QStringLiteral("vmm"), options.value(QStringLiteral("vmm")));
    if (!insertWholeNumbers(invocation,
                            {{QStringLiteral("vcpus"), QStringLiteral("vcpus")},
                             {QStringLiteral("memory"), QStringLiteral("memoryMib")}},
                            params))
        return ExitUsage;
    auto result = call(protocol::method::TemplatePrepare, params, 30000, shapeOptions());
    if (!result)
        return ExitFailed;
    // template.prepare answers at once; with --wait ask again until the template is there.
    QDeadlineTimer deadline(5 * 60 * 1000);
    while (options.isSet(QStringLiteral("wait"))
           && !result->toObject().value(QStringLiteral("template")).isObject()) {
        if (!result->toObject().value(QStringLiteral("preparing")).toBool()) {
            m_err << "airlockctl: the template could not be prepared (the helper's log says why)"
                  << Qt::endl;
            return ExitFailed;
        }
        if (deadline.hasExpired()) {
            m_err << "airlockctl: the template is not ready after 5 minutes" << Qt::endl;
            return ExitFailed;
        }
        QEventLoop pause;
        QTimer::singleShot(500, &pause, &QEventLoop::quit);
        pause.exec();
        result = call(protocol::method::TemplatePrepare, params);
        if (!result)
            return ExitFailed;
    }
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonValue made = result->toObject().value(QStringLiteral("template"));
    if (made.isObject())
        m_out << "template " << made.toObject().value(QStringLiteral("id")).toString()
              << " of image " << made.toObject().value(QStringLiteral("image")).toString()
              << " is ready" << Qt::endl;
    else
        m_out << "preparing a template (airlockctl template ls shows it when ready)" << Qt::endl;
    return ExitOk;
}

} // namespace airlock::ctl
