#pragma once

#include "app/airlockctl/commandgroup.h"
#include "core/ssh/sshendpoint.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>
#include <QTextStream>

#include <memory>
#include <optional>
#include <vector>

namespace airlock {
class HelperClient;
}

namespace airlock::ctl {

class TerminalPrompter;

/// Exit codes of airlockctl, documented in docs/airlockctl.md.
enum ExitCode : int {
    ExitOk = 0, ///< the operation succeeded
    ExitFailed = 1, ///< the helper refused or the operation failed; the message says why
    ExitUsage = 2, ///< the command line is wrong
};

/// airlockctl behind one run(arguments) so main() only wires it up: parses the global options,
/// picks the command from the tables of the command groups (SandboxCommands, ...), checks its
/// arguments and runs it. The groups share its plumbing: the connection to the helper, the
/// output streams, the exit codes.
class CommandRunner
{
public:
    /// `environmentSocket` is $AIRLOCK_SOCKET (empty when unset).
    CommandRunner(QTextStream &out, QTextStream &err, const QString &environmentSocket);
    ~CommandRunner();

    /// `arguments` as from QCoreApplication::arguments() (program name first).
    int run(const QStringList &arguments);
    /// Every command of every group, in the order of `airlockctl --help`.
    const QList<Command> &commands() const { return m_commands; }

    // The plumbing the command groups share.

    QTextStream &out() { return m_out; }
    QTextStream &err() { return m_err; }
    /// --json was given, before or after the command.
    bool json() const { return m_json; }
    /// --host was given: the helper is on another machine.
    bool remote() const { return !m_host.isEmpty(); }
    /// The local helper socket (--socket, else $AIRLOCK_SOCKET, else the default).
    const QString &socketPath() const { return m_socketPath; }
    /// Connects to the helper once; false after printing why it cannot.
    bool connectHelper();
    /// The connection; nullptr until connectHelper() (or call()) succeeded.
    HelperClient *client() const { return m_client.get(); }
    /// Calls the helper and prints its error; std::nullopt when the call failed. In the error,
    /// protocol field names are replaced by the options the user typed (`fieldOptions`:
    /// field → option, e.g. memoryMib → --memory; docs/reviews/2026-12-01-newuser-pass.md#l5).
    std::optional<QJsonValue> call(const char *method, const QJsonObject &params,
                                   int timeoutMs = 30000,
                                   const QList<std::pair<QString, QString>> &fieldOptions = {});
    void printJson(const QJsonValue &value);
    /// Prints "airlockctl: MESSAGE" and "Try 'airlockctl [COMMAND ]--help'."; returns ExitUsage.
    int usageError(const QString &message, const QString &command = {});

private:
    void printGlobalHelp(QTextStream &stream) const;
    int runCommand(const Command &command, const QStringList &arguments);

    QTextStream &m_out;
    QTextStream &m_err;
    QString m_socketPath;
    bool m_socketGiven = false;
    QString m_host; ///< --host: talk to the helper over SSH
    QString m_identityFile;
    QString m_knownHostsFile;
    QString m_sshConfigFile;
    QString m_remoteCommand;
    SshEndpoint m_endpoint;
    std::unique_ptr<TerminalPrompter> m_prompter;
    bool m_json = false;
    std::unique_ptr<HelperClient> m_client;
    std::vector<std::unique_ptr<CommandGroup>> m_groups;
    QList<Command> m_commands; ///< every group's table, in the order of `airlockctl --help`
};

} // namespace airlock::ctl
