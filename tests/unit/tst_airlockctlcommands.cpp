// airlockctl's command tables against what describes them elsewhere: the help made from them,
// the bash completion (installers/completion/airlockctl), the man page
// (installers/man/airlockctl.1.in) and docs/airlockctl.md. A command added to a table but not
// to those fails here.

#include "app/airlockctl/commandrunner.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using airlock::ctl::Action;
using airlock::ctl::Command;
using airlock::ctl::CommandRunner;

namespace {

QString readSource(const char *path)
{
    QFile file(QStringLiteral(AIRLOCK_SOURCE_DIR "/") + QLatin1String(path));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", path);
    return QString::fromUtf8(file.readAll());
}

struct Run
{
    int exitCode;
    QString out;
    QString err;
};

Run runCtl(const QStringList &arguments)
{
    QString out;
    QString err;
    int code = 0;
    {
        QTextStream outStream(&out);
        QTextStream errStream(&err);
        CommandRunner runner(outStream, errStream, QStringLiteral("/nonexistent/airlockd.sock"));
        code = runner.run(QStringList {QStringLiteral("airlockctl")} + arguments);
    }
    return {code, out, err};
}

// The table; its handlers are never called here (the groups they belong to are gone).
QList<Command> commands()
{
    QString sink;
    QTextStream stream(&sink);
    const CommandRunner runner(stream, stream, {});
    return runner.commands();
}

QStringList words(const QString &text)
{
    return text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

QSet<QString> wordSet(const QString &text)
{
    const QStringList list = words(text);
    return {list.begin(), list.end()};
}

QStringList actionNames(const Command &command)
{
    QStringList names;
    for (const Action &action : command.actions)
        if (!action.name.isEmpty())
            names.append(action.name);
    return names;
}

// The text of a roff macro line: its arguments (quoted or not) as the macro prints them,
// without font escapes. .B and .I join them with spaces; .BI, .BR and the other alternating
// macros run them together.
QString roffText(const QString &line)
{
    static const QRegularExpression argument(QStringLiteral("\"([^\"]*)\"|(\\S+)"));
    const QString macro = line.section(QLatin1Char(' '), 0, 0);
    QStringList arguments;
    auto it = argument.globalMatch(line.section(QLatin1Char(' '), 1));
    while (it.hasNext()) {
        const QRegularExpressionMatch match = it.next();
        arguments.append(match.hasCaptured(1) ? match.captured(1) : match.captured(2));
    }
    const bool joined = macro == QStringLiteral(".B") || macro == QStringLiteral(".I");
    QString text = arguments.join(joined ? QStringLiteral(" ") : QString());
    text.remove(QRegularExpression(QStringLiteral("\\\\f[BIRP]")));
    text.replace(QStringLiteral("\\-"), QStringLiteral("-"));
    return text;
}

// The entries of the man page's COMMANDS section: the tag line after each .TP.
QStringList manCommandTags()
{
    const QStringList lines = readSource("installers/man/airlockctl.1.in").split(QLatin1Char('\n'));
    QStringList tags;
    bool inCommands = false;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (lines[i].startsWith(QStringLiteral(".SH")))
            inCommands = lines[i] == QStringLiteral(".SH COMMANDS");
        else if (inCommands && lines[i] == QStringLiteral(".TP") && i + 1 < lines.size())
            tags.append(roffText(lines[i + 1]));
    }
    return tags;
}

} // namespace

class TestAirlockctlCommands : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void helpListsEveryCommand();
    void everyCommandHasHelpAndUsage();
    void completionOffersTheCommands();
    void manPageDescribesTheCommands();
    void docsDescribeTheCommands();
};

void TestAirlockctlCommands::helpListsEveryCommand()
{
    const Run run = runCtl({QStringLiteral("--help")});
    QCOMPARE(run.exitCode, 0);
    QStringList listed;
    const QString section = run.out.section(QStringLiteral("Commands:\n"), 1);
    for (const QString &line : section.split(QLatin1Char('\n')))
        if (line.startsWith(QStringLiteral("  ")) && !line.startsWith(QStringLiteral("   ")))
            listed.append(words(line).first());
    QStringList names;
    for (const Command &command : commands())
        names.append(command.name);
    QCOMPARE(listed, names);
    QCOMPARE(QSet<QString>(names.begin(), names.end()).size(), names.size());
}

