#include "app/airlockctl/bridgecommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/stdiobridge.h"

#include <unistd.h>

namespace airlock::ctl {

QList<Command> BridgeCommands::commands()
{
    return {
        {.name = QStringLiteral("bridge"),
         .summary = QStringLiteral("Pipe stdin/stdout to the helper socket (for 'ssh HOST "
                                   "airlockctl bridge')."),
         .actions = {{.handler = handler(&BridgeCommands::bridge)}}},
    };
}

int BridgeCommands::bridge(const Invocation &invocation)
{
    if (m_runner.remote())
        return usageError(invocation,
                          QStringLiteral("bridge runs on the helper's host; it takes no --host"));
    m_out.flush();
    StdioBridge bridge(m_runner.socketPath(), STDIN_FILENO, STDOUT_FILENO, m_err);
    return bridge.run();
}

} // namespace airlock::ctl
