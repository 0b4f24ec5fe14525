#include "app/airlockctl/sandboxcommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/sandboxformat.h"
#include "core/client/helperclient.h"
#include "core/model/error.h"
#include "core/protocol/methods.h"

#include <QDateTime>
#include <QEventLoop>
#include <QJsonArray>
#include <QTimer>

#include <algorithm>

namespace airlock::ctl {

namespace {

// Starting only waits for the VMM process, but QEMU under TCG on a loaded host is slow to exec.
constexpr int kStartTimeoutMs = 120000;
// How long `stop` waits beyond the helper's own power-off timeout for the kill to land.
constexpr int kStopGraceMs = 30000;

} // namespace

QList<Command> SandboxCommands::commands()
{
    return {
        {.name = QStringLiteral("create"),
         .summary = QStringLiteral("Create a stopped sandbox. NAME: [a-z0-9][a-z0-9-]{0,62}. It "
                                   "starts from its image's template when the helper has one, "
                                   "else boots cold."),
         .options = {QCommandLineOption(QStringLiteral("vcpus"),
                                        QStringLiteral("Virtual CPUs (1-32)."),
                                        QStringLiteral("N")),
                     QCommandLineOption(QStringLiteral("memory"),
                                        QStringLiteral("Guest memory in MiB (64-65536)."),
                                        QStringLiteral("MIB")),
                     QCommandLineOption(QStringLiteral("image"),
                                        QStringLiteral("Image id from 'airlockctl images'."),
                                        QStringLiteral("ID")),
                     QCommandLineOption(QStringLiteral("cold-boot"),
                                        QStringLiteral("Always boot the kernel, never start from "
                                                       "the image's template.")),
                     QCommandLineOption(QStringLiteral("vmm"),
                                        QStringLiteral("The VMM backend: qemu or firecracker "
                                                       "(default: the helper's, airlockd "
                                                       "--vmm)."),
                                        QStringLiteral("BACKEND"))},
         .actions = {{.arguments = QStringLiteral("NAME [--vcpus N] [--memory MIB] [--image ID] "
                                                  "[--cold-boot] [--vmm qemu|firecracker]"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&SandboxCommands::create)}}},
        {.name = QStringLiteral("list"),
         .summary = QStringLiteral("List sandboxes as a table (--json: the helper's JSON)."),
         .actions = {{.handler = handler(&SandboxCommands::list)}}},
        {.name = QStringLiteral("info"),
         .summary = QStringLiteral("Show every field of a sandbox, including acceleration and "
                                   "why KVM was not used."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&SandboxCommands::info)}}},
        {.name = QStringLiteral("start"),
         .summary = QStringLiteral("Boot a sandbox; returns once its VMM runs (watch the console "
                                   "for 'airlock-guest ready')."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&SandboxCommands::start)}}},
        {.name = QStringLiteral("stop"),
         .summary = QStringLiteral("Ask the guest to power off, kill it after the timeout, and "
                                   "wait until it is stopped."),
         .options = {QCommandLineOption(
             QStringLiteral("timeout"),
             QStringLiteral("Seconds before the VMM is killed (default 10)."),
             QStringLiteral("SECONDS"), QStringLiteral("10"))},
         .actions = {{.arguments = QStringLiteral("NAME [--timeout SECONDS]"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&SandboxCommands::stop)}}},
        {.name = QStringLiteral("kill"),
         .summary = QStringLiteral("Kill a sandbox's VMM at once."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = sandboxCall(protocol::method::SandboxKill, "killed")}}},
        {.name = QStringLiteral("rm"),
         .summary = QStringLiteral("Delete a stopped sandbox and its runtime files."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = sandboxCall(protocol::method::SandboxDelete, "removed")}}},
        {.name = QStringLiteral("images"),
         .summary = QStringLiteral("List the images in the helper's image store."),
         .actions = {{.handler = handler(&SandboxCommands::images)}}},
    };
}

int SandboxCommands::create(const Invocation &invocation)
{
    QJsonObject params {{kName, invocation.arguments.first()}};
    if (!insertWholeNumbers(invocation,
                            {{QStringLiteral("vcpus"), QStringLiteral("vcpus")},
                             {QStringLiteral("memory"), QStringLiteral("memoryMib")}},
                            params))
        return ExitUsage;
    const QCommandLineParser &options = invocation.options;
    if (options.isSet(QStringLiteral("image")))
        params.insert(QStringLiteral("image"), options.value(QStringLiteral("image")));
    if (options.isSet(QStringLiteral("cold-boot")))
        params.insert(QStringLiteral("boot"), QStringLiteral("cold"));
    // Checked by the helper (invalid_params names the field), like every other value.
    if (options.isSet(QStringLiteral("vmm")))
        params.insert(QStringLiteral("vmm"), options.value(QStringLiteral("vmm")));
    const auto result = call(protocol::method::SandboxCreate, params, 30000, shapeOptions());
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonObject sandbox = result->toObject();
    const int vcpus = sandbox.value(QStringLiteral("vcpus")).toInt();
    m_out << QStringLiteral("created sandbox %1 (%2 vCPU%3, %4 MiB, image %5)")
                 .arg(quoted(sandbox.value(kName).toString()))
                 .arg(vcpus)
                 .arg(vcpus == 1 ? QString() : QStringLiteral("s"))
                 .arg(sandbox.value(QStringLiteral("memoryMib")).toInt())
                 .arg(sandbox.value(QStringLiteral("image")).toString())
          << Qt::endl;
    return ExitOk;
}

