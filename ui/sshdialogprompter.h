#pragma once

#include "core/ssh/sshprompter.h"

#include <QCoreApplication>
#include <QPointer>
#include <QWidget>

namespace airlock {

/// Asks SSH questions with modal dialogs over `parent`: the unknown host key with its SHA256
/// fingerprint (Connect / Cancel, Cancel is the default), and passwords or passphrases in a
/// password field. Nothing is remembered.
class SshDialogPrompter final : public SshPrompter
{
    Q_DECLARE_TR_FUNCTIONS(SshDialogPrompter)
public:
    explicit SshDialogPrompter(QWidget *parent = nullptr) : m_parent(parent) { }

    bool acceptUnknownHostKey(const SshHostKeyQuestion &question) override;
    std::optional<QString> askSecret(const SshSecretQuestion &question) override;

private:
    QPointer<QWidget> m_parent;
};

} // namespace airlock
