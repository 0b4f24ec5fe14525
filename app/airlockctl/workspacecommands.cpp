#include "app/airlockctl/workspacecommands.h"

#include "app/airlockctl/commandrunner.h"
#include "core/terminal/escapefilter.h"
#include "core/workspace/workspacedownload.h"
#include "core/workspace/workspacereview.h"
#include "core/workspace/workspaceupload.h"
#include "core/workspace/workspacewriter.h"

#include <QDir>
#include <QEventLoop>
#include <QJsonArray>

#include <unistd.h>

namespace airlock::ctl {

namespace {

const QString kUser = QStringLiteral("user");
const QString kDefaultGuestFolder = QStringLiteral("/workspace");

QString guestFolder(const Invocation &invocation)
{
    return invocation.arguments.size() > 2 ? invocation.arguments.at(2) : kDefaultGuestFolder;
}

/// Runs a local event loop until `object` emits `done` or `failed`; the error, if any.
template<typename Object, typename Done>
std::optional<Error> runUntil(Object *object, Done done)
{
    QEventLoop loop;
    std::optional<Error> error;
    QObject::connect(object, done, &loop, [&loop] { loop.quit(); });
    QObject::connect(object, &Object::failed, &loop, [&](const Error &e) {
        error = e;
        loop.quit();
    });
    object->start();
    loop.exec();
    return error;
}

QJsonArray refusalArray(const QList<QPair<QString, QString>> &refusals)
{
    QJsonArray array;
    for (const auto &[path, reason] : refusals)
        array.append(
            QJsonObject {{QStringLiteral("path"), path}, {QStringLiteral("reason"), reason}});
    return array;
}

} // namespace

QList<Command> WorkspaceCommands::commands()
{
    const QString where = QStringLiteral("NAME HOSTDIR [GUESTDIR]");
    return {
        {.name = QStringLiteral("workspace"),
         .summary = QStringLiteral(
             "Move a project folder through the guest agent (GUESTDIR defaults to /workspace): "
             "push sends HOSTDIR in, pull writes the guest folder under HOSTDIR (nothing outside "
             "it; symlinks leaving it, hard links, FIFOs, devices and setuid files are refused "
             "and named), diff shows what changed in the guest against HOSTDIR (exit 1 when "
             "something did)."),
         .options = {QCommandLineOption(kUser,
                                        QStringLiteral("push: guest owner of what is written "
                                                       "(default agent)."),
                                        QStringLiteral("USER"))},
         .actions = {{.name = QStringLiteral("push"),
                      .arguments = where,
                      .minArguments = 2,
                      .maxArguments = 3,
                      .handler = handler(&WorkspaceCommands::push)},
                     {.name = QStringLiteral("pull"),
                      .arguments = where,
                      .minArguments = 2,
                      .maxArguments = 3,
                      .handler = handler(&WorkspaceCommands::pull)},
                     {.name = QStringLiteral("diff"),
                      .arguments = where,
                      .minArguments = 2,
                      .maxArguments = 3,
                      .handler = handler(&WorkspaceCommands::diff)}}},
    };
}

void WorkspaceCommands::printGuestText(const QString &text)
{
    if (::isatty(STDOUT_FILENO) != 1) {
        m_out << text;
        return;
    }
    EscapeFilter filter;
    m_out << QString::fromUtf8(filter.feed(text.toUtf8()));
}

int WorkspaceCommands::push(const Invocation &invocation)
{
    const QString sandbox = invocation.arguments.at(0);
    const QString hostFolder = invocation.arguments.at(1);
    if (!QFileInfo(hostFolder).isDir())
        return usageError(invocation, QStringLiteral("%1 is not a folder").arg(hostFolder));
    if (!m_runner.connectHelper())
        return ExitFailed;
    const QString user =
        invocation.options.isSet(kUser) ? invocation.options.value(kUser) : QStringLiteral("agent");
    workspace::WorkspaceUpload upload(m_runner.client(), sandbox, hostFolder,
                                      guestFolder(invocation), user);
    workspace::PushResult result;
    QObject::connect(&upload, &workspace::WorkspaceUpload::finished,
                     [&result](const workspace::PushResult &r) { result = r; });
    if (const auto error = runUntil(&upload, &workspace::WorkspaceUpload::finished)) {
        m_err << "airlockctl: " << error->message << Qt::endl;
        return ExitFailed;
    }
    if (json()) {
        printJson(QJsonObject {{QStringLiteral("entries"), qint64(result.entries)},
                               {QStringLiteral("bytes"), qint64(result.bytes)},
                               {QStringLiteral("refusedCount"), qint64(result.refusedCount)},
                               {QStringLiteral("refused"), refusalArray(result.refused)}});
        return ExitOk;
    }
    m_out << "pushed " << result.entries << " entries (" << result.bytes << " bytes) to " << sandbox
          << ':' << guestFolder(invocation) << Qt::endl;
    for (const auto &[path, reason] : std::as_const(result.refused))
        printGuestText(QStringLiteral("refused by the guest: %1 (%2)\n").arg(path, reason));
    return ExitOk;
}

int WorkspaceCommands::pull(const Invocation &invocation)
{
    const QString sandbox = invocation.arguments.at(0);
    const QString hostFolder = invocation.arguments.at(1);
    auto writer = workspace::WorkspaceWriter::open(hostFolder);
    if (!writer) {
        m_err << "airlockctl: " << writer.error() << Qt::endl;
        return ExitFailed;
    }
    if (!m_runner.connectHelper())
        return ExitFailed;
    workspace::WorkspaceWriter &sink = **writer;
    workspace::WorkspaceDownload download(m_runner.client(), sandbox, guestFolder(invocation),
                                          [&sink](QByteArrayView chunk) -> std::optional<QString> {
                                              if (!sink.feed(chunk))
                                                  return sink.error().value_or(
                                                      QStringLiteral("writing stopped"));
                                              return std::nullopt;
                                          });
    if (const auto error = runUntil(&download, &workspace::WorkspaceDownload::finished)) {
        m_err << "airlockctl: " << error->message << Qt::endl;
        return ExitFailed;
    }
    if (!sink.finished()) {
        m_err << "airlockctl: the guest's archive ended before its end record" << Qt::endl;
        return ExitFailed;
    }
    QList<QPair<QString, QString>> refused;
    for (const auto &refusal : sink.refusals())
        refused.append(
            {QString::fromStdString(refusal.path), QString::fromStdString(refusal.reason)});
    if (json()) {
        printJson(QJsonObject {{QStringLiteral("entries"), qint64(sink.entriesWritten())},
                               {QStringLiteral("bytes"), qint64(sink.bytesWritten())},
                               {QStringLiteral("refused"), refusalArray(refused)}});
        return ExitOk;
    }
    m_out << "pulled " << sink.entriesWritten() << " entries (" << sink.bytesWritten()
          << " bytes) into " << hostFolder << Qt::endl;
    for (const auto &[path, reason] : std::as_const(refused))
        printGuestText(QStringLiteral("refused: %1 (%2)\n").arg(path, reason));
    return ExitOk;
}

int WorkspaceCommands::diff(const Invocation &invocation)
{
    const QString sandbox = invocation.arguments.at(0);
    const QString hostFolder = invocation.arguments.at(1);
    if (!m_runner.connectHelper())
        return ExitFailed;
    workspace::WorkspaceReview review(m_runner.client(), sandbox, hostFolder,
                                      guestFolder(invocation));
    if (const auto error = runUntil(&review, &workspace::WorkspaceReview::ready)) {
        m_err << "airlockctl: " << error->message << Qt::endl;
        return ExitFailed;
    }
    const auto &changes = review.changes();
    if (json()) {
        QJsonArray array;
        for (const workspace::WorkspaceChange &change : changes)
            array.append(
                QJsonObject {{QStringLiteral("path"), change.path},
                             {QStringLiteral("status"), workspace::changeStatusName(change.status)},
                             {QStringLiteral("binary"), change.binary},
                             {QStringLiteral("summary"), change.summary},
                             {QStringLiteral("patch"), change.patch}});
        printJson(QJsonObject {{QStringLiteral("changes"), array}});
        return changes.isEmpty() ? ExitOk : ExitFailed;
    }
    for (const workspace::WorkspaceChange &change : changes) {
        // A text change is its patch; what a patch cannot show (a mode, a link, a binary, a
        // refusal) gets a line of its own.
        if (change.patch.isEmpty() || !change.summary.isEmpty()) {
            QString line = QStringLiteral("%1 %2").arg(workspace::changeStatusName(change.status),
                                                       change.path);
            if (change.binary)
                line += QStringLiteral(" (binary)");
            if (!change.summary.isEmpty())
                line += QStringLiteral(": ") + change.summary;
            printGuestText(line + u'\n');
        }
        printGuestText(change.patch);
    }
    m_out.flush();
    return changes.isEmpty() ? ExitOk : ExitFailed;
}

} // namespace airlock::ctl
