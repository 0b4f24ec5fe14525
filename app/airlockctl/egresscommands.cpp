#include "app/airlockctl/egresscommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/sandboxformat.h"
#include "core/client/helperclient.h"
#include "core/model/error.h"
#include "core/protocol/methods.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>

namespace airlock::ctl {

QList<Command> EgressCommands::commands()
{
    return {
        {.name = QStringLiteral("egress"),
         .summary = QStringLiteral("Show a sandbox's latest egress decisions (TIME LAYER VERDICT "
                                   "REASON NAME METHOD PATH); --follow keeps printing new ones "
                                   "until interrupted. --json prints one JSON object per line."),
         .options = {QCommandLineOption({QStringLiteral("f"), QStringLiteral("follow")},
                                        QStringLiteral("Keep printing new events.")),
                     QCommandLineOption(QStringLiteral("limit"),
                                        QStringLiteral("How many stored events to show first "
                                                       "(1-1000, default 20)."),
                                        QStringLiteral("N"), QStringLiteral("20"))},
         .actions = {{.arguments = QStringLiteral("NAME [--follow] [--limit N]"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&EgressCommands::egress)}}},
    };
}

void EgressCommands::printEgress(qint64 seq, const QJsonObject &event)
{
    if (json())
        m_out << QString::fromUtf8(QJsonDocument(QJsonObject {{QStringLiteral("seq"), seq},
                                                              {QStringLiteral("event"), event}})
                                       .toJson(QJsonDocument::Compact))
              << "\n";
    else
        m_out << formatEgressRow(event);
    m_out.flush();
}

int EgressCommands::egress(const Invocation &invocation)
{
    const QString name = invocation.arguments.first();
    bool ok = false;
    const int limit = invocation.options.value(QStringLiteral("limit")).toInt(&ok);
    if (!ok || limit < 1 || limit > 1000)
        return usageError(invocation,
                          QStringLiteral("--limit: '%1' is not a number from 1 to 1000")
                              .arg(invocation.options.value(QStringLiteral("limit"))));
    const bool follow = invocation.options.isSet(QStringLiteral("follow"));
    // Subscribe before reading the history, so nothing falls between the two; seqs dedupe.
    if (follow && !call(protocol::method::EventsSubscribe, {}))
        return ExitFailed;
    QList<std::pair<qint64, QJsonObject>> pending;
    if (follow) {
        QObject::connect(m_runner.client(), &HelperClient::notificationReceived, m_runner.client(),
                         [&pending, name](const QString &method, const QJsonObject &params) {
                             if (method == QLatin1String(protocol::notification::EgressEvent)
                                 && params.value(QStringLiteral("sandbox")).toString() == name)
                                 pending.append({params.value(QStringLiteral("seq")).toInteger(),
                                                 params.value(QStringLiteral("event")).toObject()});
                         });
    }
    const auto result =
        call(protocol::method::EgressHistory, {{kName, name}, {QStringLiteral("limit"), limit}});
    if (!result)
        return ExitFailed;
    const QJsonArray events = result->toObject().value(QStringLiteral("events")).toArray();
    if (json() && !follow) {
        printJson(*result);
        return ExitOk;
    }
    if (!json())
        m_out << formatEgressHeader();
    qint64 lastSeq = 0;
    for (const QJsonValue &value : events) {
        const QJsonObject entry = value.toObject();
        lastSeq = entry.value(QStringLiteral("seq")).toInteger();
        printEgress(lastSeq, entry.value(QStringLiteral("event")).toObject());
    }
    if (!json() && events.isEmpty() && !follow)
        m_out << "no egress events for sandbox " << quoted(name) << Qt::endl;
    if (!follow)
        return ExitOk;
    QEventLoop loop;
    auto flush = [&] {
        for (const auto &[seq, event] : std::as_const(pending)) {
            if (seq > lastSeq) {
                lastSeq = seq;
                printEgress(seq, event);
            }
        }
        pending.clear();
    };
    flush();
    QObject::connect(m_runner.client(), &HelperClient::notificationReceived, &loop,
                     [&](const QString &, const QJsonObject &) { flush(); });
    QObject::connect(m_runner.client(), &HelperClient::connectionLost, &loop,
                     [&](const Error &error) {
                         m_err << "airlockctl: " << error.message << Qt::endl;
                         loop.quit();
                     });
    loop.exec();
    return ExitFailed;
}

} // namespace airlock::ctl
