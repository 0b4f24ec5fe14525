#pragma once

#include "core/ssh/sshprompter.h"

namespace airlock::ctl {

/// Asks SSH questions on the controlling terminal (/dev/tty, as ssh does, so pipes on stdin
/// and stdout stay untouched): "yes" accepts an unknown host key, secrets are read with echo
/// off. Without a controlling terminal (cron, CI, `setsid`) nothing can be asked: unknown host
/// keys are refused and no secret is given, so such runs need known_hosts and a key or agent.
class TerminalPrompter final : public SshPrompter
{
public:
    bool acceptUnknownHostKey(const SshHostKeyQuestion &question) override;
    std::optional<QString> askSecret(const SshSecretQuestion &question) override;
};

} // namespace airlock::ctl