int SandboxCommands::list(const Invocation &)
{
    const auto result = call(protocol::method::SandboxList, {});
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonArray sandboxes = result->toObject().value(QStringLiteral("sandboxes")).toArray();
    if (sandboxes.isEmpty())
        m_out << "no sandboxes (create one with: airlockctl create NAME)" << Qt::endl;
    else
        m_out << formatSandboxTable(sandboxes, QDateTime::currentDateTimeUtc());
    m_out.flush();
    // Once per listing, from the helper's `hello`: why guests run without KVM and what to do.
    const QString warning =
        m_runner.client()->helloResult().value(QStringLiteral("accelerationWarning")).toString();
    if (!warning.isEmpty())
        m_err << "airlockctl: warning: KVM is not usable: " << warning << Qt::endl;
    return ExitOk;
}

int SandboxCommands::info(const Invocation &invocation)
{
    const auto result = call(protocol::method::SandboxGet, {{kName, invocation.arguments.first()}});
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << formatSandboxInfo(result->toObject(), QDateTime::currentDateTimeUtc());
    m_out.flush();
    return ExitOk;
}

int SandboxCommands::start(const Invocation &invocation)
{
    const QString name = invocation.arguments.first();
    const auto result = call(protocol::method::SandboxStart, {{kName, name}}, kStartTimeoutMs);
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonObject sandbox = result->toObject();
    const bool fromTemplate =
        sandbox.value(QStringLiteral("startedFrom")).toString() == QLatin1String("template");
    m_out << QStringLiteral("started sandbox %1%2 (%3)")
                 .arg(quoted(name),
                      fromTemplate ? QStringLiteral(" from its image's template") : QString(),
                      sandbox.value(QStringLiteral("acceleration")).toString())
          << Qt::endl;
    const QString warning = sandbox.value(QStringLiteral("accelerationWarning")).toString();
    if (!warning.isEmpty())
        m_err << "airlockctl: warning: " << warning << Qt::endl;
    warnIdentity(sandbox);
    return ExitOk;
}

int SandboxCommands::stop(const Invocation &invocation)
{
    const QString name = invocation.arguments.first();
    const std::optional<int> timeout = timeoutOption(invocation);
    if (!timeout)
        return ExitUsage;
    const int timeoutMs = *timeout;

    // Subscribe first: the stopped event must not slip by between the answer and the wait.
    if (!call(protocol::method::EventsSubscribe, {}))
        return ExitFailed;
    QJsonObject last;
    bool stopped = false;
    QEventLoop loop;
    QObject::connect(
        m_runner.client(), &HelperClient::notificationReceived, &loop,
        [&](const QString &method, const QJsonObject &params) {
            if (method == QLatin1String(protocol::notification::SandboxRemoved)
                && params.value(kName).toString() == name) {
                stopped = true;
                loop.quit();
            }
            if (method != QLatin1String(protocol::notification::SandboxChanged))
                return;
            const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
            if (sandbox.value(kName).toString() != name)
                return;
            last = sandbox;
            if (sandbox.value(QStringLiteral("state")).toString() == QStringLiteral("stopped")) {
                stopped = true;
                loop.quit();
            }
        });
    QObject::connect(m_runner.client(), &HelperClient::connectionLost, &loop,
                     [&](const Error &error) {
                         m_err << "airlockctl: " << error.message << Qt::endl;
                         loop.quit();
                     });
    const auto result = call(protocol::method::SandboxStop,
                             {{kName, name}, {QStringLiteral("timeoutMs"), timeoutMs}});
    if (!result)
        return ExitFailed;
    if (last.isEmpty())
        last = result->toObject();
    if (!stopped && last.value(QStringLiteral("state")).toString() == QStringLiteral("stopped"))
        stopped = true;
    if (!stopped) {
        QTimer::singleShot(timeoutMs + kStopGraceMs, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (!stopped) {
        if (m_runner.client()->state() == HelperClient::State::Ready)
            m_err << "airlockctl: sandbox " << quoted(name) << " did not stop in time" << Qt::endl;
        return ExitFailed;
    }
    if (json())
        printJson(last);
    else
        m_out << "stopped sandbox " << quoted(name) << Qt::endl;
    return ExitOk;
}

int SandboxCommands::images(const Invocation &)
{
    const auto result = call(protocol::method::ImageList, {});
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    m_out << formatImageTable(result->toObject().value(QStringLiteral("images")).toArray());
    m_out.flush();
    return ExitOk;
}

} // namespace airlock::ctl
