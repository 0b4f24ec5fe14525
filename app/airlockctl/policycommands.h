#pragma once

#include "app/airlockctl/commandgroup.h"

#include <optional>

namespace airlock::ctl {

/// `policy get NAME | set NAME FILE | validate FILE | history NAME [--limit N]`: a sandbox's
/// egress policy (docs/policy.md) and the record of its changes (`policy.history`).
class PolicyCommands : public CommandGroup
{
public:
    using CommandGroup::CommandGroup;
    QList<Command> commands() override;

private:
    int get(const Invocation &invocation);
    int set(const Invocation &invocation);
    /// Exits 1 when the helper finds the policy invalid, after printing each error on its own
    /// line.
    int validate(const Invocation &invocation);
    /// One change a paragraph, newest first: `#SEQ TIME USER (uid N) via SOURCE OLD -> NEW
    /// (N rules)`, then a `+ RULE` / `- RULE` line for each rule added and removed.
    int history(const Invocation &invocation);
    /// Reads a policy file (`-` is stdin) as a JSON object; prints why not and returns
    /// std::nullopt when it cannot be read or is not a JSON object.
    std::optional<QJsonObject> readPolicyFile(const QString &path);
};

} // namespace airlock::ctl
