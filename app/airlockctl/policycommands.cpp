#include "app/airlockctl/policycommands.h"

#include "app/airlockctl/commandrunner.h"
#include "core/model/egresspolicy.h"
#include "core/protocol/methods.h"

#include <QCommandLineOption>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>

namespace airlock::ctl {

namespace {

const QString kPolicy = QStringLiteral("policy");

} // namespace

QList<Command> PolicyCommands::commands()
{
    return {
        {.name = QStringLiteral("policy"),
         .summary = QStringLiteral("Show, replace or check a sandbox's egress policy "
                                   "(docs/policy.md), or list its recorded changes (newest "
                                   "first: who, when, through what, the rules added and "
                                   "removed). FILE '-' reads stdin. validate exits 1 "
                                   "when the policy is invalid, printing each error on its own "
                                   "line."),
         .options = {QCommandLineOption(QStringLiteral("limit"),
                                        QStringLiteral("history: how many changes to show "
                                                       "(1-500, default 20)."),
                                        QStringLiteral("N"), QStringLiteral("20"))},
         .actions = {{.name = QStringLiteral("get"),
                      .arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&PolicyCommands::get)},
                     {.name = QStringLiteral("set"),
                      .arguments = QStringLiteral("NAME FILE"),
                      .minArguments = 2,
                      .maxArguments = 2,
                      .handler = handler(&PolicyCommands::set)},
                     {.name = QStringLiteral("validate"),
                      .arguments = QStringLiteral("FILE"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&PolicyCommands::validate)},
                     {.name = QStringLiteral("history"),
                      .arguments = QStringLiteral("NAME [--limit N]"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&PolicyCommands::history)}}},
    };
}

std::optional<QJsonObject> PolicyCommands::readPolicyFile(const QString &path)
{
    QFile file;
    const bool opened = path == QStringLiteral("-")
        ? file.open(stdin, QIODevice::ReadOnly)
        : (file.setFileName(path), file.open(QIODevice::ReadOnly));
    if (!opened) {
        m_err << "airlockctl: cannot read " << path << ": " << file.errorString() << Qt::endl;
        return std::nullopt;
    }
    // One byte more than allowed, so that an oversized file is told apart from a full one.
    const QByteArray bytes = file.read(EgressPolicy::kMaxJsonBytes + 1);
    if (bytes.size() > EgressPolicy::kMaxJsonBytes) {
        m_err << "airlockctl: " << path << ": a policy file is at most "
              << EgressPolicy::kMaxJsonBytes << " bytes" << Qt::endl;
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        m_err << "airlockctl: " << path << ": not valid JSON at offset " << error.offset << ": "
              << error.errorString() << Qt::endl;
        return std::nullopt;
    }
    if (!document.isObject()) {
        m_err << "airlockctl: " << path
              << ": a policy must be a JSON object {\"version\": 1, \"rules\": [...]}" << Qt::endl;
        return std::nullopt;
    }
    return document.object();
}

int PolicyCommands::get(const Invocation &invocation)
{
    const auto result = call(protocol::method::PolicyGet, {{kName, invocation.arguments.at(0)}});
    if (!result)
        return ExitFailed;
    printJson(json() ? *result : result->toObject().value(kPolicy));
    return ExitOk;
}

int PolicyCommands::set(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    const auto policy = readPolicyFile(invocation.arguments.at(1));
    if (!policy)
        return ExitFailed;
    const auto result = call(protocol::method::PolicySet,
                             {{kName, name},
                              {kPolicy, *policy},
                              {QStringLiteral("source"), QStringLiteral("airlockctl")}});
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
    } else {
        const qsizetype rules = result->toObject()
                                    .value(kPolicy)
                                    .toObject()
                                    .value(QStringLiteral("rules"))
                                    .toArray()
                                    .size();
        m_out << "set the egress policy of sandbox " << quoted(name) << " (" << rules
              << (rules == 1 ? " rule)" : " rules)") << Qt::endl;
    }
    return ExitOk;
}

int PolicyCommands::validate(const Invocation &invocation)
{
    const QString path = invocation.arguments.at(0);
    const auto policy = readPolicyFile(path);
    if (!policy)
        return ExitFailed;
    const auto result = call(protocol::method::PolicyValidate, {{kPolicy, *policy}});
    if (!result)
        return ExitFailed;
    const QJsonObject answer = result->toObject();
    const bool valid = answer.value(QStringLiteral("valid")).toBool();
    if (json()) {
        printJson(answer);
    } else if (valid) {
        m_out << path << ": valid" << Qt::endl;
    } else {
        for (const QJsonValue &error : answer.value(QStringLiteral("errors")).toArray())
            m_err << path << ": " << error.toObject().value(QStringLiteral("message")).toString()
                  << "\n";
        m_err.flush();
    }
    return valid ? ExitOk : ExitFailed;
}

int PolicyCommands::history(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    bool ok = false;
    const int limit = invocation.options.value(QStringLiteral("limit")).toInt(&ok);
    if (!ok || limit < 1 || limit > 500)
        return usageError(invocation,
                          QStringLiteral("--limit: '%1' is not a number from 1 to 500")
                              .arg(invocation.options.value(QStringLiteral("limit"))));
    const auto result =
        call(protocol::method::PolicyHistory, {{kName, name}, {QStringLiteral("limit"), limit}});
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonArray changes = result->toObject().value(QStringLiteral("changes")).toArray();
    if (changes.isEmpty()) {
        m_out << "no recorded policy changes for sandbox " << quoted(name) << Qt::endl;
        return ExitOk;
    }
    for (const QJsonValue &value : changes) {
        const QJsonObject change = value.toObject();
        const QDateTime time = QDateTime::fromString(
            change.value(QStringLiteral("time")).toString(), Qt::ISODateWithMs);
        const QJsonValue uid = change.value(QStringLiteral("uid"));
        QString who = change.value(QStringLiteral("user")).toString();
        if (!uid.isNull())
            who = (who.isEmpty() ? QString() : who + QLatin1Char(' '))
                + QStringLiteral("(uid %1)").arg(uid.toInteger());
        const qint64 rules = change.value(QStringLiteral("rules")).toInteger();
        m_out << '#' << change.value(QStringLiteral("seq")).toInteger() << "  "
              << time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) << " UTC  " << who
              << " via " << change.value(QStringLiteral("source")).toString() << "  "
              << change.value(QStringLiteral("oldRevision")).toString() << " -> "
              << change.value(QStringLiteral("newRevision")).toString() << "  (" << rules
              << (rules == 1 ? " rule)" : " rules)") << "\n";
        for (const auto &[key, sign] : {std::pair {QStringLiteral("added"), '+'},
                                        std::pair {QStringLiteral("removed"), '-'}}) {
            const QJsonArray listed = change.value(key).toArray();
            for (const QJsonValue &rule : listed) {
                auto parsed = EgressRule::fromJson(rule.toObject());
                m_out << "    " << sign << ' '
                      << (parsed ? parsed->summary()
                                 : QString::fromUtf8(
                                     QJsonDocument(rule.toObject()).toJson(QJsonDocument::Compact)))
                      << "\n";
            }
            const qint64 count = change.value(key + QStringLiteral("Count")).toInteger();
            if (count > listed.size())
                m_out << "    " << sign << " ... and " << count - listed.size() << " more\n";
        }
    }
    if (result->toObject().value(QStringLiteral("more")).toBool())
        m_out << "(older changes not shown)\n";
    m_out.flush();
    return ExitOk;
}

} // namespace airlock::ctl
