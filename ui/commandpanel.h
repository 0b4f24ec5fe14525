#pragma once

#include "core/model/error.h"
#include "ui/commandrunner.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;

namespace airlock {

class CommandOutputView;
class HelperClient;

/// "Run command" for one sandbox: a command line, Run and Stop, the output (CommandOutputView:
/// stdout and stderr apart, bounded) and how the process ended (exit code, signal, timed out).
/// Runs over the guest agent (exec.*), not the console, so it works with any policy.
class CommandPanel final : public QWidget
{
    Q_OBJECT
public:
    CommandPanel(HelperClient *client, const QString &sandbox, QWidget *parent = nullptr);

    /// The guest user commands run as (empty: the agent's default) and their folder (empty:
    /// the user's home).
    void setUser(const QString &user) { m_user = user; }
    void setWorkingFolder(const QString &folder) { m_cwd = folder; }

    /// Runs `command` (as if typed and Run pressed); false when one still runs or it is blank.
    bool run(const QString &command);
    /// Asks the running process to end (SIGTERM; a second Stop sends SIGKILL).
    void stop();

    QLineEdit *commandEdit() const { return m_command; }
    QPushButton *runButton() const { return m_run; }
    QPushButton *stopButton() const { return m_stop; }
    CommandOutputView *output() const { return m_output; }
    CommandRunner *runner() const { return m_runner; }
    /// The one-line status under the output: "Running (pid 12)…", "Exited with code 3".
    QString statusText() const;

    /// One line for a person: how `exit` ended.
    static QString describe(const CommandExit &exit);

signals:
    void commandFinished(const airlock::CommandExit &exit);

private:
    void setRunning(bool running);
    void showFailure(const Error &error);

    CommandRunner *m_runner;
    QLineEdit *m_command;
    QPushButton *m_run;
    QPushButton *m_stop;
    CommandOutputView *m_output;
    QLabel *m_status;
    QString m_user;
    QString m_cwd;
    bool m_stopSent = false;
};

} // namespace airlock
