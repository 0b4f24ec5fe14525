#pragma once

#include "app/airlockctl/commandgroup.h"

namespace airlock::ctl {

/// Credential brokering (docs/credentials.md): `secret set|ls|rm` for the helper's vault and
/// `binding add|ls|rm` for the secrets a sandbox's gateway injects.
class CredentialCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    /// Reads the value from standard input (echo off on a terminal), never from argv.
    int setSecret(const Invocation &invocation);
    int listSecrets(const Invocation &invocation);
    int removeSecret(const Invocation &invocation);
    int addBinding(const Invocation &invocation);
    int listBindings(const Invocation &invocation);
    int removeBinding(const Invocation &invocation);
};

} // namespace airlock::ctl
