#pragma once

#include "app/airlockctl/commandgroup.h"

#include <optional>

namespace airlock::ctl {

/// `policy get NAME | set NAME FILE | validate FILE`: a sandbox's egress policy
/// (docs/policy.md).
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
    /// Reads a policy file (`-` is stdin) as a JSON object; prints why not and returns
    /// std::nullopt when it cannot be read or is not a JSON object.
    std::optional<QJsonObject> readPolicyFile(const QString &path);
};

} // namespace airlock::ctl
