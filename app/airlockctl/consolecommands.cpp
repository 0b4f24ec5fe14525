#include "app/airlockctl/consolecommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/consolesession.h"

#include <algorithm>

#include <unistd.h>

namespace airlock::ctl {

QList<Command> ConsoleCommands::commands()
{
    return {
        {.name = QStringLiteral("console"),
         .summary = QStringLiteral(
             "Attach to a sandbox's serial console (scrollback first). Ctrl-] detaches; ends "
             "when the sandbox stops. Piped stdin is typed as is, without the scrollback; the "
             "session ends once the guest has been quiet for --timeout seconds after the end "
             "of input (unless --follow)."),
         .options = {QCommandLineOption(QStringLiteral("timeout"),
                                        QStringLiteral("Piped input: seconds of quiet after its "
                                                       "end before the session ends (default "
                                                       "2)."),
                                        QStringLiteral("SECONDS"), QStringLiteral("2")),
                     QCommandLineOption(QStringLiteral("scrollback"),
                                        QStringLiteral("Piped input: print the scrollback "
                                                       "first, as on a terminal.")),
                     QCommandLineOption(QStringLiteral("follow"),
                                        QStringLiteral("Piped input: keep following the console "
                                                       "after its end, until the sandbox "
                                                       "stops."))},
         .actions = {{.arguments =
                          QStringLiteral("NAME [--timeout SECONDS] [--follow] [--scrollback]"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&ConsoleCommands::console)}}},
    };
}

int ConsoleCommands::console(const Invocation &invocation)
{
    const std::optional<int> idleTimeoutMs = timeoutOption(invocation);
    if (!idleTimeoutMs)
        return ExitUsage;
    ConsoleSession::Options options;
    options.idleTimeoutMs = *idleTimeoutMs;
    options.follow = invocation.options.isSet(QStringLiteral("follow"));
    options.scrollback = invocation.options.isSet(QStringLiteral("scrollback"));
    if (!m_runner.connectHelper())
        return ExitFailed;
    m_out.flush();
    ConsoleSession session(m_runner.client(), invocation.arguments.first(), STDIN_FILENO,
                           STDOUT_FILENO, m_err, options);
    return session.run();
}

} // namespace airlock::ctl
