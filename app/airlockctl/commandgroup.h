#pragma once

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>

#include <functional>
#include <optional>
#include <utility>

namespace airlock::ctl {

class CommandRunner;

/// What a handler is called with: the command line after the command (and action) name.
struct Invocation
{
    QString command; ///< the command's name, for usage errors ("snapshot")
    QStringList arguments; ///< positional arguments after the command and action names
    const QCommandLineParser &options; ///< the parsed options of the command
};

/// One form of a command. `snapshot fork SNAP NEWNAME [--with-bindings]` is the action `fork`
/// of the command `snapshot`; a command without actions (`start NAME`) has one unnamed action.
struct Action
{
    QString name; ///< the word after the command; empty for a command without actions
    QString arguments; ///< the synopsis after the name, e.g. "SNAP NEWNAME [--with-bindings]"
    int minArguments = 0; ///< positional arguments after the name, at least
    int maxArguments = 0; ///< and at most
    std::function<int(const Invocation &)> handler;
    QStringList aliases = {}; ///< other names that select the action; not shown in help

    /// `name arguments`, as `airlockctl --help` and usage errors show it.
    QString synopsis() const;
};

/// One top-level command of airlockctl. Its table entry is the only place its synopsis, summary
/// and options are written: `airlockctl --help`, `airlockctl COMMAND --help` and the usage
/// errors are made from it.
struct Command
{
    QString name;
    QString summary;
    QList<QCommandLineOption> options; ///< besides --help, --json and --socket
    QList<Action> actions;

    /// Everything after the name in the help and usage errors: the actions' synopses joined by
    /// " | ".
    QString synopsis() const;
    /// `name synopsis`, as the help and usage errors show the command.
    QString usage() const;
    /// The action `arguments` (positional, after the command's name) select: the first whose
    /// name is their first word (for a command with actions) and that takes as many arguments
    /// as follow it. nullptr when none does.
    const Action *select(const QStringList &arguments) const;
    /// The command takes no arguments at all (usage error "list takes no arguments").
    bool takesNoArguments() const;
};

/// Base of the classes that implement a group of commands: each declares its commands' table
/// and uses the plumbing of the CommandRunner through these helpers.
class CommandGroup
{
public:
    explicit CommandGroup(CommandRunner &runner);
    virtual ~CommandGroup();
    CommandGroup(const CommandGroup &) = delete;
    CommandGroup &operator=(const CommandGroup &) = delete;

    /// The group's commands, in the order `airlockctl --help` lists them.
    virtual QList<Command> commands() = 0;

protected:
    /// The "name" parameter that most methods take.
    static inline const QString kName = QStringLiteral("name");

    /// The protocol fields of a sandbox's shape and the options that set them (for call()).
    static const QList<std::pair<QString, QString>> &shapeOptions();
    static QString quoted(const QString &name);

    /// --json, before or after the command.
    bool json() const;
    /// CommandRunner::call: the helper's answer, or std::nullopt after printing why not.
    std::optional<QJsonValue> call(const char *method, const QJsonObject &params,
                                   int timeoutMs = 30000,
                                   const QList<std::pair<QString, QString>> &fieldOptions = {});
    void printJson(const QJsonValue &value);
    /// Prints `message` and "Try 'airlockctl COMMAND --help'."; returns ExitUsage.
    int usageError(const Invocation &invocation, const QString &message);
    /// The `--timeout SECONDS` option in milliseconds (fractions allowed, capped at 10^6 s);
    /// std::nullopt after the usage error "--timeout: 'VALUE' is not a number of seconds".
    std::optional<int> timeoutOption(const Invocation &invocation);
    /// Inserts the whole-number value of each set option (option → protocol field) into
    /// `params`. false after the usage error "--OPTION: 'VALUE' is not a whole number".
    bool insertWholeNumbers(const Invocation &invocation,
                            const QList<std::pair<QString, QString>> &optionFields,
                            QJsonObject &params);
    /// A handler that calls `method` with the sandbox named by the first argument and prints
    /// "<done> sandbox 'x'".
    std::function<int(const Invocation &)> sandboxCall(const char *method, const char *done);
    /// Prints the sandbox's identityWarning (a guest that did not confirm its new identity).
    void warnIdentity(const QJsonObject &sandbox);

    /// A handler that runs `method` on this group.
    template<typename Group>
    std::function<int(const Invocation &)> handler(int (Group::*method)(const Invocation &))
    {
        return std::bind_front(method, static_cast<Group *>(this));
    }

    CommandRunner &m_runner;
    QTextStream &m_out;
    QTextStream &m_err;
};

} // namespace airlock::ctl
