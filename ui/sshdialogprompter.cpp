#include "ui/sshdialogprompter.h"

#include <QInputDialog>
#include <QMessageBox>
#include <QPushButton>

namespace airlock {

bool SshDialogPrompter::acceptUnknownHostKey(const SshHostKeyQuestion &question)
{
    QMessageBox box(
        QMessageBox::Question, tr("Unknown Host Key"),
        tr("The authenticity of host “%1” cannot be established.").arg(question.endpoint),
        QMessageBox::Cancel, m_parent);
    box.setInformativeText(
        tr("Its %1 key fingerprint is:\n%2\n\nCompare it with the "
           "fingerprint the host's administrator gives you (ssh-keygen -lf "
           "/etc/ssh/ssh_host_ed25519_key.pub). If you connect, the key is "
           "added to %3.")
            .arg(question.keyType, question.fingerprint, question.knownHostsFile));
    QPushButton *connectButton = box.addButton(tr("&Connect"), QMessageBox::AcceptRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    return box.clickedButton() == connectButton;
}

std::optional<QString> SshDialogPrompter::askSecret(const SshSecretQuestion &question)
{
    QString label;
    switch (question.kind) {
    case SshSecretQuestion::Kind::Passphrase:
        label = question.identityFile.isEmpty()
            ? question.prompt
            : tr("Passphrase for the key %1:").arg(question.identityFile);
        break;
    case SshSecretQuestion::Kind::Password:
        label = tr("Password for %1:").arg(question.endpoint);
        break;
    case SshSecretQuestion::Kind::KeyboardInteractive:
        label = question.instruction.isEmpty()
            ? question.prompt
            : question.instruction + QLatin1Char('\n') + question.prompt;
        break;
    }
    if (question.retry)
        label = tr("That was not accepted. Try again.") + QLatin1Char('\n') + label;
    bool ok = false;
    const bool hidden =
        !(question.kind == SshSecretQuestion::Kind::KeyboardInteractive && question.echo);
    const QString answer =
        QInputDialog::getText(m_parent, tr("SSH Login – %1").arg(question.endpoint), label,
                              hidden ? QLineEdit::Password : QLineEdit::Normal, QString(), &ok);
    if (!ok)
        return std::nullopt;
    return answer;
}

} // namespace airlock
