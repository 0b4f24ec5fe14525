#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// Commands that act inside a running sandbox through its guest agent (docs/airlockctl.md,
/// "exec" and "cp"): `exec` runs a command (ExecRunner), `cp` copies one file in or out in
/// chunks of files.read / files.write. Host files are opened here, as the calling user; the
/// helper never touches a host path for a client.
class GuestCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int exec(const Invocation &invocation);
    int copy(const Invocation &invocation);
    int download(const QString &sandbox, const QString &guestPath, const QString &hostPath);
    int upload(const QString &hostPath, const QString &sandbox, const QString &guestPath);
};

} // namespace airlock::ctl
