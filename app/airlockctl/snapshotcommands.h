#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// Snapshots of a running guest and the pause they need (docs/snapshots.md): `pause`,
/// `resume`, `snapshot create|ls|restore|fork|rm|pin|unpin|rename|schedule ...`.
class SnapshotCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int create(const Invocation &invocation);
    int list(const Invocation &invocation);
    /// Takes a safety snapshot of a running sandbox first (the helper does).
    int restore(const Invocation &invocation);
    int fork(const Invocation &invocation);
    int remove(const Invocation &invocation);
    int pin(const Invocation &invocation, bool pinned);
    int rename(const Invocation &invocation);
    /// Shows the schedule, or changes the fields whose options are set.
    int schedule(const Invocation &invocation);
    /// Prints "<done> snapshot ID of 'NAME' (LABEL)", or with --json the snapshot.
    int describe(const QJsonValue &snapshot, const char *done);
};

} // namespace airlock::ctl
