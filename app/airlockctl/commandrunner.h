#pragma once

#include "core/model/error.h"
#include "core/ssh/sshendpoint.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>
#include <QTextStream>

#include <memory>
#include <optional>

class QCommandLineParser;

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

/// Everything airlockctl does, behind one run(arguments) so main() only wires it up: parses the
/// global options and the command, talks to the helper, prints, returns the exit code.
class CommandRunner
{
public:
    /// `environmentSocket` is $AIRLOCK_SOCKET (empty when unset).
    CommandRunner(QTextStream &out, QTextStream &err, const QString &environmentSocket);
    ~CommandRunner();

    /// `arguments` as from QCoreApplication::arguments() (program name first).
    int run(const QStringList &arguments);

private:
    struct Command;
    static const QList<Command> &commands();

    int usageError(const QString &message, const QString &command = {});
    void printGlobalHelp(QTextStream &stream) const;
    int runCommand(const Command &command, const QStringList &arguments);
    bool connectHelper();
    /// Calls the helper and prints its error; std::nullopt when the call failed. In the error,
    /// protocol field names are replaced by the options the user typed (`fieldOptions`:
    /// field → option, e.g. memoryMib → --memory; docs/reviews/2026-12-01-newuser-pass.md#l5).
    std::optional<QJsonValue> call(const char *method, const QJsonObject &params,
                                   int timeoutMs = 30000,
                                   const QList<std::pair<QString, QString>> &fieldOptions = {});
    void printJson(const QJsonValue &value);

    int cmdCreate(QCommandLineParser &parser);
    int cmdList(QCommandLineParser &parser);
    int cmdInfo(QCommandLineParser &parser);
    int cmdStart(QCommandLineParser &parser);
    int cmdStop(QCommandLineParser &parser);
    /// Calls `method` with the sandbox named on the command line; prints "<done> sandbox 'x'".
    int nameCommand(QCommandLineParser &parser, const char *method, const char *done);
    int cmdKill(QCommandLineParser &parser);
    int cmdRemove(QCommandLineParser &parser);
    int cmdImages(QCommandLineParser &parser);
    int cmdConsole(QCommandLineParser &parser);
    int cmdBridge(QCommandLineParser &parser);
    /// `policy get NAME`, `policy set NAME FILE|-`, `policy validate FILE|-`.
    int cmdPolicy(QCommandLineParser &parser);
    /// `secret set NAME` (value from stdin), `secret ls`, `secret rm NAME`.
    int cmdSecret(QCommandLineParser &parser);
    /// `binding add SANDBOX SECRET HOST [options]`, `binding ls [SANDBOX]`, `binding rm ID`.
    int cmdBinding(QCommandLineParser &parser);
    /// `egress NAME [--follow] [--limit N]`: the stored events, then (--follow) new ones.
    int cmdEgress(QCommandLineParser &parser);
    /// Prints one event as a table row, or with --json as one compact JSON line.
    void printEgress(qint64 seq, const QJsonObject &event);
    int cmdPause(QCommandLineParser &parser);
    int cmdResume(QCommandLineParser &parser);
    /// `snapshot create|ls|restore|fork|rm|pin|unpin|rename|schedule ...` (docs/snapshots.md).
    int cmdSnapshot(QCommandLineParser &parser);
    int cmdTemplate(QCommandLineParser &parser);
    /// Prints the sandbox's identityWarning (a guest that did not confirm its new identity).
    void warnIdentity(const QJsonObject &sandbox);
    /// Reads a policy file (`-` is stdin) as a JSON object; prints why not and returns
    /// std::nullopt when it cannot be read or is not a JSON object.
    std::optional<QJsonObject> readPolicyFile(const QString &path);

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
};

} // namespace airlock::ctl
