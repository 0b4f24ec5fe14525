#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// `airlockctl workspace push|pull|diff NAME HOSTDIR [GUESTDIR]` (docs/airlockctl.md,
/// "workspace"): a project folder into a sandbox, the guest folder back out (nothing written
/// outside HOSTDIR; symlinks that leave it, hard links, FIFOs, devices and setuid/setgid
/// files are refused and named), and the diff of what the agent changed. Host folders are
/// read and written here, as the calling user (core/workspace).
class WorkspaceCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int push(const Invocation &invocation);
    int pull(const Invocation &invocation);
    int diff(const Invocation &invocation);
    /// Prints guest-made text: through an EscapeFilter when stdout is a terminal.
    void printGuestText(const QString &text);
};

} // namespace airlock::ctl
