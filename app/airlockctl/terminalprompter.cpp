#include "app/airlockctl/terminalprompter.h"

#include <QByteArray>
#include <QString>

#include <cstdio>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

namespace airlock::ctl {

namespace {

/// The controlling terminal, opened for one question; invalid without one.
class Tty
{
public:
    Tty() : m_fd(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)) { }
    ~Tty()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    bool isValid() const { return m_fd >= 0; }

    void print(const QString &text)
    {
        const QByteArray bytes = text.toLocal8Bit();
        [[maybe_unused]] const ssize_t n = ::write(m_fd, bytes.constData(), size_t(bytes.size()));
    }

    /// One line without its newline; std::nullopt at end of input. Echo off when `secret`.
    std::optional<QByteArray> readLine(bool secret)
    {
        termios saved {};
        const bool restore = secret && ::tcgetattr(m_fd, &saved) == 0;
        if (restore) {
            termios quiet = saved;
            quiet.c_lflag &= ~tcflag_t(ECHO);
            quiet.c_lflag |= ECHONL;
            ::tcsetattr(m_fd, TCSAFLUSH, &quiet);
        }
        QByteArray line;
        char c = 0;
        bool ended = false;
        for (;;) {
            const ssize_t n = ::read(m_fd, &c, 1);
            if (n <= 0) {
                ended = true;
                break;
            }
            if (c == '\n' || c == '\r')
                break;
            line.append(c);
        }
        if (restore)
            ::tcsetattr(m_fd, TCSAFLUSH, &saved);
        if (ended && line.isEmpty())
            return std::nullopt;
        return line;
    }

private:
    int m_fd;
};

} // namespace

bool TerminalPrompter::acceptUnknownHostKey(const SshHostKeyQuestion &question)
{
    Tty tty;
    if (!tty.isValid())
        return false;
    // The wording of OpenSSH's own question, so people recognise it.
    tty.print(QStringLiteral("The authenticity of host '%1' can't be established.\n"
                             "%2 key fingerprint is %3.\n"
                             "Are you sure you want to continue connecting and add it to %4 "
                             "(yes/no)? ")
                  .arg(question.endpoint, question.keyType, question.fingerprint,
                       question.knownHostsFile));
    for (;;) {
        const std::optional<QByteArray> answer = tty.readLine(false);
        if (!answer)
            return false;
        const QByteArray word = answer->trimmed().toLower();
        if (word == "yes")
            return true;
        if (word == "no" || word.isEmpty())
            return false;
        tty.print(QStringLiteral("Please type 'yes' or 'no': "));
    }
}

std::optional<QString> TerminalPrompter::askSecret(const SshSecretQuestion &question)
{
    Tty tty;
    if (!tty.isValid())
        return std::nullopt;
    if (question.retry)
        tty.print(QStringLiteral("Permission denied, please try again.\n"));
    switch (question.kind) {
    case SshSecretQuestion::Kind::Passphrase:
        tty.print(
            question.identityFile.isEmpty()
                ? question.prompt + QLatin1Char(' ')
                : QStringLiteral("Enter passphrase for key '%1': ").arg(question.identityFile));
        break;
    case SshSecretQuestion::Kind::Password:
        tty.print(QStringLiteral("%1's password: ").arg(question.endpoint));
        break;
    case SshSecretQuestion::Kind::KeyboardInteractive:
        if (!question.instruction.isEmpty())
            tty.print(question.instruction + QLatin1Char('\n'));
        tty.print(question.prompt);
        break;
    }
    const bool secret =
        !(question.kind == SshSecretQuestion::Kind::KeyboardInteractive && question.echo);
    std::optional<QByteArray> line = tty.readLine(secret);
    if (!line)
        return std::nullopt;
    QString answer = QString::fromLocal8Bit(*line);
    line->fill('\0');
    return answer;
}

} // namespace airlock::ctl