void TestAirlockctlCommands::everyCommandHasHelpAndUsage()
{
    for (const Command &command : commands()) {
        const Run help = runCtl({command.name, QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.startsWith(
                     QStringLiteral("Usage: airlockctl [--socket PATH] %1\n").arg(command.usage())),
                 qPrintable(help.out));
        // Arguments no action takes are a usage error that names the command (exec takes any
        // number: they are the command it runs).
        const QStringList four {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"),
                                QStringLiteral("d")};
        if (command.select(four))
            continue;
        const Run wrong = runCtl(QStringList {command.name} + four);
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(
            wrong.err.endsWith(QStringLiteral("Try 'airlockctl %1 --help'.\n").arg(command.name)),
            qPrintable(wrong.err));
    }
}

void TestAirlockctlCommands::completionOffersTheCommands()
{
    const QString completion = readSource("installers/completion/airlockctl");
    const QList<Command> table = commands();
    QSet<QString> names;
    for (const Command &command : table)
        names.insert(command.name);

    const QRegularExpressionMatch listed =
        QRegularExpression(QStringLiteral("local commands=\"([^\"]*)\"")).match(completion);
    QVERIFY(listed.hasMatch());
    QCOMPARE(wordSet(listed.captured(1)), names);

    // Every literal word list offered is the commands or one command's actions.
    QList<QSet<QString>> offers {names};
    for (const Command &command : table) {
        const QStringList actions = actionNames(command);
        if (!actions.isEmpty())
            offers.append(QSet<QString>(actions.begin(), actions.end()));
    }
    auto lists =
        QRegularExpression(QStringLiteral("compgen -W \"([^\"$]*)\"")).globalMatch(completion);
    int checked = 0;
    while (lists.hasNext()) {
        const QString list = lists.next().captured(1);
        QVERIFY2(offers.contains(wordSet(list)), qPrintable(list));
        ++checked;
    }
    QVERIFY(checked > 0);

    // A command's option list holds exactly its options.
    const QRegularExpression optionLine(QStringLiteral("^\\s*(\\w+)\\) opts=\"([^\"$]*) \\$opts\""),
                                        QRegularExpression::MultilineOption);
    auto optionLines = optionLine.globalMatch(completion);
    checked = 0;
    while (optionLines.hasNext()) {
        const QRegularExpressionMatch line = optionLines.next();
        const auto command = std::ranges::find(table, line.captured(1), &Command::name);
        QVERIFY2(command != table.end(), qPrintable(line.captured(1)));
        QSet<QString> options;
        for (const QCommandLineOption &option : command->options)
            for (const QString &name : option.names())
                if (name.size() > 1)
                    options.insert(QStringLiteral("--") + name);
        QCOMPARE(wordSet(line.captured(2)), options);
        ++checked;
    }
    QVERIFY(checked > 0);

    // The global options it offers exist.
    const QRegularExpressionMatch global =
        QRegularExpression(QStringLiteral("local global_opts=\"([^\"]*)\"")).match(completion);
    QVERIFY(global.hasMatch());
    const QString help = runCtl({QStringLiteral("--help")}).out;
    for (const QString &option : words(global.captured(1)))
        QVERIFY2(help.contains(QStringLiteral("  ") + option)
                     || help.contains(QStringLiteral(", ") + option),
                 qPrintable(option));
}

void TestAirlockctlCommands::manPageDescribesTheCommands()
{
    const QStringList tags = manCommandTags();
    QVERIFY(!tags.isEmpty());
    for (const Command &command : commands()) {
        // An entry starts with the command (a tag may name several: "pause NAME, resume NAME").
        const QString start = QStringLiteral("(?:^|, )") + QRegularExpression::escape(command.name);
        const QRegularExpression entry(start + QStringLiteral("(?: |$)"));
        QVERIFY2(std::ranges::any_of(
                     tags, [&](const QString &tag) { return entry.match(tag).hasMatch(); }),
                 qPrintable(command.name));
        // And every action has one ("snapshot rm|pin|unpin SNAP" names three).
        for (const QString &action : actionNames(command)) {
            const QRegularExpression actionEntry(start + QStringLiteral(" (?:[a-z]+\\|)*")
                                                 + QRegularExpression::escape(action)
                                                 + QStringLiteral("(?:[ |]|$)"));
            QVERIFY2(
                std::ranges::any_of(
                    tags, [&](const QString &tag) { return actionEntry.match(tag).hasMatch(); }),
                qPrintable(command.name + QLatin1Char(' ') + action));
        }
    }
}

void TestAirlockctlCommands::docsDescribeTheCommands()
{
    const QString docs = readSource("docs/airlockctl.md");
    QStringList headings;
    for (const QString &line : docs.split(QLatin1Char('\n')))
        if (line.startsWith(QStringLiteral("### `")))
            headings.append(line);
    for (const Command &command : commands()) {
        const QString name = QLatin1Char('`') + QRegularExpression::escape(command.name);
        const QRegularExpression heading(name + QStringLiteral("[ `]"));
        QVERIFY2(std::ranges::any_of(
                     headings, [&](const QString &line) { return heading.match(line).hasMatch(); }),
                 qPrintable(command.name));
        for (const QString &action : actionNames(command))
            QVERIFY2(docs.contains(QRegularExpression(name + QLatin1Char(' ')
                                                      + QRegularExpression::escape(action)
                                                      + QStringLiteral("[ `]"))),
                     qPrintable(command.name + QLatin1Char(' ') + action));
    }
}

QTEST_GUILESS_MAIN(TestAirlockctlCommands)
#include "tst_airlockctlcommands.moc"
