#include "app/airlockctl/consolecommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/consolesession.h"

#include <unistd.h>

namespace airlock::ctl {

QList<Command> ConsoleCommands::commands()
{
    return {
        {.name = QStringLiteral("console"),
         .summary = QStringLiteral("Attach to a sandbox's serial console (scrollback first). "
                                   "Ctrl-] detaches; piped stdin is typed as is; ends when the "
                                   "sandbox stops."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&ConsoleCommands::console)}}},
    };
}

int ConsoleCommands::console(const Invocation &invocation)
{
    if (!m_runner.connectHelper())
        return ExitFailed;
    m_out.flush();
    ConsoleSession session(m_runner.client(), invocation.arguments.first(), STDIN_FILENO,
                           STDOUT_FILENO, m_err);
    return session.run();
}

} // namespace airlock::ctl
