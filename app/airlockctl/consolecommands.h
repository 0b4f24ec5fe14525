#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// `console NAME`: the terminal attached to a sandbox's serial console (ConsoleSession).
class ConsoleCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int console(const Invocation &invocation);
};

} // namespace airlock::ctl
