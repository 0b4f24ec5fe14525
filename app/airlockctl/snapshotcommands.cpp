#include "app/airlockctl/snapshotcommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/snapshotformat.h"
#include "core/protocol/methods.h"

namespace airlock::ctl {

namespace {

const QString kSnapshot = QStringLiteral("snapshot");
// Snapshot operations copy and hash guest memory: give them longer than a sandbox call.
constexpr int kTimeoutMs = 300000;

} // namespace

QList<Command> SnapshotCommands::commands()
{
    return {
        {.name = QStringLiteral("pause"),
         .summary = QStringLiteral("Stop a running guest's CPUs (state paused)."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = sandboxCall(protocol::method::VmPause, "paused")}}},
        {.name = QStringLiteral("resume"),
         .summary = QStringLiteral("Let a paused guest run again."),
         .actions = {{.arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = sandboxCall(protocol::method::VmResume, "resumed")}}},
        {.name = QStringLiteral("snapshot"),
         .summary = QStringLiteral("Snapshots of a running guest (docs/snapshots.md). restore "
                                   "first takes a safety snapshot of a running sandbox; fork "
                                   "starts a new sandbox from a snapshot (its own name, "
                                   "addresses and CA; credential bindings only with "
                                   "--with-bindings); schedule shows or sets automatic "
                                   "snapshots (interval 0: off)."),
         .options = {QCommandLineOption(QStringLiteral("label"), QStringLiteral("Snapshot label."),
                                        QStringLiteral("LABEL")),
                     QCommandLineOption(QStringLiteral("with-bindings"),
                                        QStringLiteral("fork: copy the original's credential "
                                                       "bindings (with new placeholders).")),
                     QCommandLineOption(QStringLiteral("interval"),
                                        QStringLiteral("Minutes between automatic snapshots (0: "
                                                       "off)."),
                                        QStringLiteral("MIN")),
                     QCommandLineOption(QStringLiteral("hourly"),
                                        QStringLiteral("Hours during which one snapshot per hour "
                                                       "is kept."),
                                        QStringLiteral("H")),
                     QCommandLineOption(QStringLiteral("daily"),
                                        QStringLiteral("Days during which one snapshot per day "
                                                       "is kept."),
                                        QStringLiteral("D"))},
         .actions =
             {{.name = QStringLiteral("create"),
               .arguments = QStringLiteral("NAME [--label L]"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = handler(&SnapshotCommands::create)},
              {.name = QStringLiteral("ls"),
               .arguments = QStringLiteral("NAME"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = handler(&SnapshotCommands::list)},
              {.name = QStringLiteral("restore"),
               .arguments = QStringLiteral("NAME SNAP"),
               .minArguments = 2,
               .maxArguments = 2,
               .handler = handler(&SnapshotCommands::restore)},
              {.name = QStringLiteral("fork"),
               .arguments = QStringLiteral("SNAP NEWNAME [--with-bindings]"),
               .minArguments = 2,
               .maxArguments = 2,
               .handler = handler(&SnapshotCommands::fork)},
              {.name = QStringLiteral("rm"),
               .arguments = QStringLiteral("SNAP"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = handler(&SnapshotCommands::remove)},
              {.name = QStringLiteral("pin"),
               .arguments = QStringLiteral("SNAP"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = [this](const Invocation &invocation) { return pin(invocation, true); }},
              {.name = QStringLiteral("unpin"),
               .arguments = QStringLiteral("SNAP"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = [this](const Invocation &invocation) { return pin(invocation, false); }},
              {.name = QStringLiteral("rename"),
               .arguments = QStringLiteral("SNAP LABEL"),
               .minArguments = 2,
               .maxArguments = 2,
               .handler = handler(&SnapshotCommands::rename)},
              {.name = QStringLiteral("schedule"),
               .arguments = QStringLiteral("NAME [--interval MIN] [--hourly H] [--daily D]"),
               .minArguments = 1,
               .maxArguments = 1,
               .handler = handler(&SnapshotCommands::schedule)}}},
    };
}

int SnapshotCommands::describe(const QJsonValue &value, const char *done)
{
    const QJsonObject s = value.toObject();
    if (json()) {
        printJson(s);
        return ExitOk;
    }
    m_out << done << " snapshot " << s.value(QStringLiteral("id")).toString() << " of "
          << quoted(s.value(QStringLiteral("sandbox")).toString());
    if (!s.value(QStringLiteral("label")).toString().isEmpty())
        m_out << " (" << s.value(QStringLiteral("label")).toString() << ")";
    m_out << Qt::endl;
    return ExitOk;
}

int SnapshotCommands::create(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    QJsonObject params {{kName, name}};
    if (invocation.options.isSet(QStringLiteral("label")))
        params.insert(QStringLiteral("label"), invocation.options.value(QStringLiteral("label")));
    const auto result = call(protocol::method::SnapshotCreate, params, kTimeoutMs);
    if (!result)
        return ExitFailed;
    if (json())
        return describe(*result, "");
    const QJsonObject s = result->toObject();
    m_out << "created snapshot " << s.value(QStringLiteral("id")).toString() << " of "
          << quoted(name) << ": "
          << formatBytes(s.value(QStringLiteral("logicalBytes")).toInteger()) << ", "
          << formatBytes(s.value(QStringLiteral("newBytes")).toInteger()) << " new ("
          << formatBytes(s.value(QStringLiteral("newStoredBytes")).toInteger())
          << " stored), guest paused " << s.value(QStringLiteral("pauseMs")).toInteger() << " ms"
          << Qt::endl;
    return ExitOk;
}

int SnapshotCommands::list(const Invocation &invocation)
{
    const auto result = call(protocol::method::SnapshotList, {{kName, invocation.arguments.at(0)}});
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << formatSnapshotTable(result->toObject()) << Qt::flush;
    return ExitOk;
}

int SnapshotCommands::restore(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    const QString snapshot = invocation.arguments.at(1);
    const auto result =
        call(protocol::method::SnapshotRestore, {{kName, name}, {kSnapshot, snapshot}}, kTimeoutMs);
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonValue safety = result->toObject().value(QStringLiteral("safety"));
    m_out << "restored sandbox " << quoted(name) << " to snapshot " << snapshot;
    if (safety.isObject())
        m_out << " (safety snapshot " << safety.toObject().value(QStringLiteral("id")).toString()
              << ")";
    m_out << Qt::endl;
    warnIdentity(result->toObject().value(QStringLiteral("sandbox")).toObject());
    return ExitOk;
}

int SnapshotCommands::fork(const Invocation &invocation)
{
    const QString snapshot = invocation.arguments.at(0);
    const QString name = invocation.arguments.at(1);
    const bool withBindings = invocation.options.isSet(QStringLiteral("with-bindings"));
    const auto result =
        call(protocol::method::SnapshotFork,
             {{kSnapshot, snapshot}, {kName, name}, {QStringLiteral("bindings"), withBindings}},
             kTimeoutMs);
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const int copied = result->toObject().value(QStringLiteral("bindingsCopied")).toInt();
    m_out << "forked sandbox " << quoted(name) << " from snapshot " << snapshot << "; "
          << (withBindings ? QStringLiteral("%1 credential binding%2 copied with new placeholders")
                                 .arg(copied)
                                 .arg(copied == 1 ? QString() : QStringLiteral("s"))
                           : QStringLiteral("no credential bindings copied (--with-bindings copies "
                                            "them)"))
          << Qt::endl;
    // Bindings of other users' secrets stay behind (docs/credentials.md, "Trust model").
    if (const QString leftOut =
            result->toObject().value(QStringLiteral("bindingsLeftOutReason")).toString();
        !leftOut.isEmpty())
        m_err << "airlockctl: " << leftOut << Qt::endl;
    warnIdentity(result->toObject());
    return ExitOk;
}

int SnapshotCommands::remove(const Invocation &invocation)
{
    const QString snapshot = invocation.arguments.at(0);
    const auto result = call(protocol::method::SnapshotDelete, {{kSnapshot, snapshot}});
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << "removed snapshot " << snapshot << Qt::endl;
    return ExitOk;
}

int SnapshotCommands::pin(const Invocation &invocation, bool pinned)
{
    const auto result =
        call(protocol::method::SnapshotPin,
             {{kSnapshot, invocation.arguments.at(0)}, {QStringLiteral("pinned"), pinned}});
    if (!result)
        return ExitFailed;
    return describe(*result, pinned ? "pinned" : "unpinned");
}

int SnapshotCommands::rename(const Invocation &invocation)
{
    const auto result = call(protocol::method::SnapshotRename,
                             {{kSnapshot, invocation.arguments.at(0)},
                              {QStringLiteral("label"), invocation.arguments.at(1)}});
    if (!result)
        return ExitFailed;
    return describe(*result, "renamed");
}

int SnapshotCommands::schedule(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    QJsonObject schedule;
    if (!insertWholeNumbers(invocation,
                            {{QStringLiteral("interval"), QStringLiteral("intervalMinutes")},
                             {QStringLiteral("hourly"), QStringLiteral("hourlyHours")},
                             {QStringLiteral("daily"), QStringLiteral("dailyDays")}},
                            schedule))
        return ExitUsage;
    QJsonObject params {{kName, name}};
    if (!schedule.isEmpty()) {
        // Unset fields keep their current values.
        const auto current = call(protocol::method::SnapshotSchedule, params);
        if (!current)
            return ExitFailed;
        QJsonObject merged = current->toObject();
        for (auto it = schedule.begin(); it != schedule.end(); ++it)
            merged.insert(it.key(), it.value());
        params.insert(QStringLiteral("schedule"), merged);
    }
    const auto result = call(protocol::method::SnapshotSchedule, params);
    if (!result)
        return ExitFailed;
    if (json()) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonObject s = result->toObject();
    const int interval = s.value(QStringLiteral("intervalMinutes")).toInt();
    m_out << quoted(name) << ": automatic snapshots "
          << (interval > 0 ? QStringLiteral("every %1 min").arg(interval) : QStringLiteral("off"))
          << "; keep hourly " << s.value(QStringLiteral("hourlyHours")).toInt() << " h, daily "
          << s.value(QStringLiteral("dailyDays")).toInt() << " days" << Qt::endl;
    return ExitOk;
}

} // namespace airlock::ctl
