#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// `egress NAME [--follow] [--limit N]`: a sandbox's egress decisions, the stored ones, then
/// (--follow) new ones as they happen.
class EgressCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int egress(const Invocation &invocation);
    /// Prints one event as a table row, or with --json as one compact JSON line.
    void printEgress(qint64 seq, const QJsonObject &event);
};

} // namespace airlock::ctl
