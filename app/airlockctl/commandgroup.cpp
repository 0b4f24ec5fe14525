#include "app/airlockctl/commandgroup.h"

#include "app/airlockctl/commandrunner.h"

#include <algorithm>

namespace airlock::ctl {

QString Action::synopsis() const
{
    return (name + QLatin1Char(' ') + arguments).trimmed();
}

QString Command::synopsis() const
{
    QStringList forms;
    for (const Action &action : actions)
        forms.append(action.synopsis());
    return forms.join(QStringLiteral(" | "));
}

QString Command::usage() const
{
    return (name + QLatin1Char(' ') + synopsis()).trimmed();
}

const Action *Command::select(const QStringList &arguments) const
{
    for (const Action &action : actions) {
        const bool named = !action.name.isEmpty();
        if (named
            && (arguments.isEmpty()
                || (arguments.first() != action.name
                    && !action.aliases.contains(arguments.first()))))
            continue;
        const qsizetype count = arguments.size() - (named ? 1 : 0);
        if (count >= action.minArguments && count <= action.maxArguments)
            return &action;
    }
    return nullptr;
}

bool Command::takesNoArguments() const
{
    return actions.size() == 1 && actions.first().name.isEmpty()
        && actions.first().maxArguments == 0;
}

CommandGroup::CommandGroup(CommandRunner &runner)
    : m_runner(runner), m_out(runner.out()), m_err(runner.err())
{ }

CommandGroup::~CommandGroup() = default;

const QList<std::pair<QString, QString>> &CommandGroup::shapeOptions()
{
    static const QList<std::pair<QString, QString>> options {
        {QStringLiteral("memoryMib"), QStringLiteral("--memory")},
        {QStringLiteral("vcpus"), QStringLiteral("--vcpus")},
    };
    return options;
}

QString CommandGroup::quoted(const QString &name)
{
    return QLatin1Char('\'') + name + QLatin1Char('\'');
}

bool CommandGroup::json() const
{
    return m_runner.json();
}

std::optional<QJsonValue> CommandGroup::call(const char *method, const QJsonObject &params,
                                             int timeoutMs,
                                             const QList<std::pair<QString, QString>> &fieldOptions)
{
    return m_runner.call(method, params, timeoutMs, fieldOptions);
}

void CommandGroup::printJson(const QJsonValue &value)
{
    m_runner.printJson(value);
}

int CommandGroup::usageError(const Invocation &invocation, const QString &message)
{
    return m_runner.usageError(message, invocation.command);
}

std::optional<int> CommandGroup::timeoutOption(const Invocation &invocation)
{
    const QString value = invocation.options.value(QStringLiteral("timeout"));
    bool ok = false;
    const double seconds = value.toDouble(&ok);
    if (!ok || seconds < 0) {
        usageError(invocation,
                   QStringLiteral("--timeout: '%1' is not a number of seconds").arg(value));
        return std::nullopt;
    }
    return int(std::min(seconds, 1e6) * 1000);
}

bool CommandGroup::insertWholeNumbers(const Invocation &invocation,
                                      const QList<std::pair<QString, QString>> &optionFields,
                                      QJsonObject &params)
{
    for (const auto &[option, field] : optionFields) {
        if (!invocation.options.isSet(option))
            continue;
        bool ok = false;
        const int value = invocation.options.value(option).toInt(&ok);
        if (!ok) {
            usageError(invocation,
                       QStringLiteral("--%1: '%2' is not a whole number")
                           .arg(option, invocation.options.value(option)));
            return false;
        }
        params.insert(field, value);
    }
    return true;
}

std::function<int(const Invocation &)> CommandGroup::sandboxCall(const char *method,
                                                                 const char *done)
{
    return [this, method, done](const Invocation &invocation) {
        const QString name = invocation.arguments.first();
        const auto result = call(method, {{kName, name}});
        if (!result)
            return ExitFailed;
        if (json())
            printJson(*result);
        else
            m_out << QLatin1String(done) << " sandbox " << quoted(name) << Qt::endl;
        return ExitOk;
    };
}

void CommandGroup::warnIdentity(const QJsonObject &sandbox)
{
    const QString warning = sandbox.value(QStringLiteral("identityWarning")).toString();
    if (!warning.isEmpty())
        m_err << "airlockctl: warning: " << quoted(sandbox.value(kName).toString()) << ": "
              << warning << Qt::endl;
}

} // namespace airlock::ctl
