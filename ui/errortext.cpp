#include "ui/errortext.h"

#include "core/client/helperstartadvice.h"

#include <QtGlobal>

namespace airlock {

QString ErrorText::summary(const Error &error)
{
    switch (error.kind) {
    case ErrorKind::NotFound:
        return tr("The sandbox or image does not exist.");
    case ErrorKind::InvalidName:
        return tr("The name is not valid.");
    case ErrorKind::PermissionDenied:
        return tr("The helper refused the request: permission denied.");
    case ErrorKind::Busy:
        return tr("The sandbox is in use.");
    case ErrorKind::BackendUnavailable:
        return tr("The helper cannot run virtual machines right now.");
    case ErrorKind::AlreadyExists:
        return tr("A sandbox with that name already exists.");
    case ErrorKind::InvalidState:
        return tr("That is not possible in the sandbox's current state.");
    case ErrorKind::OperationFailed:
        return tr("The operation failed on the host.");
    case ErrorKind::Timeout:
        return tr("The helper did not answer in time.");
    case ErrorKind::Disconnected:
        return tr("The connection to the helper was lost.");
    case ErrorKind::InvalidParams:
        return tr("The request had an invalid value.");
    case ErrorKind::MessageTooLarge:
        return tr("The message was too large.");
    case ErrorKind::AgentUnavailable:
        return tr("The sandbox's guest agent is not reachable; is the sandbox running?");
    case ErrorKind::ProtocolError:
        return tr("The sandbox's guest agent sent garbage; its channel was closed.");
    case ErrorKind::IsADirectory:
        return tr("The path in the sandbox is a folder, not a file.");
    case ErrorKind::NotADirectory:
        return tr("The path in the sandbox is a file, not a folder.");
    case ErrorKind::NotEmpty:
        return tr("The folder in the sandbox is not empty.");
    case ErrorKind::NoSpace:
        return tr("The sandbox's disk is full.");
    case ErrorKind::Conflict:
        return tr("Someone else changed it meanwhile; look at it again and retry.");
    case ErrorKind::ParseError:
    case ErrorKind::InvalidRequest:
    case ErrorKind::MethodNotFound:
    case ErrorKind::Internal:
        break;
    }
    return tr("The helper reported an internal error.");
}

QString ErrorText::details(const Error &error)
{
    return summary(error) + QStringLiteral("\n\n") + error.message;
}

QString ErrorText::fileSummary(const Error &error)
{
    switch (error.kind) {
    case ErrorKind::NotFound:
        return tr("The path does not exist in the sandbox.");
    case ErrorKind::PermissionDenied:
        return tr("The sandbox refused it: permission denied.");
    case ErrorKind::AlreadyExists:
        return tr("Something with that name already exists in the sandbox.");
    case ErrorKind::Busy:
        return tr("The path in the sandbox is in use.");
    case ErrorKind::InvalidState:
        return tr("The sandbox is not running; start it to work with its files.");
    case ErrorKind::OperationFailed:
        return tr("The operation failed on this computer.");
    default:
        break;
    }
    return summary(error);
}

QString ErrorText::connectionTitle(const Error &error)
{
    switch (error.kind) {
    case ErrorKind::PermissionDenied:
        return tr("You may not use the Airlock helper");
    case ErrorKind::InvalidRequest:
        return tr("The Airlock helper speaks another protocol version");
    case ErrorKind::Disconnected:
    case ErrorKind::Timeout:
        return tr("The Airlock helper is not reachable");
    default:
        break;
    }
    return tr("The connection to the Airlock helper failed");
}

QString ErrorText::connectionFix(const Error &error)
{
    switch (error.kind) {
    case ErrorKind::PermissionDenied:
        return tr("Only root and members of the group “airlock” may manage sandboxes. "
                  "Add your user with <code>sudo usermod -aG airlock %1</code>, then log out "
                  "and in again.")
            .arg(qEnvironmentVariable("USER", QStringLiteral("$USER")).toHtmlEscaped());
    case ErrorKind::InvalidRequest:
        return tr("Install the same Airlock version for the window and the helper.");
    default:
        break;
    }
    // systemctl only where the package's unit is; a build tree's helper is started by hand.
    if (HelperStartAdvice::hasSystemdUnit())
        return tr("Start the helper with <code>sudo systemctl start airlockd</code>, then press "
                  "Retry.");
    return tr("There is no airlockd.service on this computer, so the helper was started by hand "
              "(a build tree). Start it again as root: <code>sudo installers/dev/run-demo.sh"
              "</code> from the source tree, or <code>sudo build/app/airlockd/airlockd</code>, "
              "then press Retry.");
}

} // namespace airlock
