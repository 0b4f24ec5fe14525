#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// A sandbox's life: `create`, `list`, `info`, `start`, `stop`, `kill`, `rm`, and the `images`
/// sandboxes are made from (docs/airlockctl.md).
class SandboxCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int create(const Invocation &invocation);
    int list(const Invocation &invocation);
    int info(const Invocation &invocation);
    int start(const Invocation &invocation);
    /// Asks the guest to power off and waits for the sandbox's `stopped` event.
    int stop(const Invocation &invocation);
    int images(const Invocation &invocation);
};

} // namespace airlock::ctl
