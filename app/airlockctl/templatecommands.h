#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// `template ls | prepare ...`: snapshots of a booted image that sandboxes start from instead of
/// a cold boot (docs/snapshots.md, "Templates").
class TemplateCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int list(const Invocation &invocation);
    /// Asks the helper for a template of the image and shape; --wait polls until it is there.
    int prepare(const Invocation &invocation);
};

} // namespace airlock::ctl
