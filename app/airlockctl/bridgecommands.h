#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// `bridge`: standard input and output piped to the helper socket (StdioBridge), what
/// `ssh HOST airlockctl bridge` runs for a remote client (docs/ssh.md).
class BridgeCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int bridge(const Invocation &invocation);
};

} // namespace airlock::ctl
