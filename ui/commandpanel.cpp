#include "ui/commandpanel.h"

#include "ui/commandoutputview.h"
#include "ui/commandrunner.h"
#include "ui/errortext.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <csignal>
#include <cstring>

namespace airlock {

CommandPanel::CommandPanel(HelperClient *client, const QString &sandbox, QWidget *parent)
    : QWidget(parent)
    , m_runner(new CommandRunner(client, sandbox, this))
    , m_command(new QLineEdit(this))
    , m_run(new QPushButton(tr("&Run"), this))
    , m_stop(new QPushButton(tr("S&top"), this))
    , m_output(new CommandOutputView(this))
    , m_status(new QLabel(this))
{
    auto *label = new QLabel(tr("Run co&mmand:"), this);
    label->setBuddy(m_command);
    m_command->setPlaceholderText(tr("A shell command line, e.g. ls -la /workspace"));
    m_command->setAccessibleName(tr("Command line"));
    m_command->setClearButtonEnabled(true);
    m_run->setDefault(false);
    m_run->setAutoDefault(false);
    m_stop->setAutoDefault(false);
    m_stop->setToolTip(tr("Send the command SIGTERM; a second Stop sends SIGKILL"));
    m_output->setAccessibleName(tr("Command output"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setAccessibleName(tr("Command status"));

    auto *row = new QHBoxLayout;
    row->addWidget(label);
    row->addWidget(m_command, 1);
    row->addWidget(m_run);
    row->addWidget(m_stop);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_output, 1);
    layout->addWidget(m_status);
    setRunning(false);

    connect(m_run, &QPushButton::clicked, this, [this] { run(m_command->text()); });
    connect(m_command, &QLineEdit::returnPressed, this, [this] { run(m_command->text()); });
    connect(m_stop, &QPushButton::clicked, this, &CommandPanel::stop);
    connect(m_runner, &CommandRunner::started, this,
            [this](qint64 pid) { m_status->setText(tr("Running (pid %1)…").arg(pid)); });
    connect(m_runner, &CommandRunner::output, this,
            [this](CommandRunner::Stream stream, const QByteArray &bytes) {
                m_output->appendOutput(stream == CommandRunner::Stream::Stderr, bytes);
            });
    connect(m_runner, &CommandRunner::finished, this, [this](const CommandExit &exit) {
        setRunning(false);
        const QString text = describe(exit);
        m_status->setText(text);
        m_output->appendNote(text);
        emit commandFinished(exit);
    });
    connect(m_runner, &CommandRunner::failed, this, &CommandPanel::showFailure);
}

bool CommandPanel::run(const QString &command)
{
    const QString line = command.trimmed();
    if (line.isEmpty() || m_runner->isRunning())
        return false;
    if (!m_runner->start(line, m_cwd, m_user))
        return false;
    m_output->clearOutput();
    m_output->appendNote(QStringLiteral("$ ") + line);
    m_status->setText(tr("Starting…"));
    setRunning(true);
    return true;
}

void CommandPanel::stop()
{
    m_runner->stop(m_stopSent ? SIGKILL : SIGTERM);
    m_stopSent = true;
    m_status->setText(tr("Stopping (pid %1)…").arg(m_runner->pid()));
}

QString CommandPanel::statusText() const
{
    return m_status->text();
}

QString CommandPanel::describe(const CommandExit &exit)
{
    switch (exit.kind) {
    case CommandExit::Kind::Exited:
        return exit.exitCode == 0 ? tr("Exited with code 0 (success).")
                                  : tr("Exited with code %1.").arg(exit.exitCode);
    case CommandExit::Kind::Signalled: {
        const QString name = QString::fromLocal8Bit(sigabbrev_np(exit.signal));
        const QString signalText = name.isEmpty() ? QString::number(exit.signal)
                                                  : tr("%1 (SIG%2)").arg(exit.signal).arg(name);
        return exit.timedOut ? tr("Timed out: killed by signal %1.").arg(signalText)
                             : tr("Killed by signal %1.").arg(signalText);
    }
    case CommandExit::Kind::Failed:
        return tr("Its end is unknown: %1").arg(ErrorText::details(exit.error).simplified());
    }
    return {};
}

void CommandPanel::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_stop->setEnabled(running);
    if (!running)
        m_stopSent = false;
}

void CommandPanel::showFailure(const Error &error)
{
    if (!m_runner->isRunning())
        setRunning(false);
    const QString text = tr("Could not run the command: %1").arg(ErrorText::summary(error));
    m_status->setText(text + u' ' + error.message);
    m_output->appendNote(text);
}

} // namespace airlock
