#pragma once

#include "core/ssh/sshprompter.h"

#include <QList>
#include <QStringList>

namespace airlock::test {

/// The user of a test: answers SshTransport's questions from a script and records them. Host
/// keys are accepted when `acceptHostKeys`; secrets are taken from `secrets` in order, and an
/// empty list answers "cancel".
class ScriptedPrompter final : public SshPrompter
{
public:
    bool acceptHostKeys = false;
    QStringList secrets;
    QList<SshHostKeyQuestion> hostKeyQuestions;
    QList<SshSecretQuestion> secretQuestions;

    bool acceptUnknownHostKey(const SshHostKeyQuestion &question) override
    {
        hostKeyQuestions.append(question);
        return acceptHostKeys;
    }

    std::optional<QString> askSecret(const SshSecretQuestion &question) override
    {
        secretQuestions.append(question);
        if (secrets.isEmpty())
            return std::nullopt;
        return secrets.takeFirst();
    }
};

} // namespace airlock::test
