// The window's agent views end to end on the host: FilesTab (browse, enter, up, upload and
// download of files and folders, delete, new folder, errors in words), its Run command panel
// (stdout and stderr apart, the exit status, Stop, bounded and plain output) and the workspace
// dialogs (Bring a project folder, Review changes with a subset taken), against a real
// RpcServer with AgentApi and WorkspaceApi on a real Unix socket, a real HelperClient, and the
// real airlock-agent binary run natively as the sandbox's agent (NativeAgent, as
// tst_agentapi: no guest, so the "guest" paths are folders of this host).
#include "core/agent/agentclient.h"
#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/daemon/agentapi.h"
#include "core/daemon/rpcserver.h"
#include "core/daemon/workspaceapi.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"
#include "nativeagent.h"
#include "ui/bringprojectdialog.h"
#include "ui/commandoutputview.h"
#include "ui/commandpanel.h"
#include "ui/commandrunner.h"
#include "ui/errortext.h"
#include "ui/filestab.h"
#include "ui/guestfilemodel.h"
#include "ui/mainwindow.h"
#include "ui/resources.h"
#include "ui/reviewdialog.h"
#include "ui/workspacechangemodel.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>

#include <sys/stat.h>
#include <unistd.h>

using namespace airlock;
using airlock::test::NativeAgent;

namespace {

constexpr int kWaitMs = 30000;
const QString kSandbox = QStringLiteral("demo");

void writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(content);
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}

QByteArray randomBytes(qsizetype size)
{
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        bytes[i] = char(QRandomGenerator::global()->bounded(256));
    return bytes;
}

} // namespace

class TestFilesTab : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void browseEnterAndUp();
    void uploadAndDownloadRoundTrip();
    void foldersGoBothWays();
    void newFolderAndDelete();
    void errorsAreShownInWords();
    void runCommandShowsOutputAndExit();
    void stopEndsTheCommand();
    void outputStaysBoundedAndPlain();
    void bringProjectAndReviewTakeASubset();
    void mainWindowOpensFilesTab();

private:
    /// A FilesTab on this test's helper, showing `folder` (listed).
    std::unique_ptr<FilesTab> newTab(const QString &folder);

    QTemporaryDir m_dir;
    std::unique_ptr<NativeAgent> m_agent;
    std::unique_ptr<agent::AgentClient> m_agentClient;
    std::unique_ptr<RpcServer> m_server;
    std::unique_ptr<AgentApi> m_api;
    std::unique_ptr<WorkspaceApi> m_workspaceApi;
    std::unique_ptr<HelperClient> m_client;
    QString m_socket;
};

void TestFilesTab::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_agent = std::make_unique<NativeAgent>();
    QVERIFY(m_agent->start());
    m_agentClient = m_agent->connectReady();
    QVERIFY(m_agentClient);
    m_server = std::make_unique<RpcServer>(AccessPolicy(getgid(), QStringLiteral("root")));
    m_socket = m_dir.filePath(QStringLiteral("airlockd.sock"));
    QVERIFY(m_server->listen(m_socket));
    m_server->addMethod(
        QString::fromLatin1(protocol::method::Hello),
        [](const RpcContext &, const QJsonObject &) -> Result<QJsonValue> {
            return QJsonObject {{QStringLiteral("protocol"), protocol::kProtocolVersion}};
        });
    const AgentApi::ClientLookup lookup =
        [this](const QString &name) -> Result<agent::AgentClient *> {
        if (name != kSandbox)
            return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
        if (!m_agentClient)
            return fail(ErrorKind::AgentUnavailable, QStringLiteral("no agent"));
        return m_agentClient.get();
    };
    m_api = std::make_unique<AgentApi>(*m_server, lookup);
    m_workspaceApi = std::make_unique<WorkspaceApi>(*m_server, lookup);
    m_client = std::make_unique<HelperClient>(std::make_unique<LocalSocketTransport>(m_socket),
                                              QStringLiteral("tst_filestab"));
    QVERIFY(m_client->connectSync());
    initUiResources();
}

void TestFilesTab::cleanupTestCase()
{
    m_client.reset();
    m_workspaceApi.reset();
    m_api.reset();
    m_server.reset();
    m_agentClient.reset();
    m_agent.reset();
}

std::unique_ptr<FilesTab> TestFilesTab::newTab(const QString &folder)
{
    auto tab = std::make_unique<FilesTab>(m_client.get(), kSandbox);
    tab->setGuestUser(QStringLiteral("root")); // the native agent runs as this test's user
    tab->resize(900, 600);
    tab->show();
    if (!QTest::qWaitForWindowExposed(tab.get()))
        return nullptr;
    tab->setPath(folder);
    // The first listing (/workspace or /) may answer first: wait for this folder's.
    if (!QTest::qWaitFor([&] { return tab->path() == folder && !tab->isBusy(); }, kWaitMs))
        return nullptr;
    return tab;
}

void TestFilesTab::browseEnterAndUp()
{
    const QString root = m_dir.filePath(QStringLiteral("browse"));
    writeFile(root + QStringLiteral("/notes.txt"), "hello\n");
    writeFile(root + QStringLiteral("/src/main.c"), "int main(void) { return 0; }\n");
    QCOMPARE(::symlink("notes.txt", QFile::encodeName(root + QStringLiteral("/link")).constData()),
             0);
    auto tab = newTab(root);
    QVERIFY(tab);
    GuestFileModel *model = tab->model();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, kWaitMs);
    // Folders first.
    QCOMPARE(model->entryAt(0)->name, QStringLiteral("src"));
    QCOMPARE(model->index(0, GuestFileModel::TypeColumn).data().toString(),
             QStringLiteral("Folder"));
    const int notes = model->rowOf(QStringLiteral("notes.txt"));
    QVERIFY(notes >= 0);
    QCOMPARE(model->entryAt(notes)->size, qint64(6));
    QCOMPARE(model->index(notes, GuestFileModel::ModeColumn).data().toString(),
             QStringLiteral("rw-r--r--"));
    QVERIFY(!model->index(notes, GuestFileModel::ModifiedColumn).data().toString().isEmpty());
    const int link = model->rowOf(QStringLiteral("link"));
    QCOMPARE(model->entryAt(link)->type, GuestFileInfo::Type::Symlink);
    QVERIFY(model->index(link, GuestFileModel::NameColumn)
                .data()
                .toString()
                .contains(QStringLiteral("notes.txt")));

    // Double-click on the folder enters it.
    QTableView *table = tab->table();
    const QRect cell = table->visualRect(model->index(0, GuestFileModel::NameColumn));
    // A double click as a person makes it: a click, then the second press as a double click.
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QTRY_COMPARE_WITH_TIMEOUT(tab->path(), root + QStringLiteral("/src"), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, kWaitMs);
    QCOMPARE(model->entryAt(0)->name, QStringLiteral("main.c"));
    QCOMPARE(tab->pathEdit()->text(), root + QStringLiteral("/src"));

    tab->goUp();
    QTRY_COMPARE_WITH_TIMEOUT(tab->path(), root, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, kWaitMs);

    // A path typed into the bar.
    tab->pathEdit()->setText(root + QStringLiteral("/src/"));
    QTest::keyClick(tab->pathEdit(), Qt::Key_Return);
    QTRY_COMPARE_WITH_TIMEOUT(tab->path(), root + QStringLiteral("/src"), kWaitMs);
    QVERIFY(tab->errorText().isEmpty());
}

void TestFilesTab::uploadAndDownloadRoundTrip()
{
    const QString root = m_dir.filePath(QStringLiteral("roundtrip"));
    QVERIFY(QDir().mkpath(root));
    // Larger than two 512 KiB calls, not a multiple of them.
    const QByteArray big = randomBytes(3 * 512 * 1024 + 777);
    const QString host = m_dir.filePath(QStringLiteral("host/big.bin"));
    writeFile(host, big);
    writeFile(m_dir.filePath(QStringLiteral("host/empty")), {});
    auto tab = newTab(root);
    QVERIFY(tab);

    QSignalSpy done(tab.get(), &FilesTab::transfersDone);
    QList<int> values;
    connect(tab->progressBar(), &QProgressBar::valueChanged, this,
            [&values](int value) { values.append(value); });
    tab->uploadPaths({host, m_dir.filePath(QStringLiteral("host/empty"))});
    QVERIFY(tab->isBusy());
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().isEmpty(), qPrintable(tab->errorText()));
    QCOMPARE(readFile(root + QStringLiteral("/big.bin")), big);
    QVERIFY(QFileInfo(root + QStringLiteral("/empty")).isFile());
    QCOMPARE(QFileInfo(root + QStringLiteral("/empty")).size(), qint64(0));
    // The bar moved in steps (per mille) up to the end.
    QVERIFY(values.size() >= 3);
    QCOMPARE(values.constLast(), 1000);
    QTRY_VERIFY_WITH_TIMEOUT(tab->model()->rowOf(QStringLiteral("big.bin")) >= 0, kWaitMs);

    const QString back = m_dir.filePath(QStringLiteral("back/big.copy"));
    QVERIFY(QDir().mkpath(QFileInfo(back).path()));
    tab->downloadFile(QStringLiteral("big.bin"), back);
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().isEmpty(), qPrintable(tab->errorText()));
    QCOMPARE(readFile(back), big);
    QVERIFY(tab->statusText().contains(back));
}

void TestFilesTab::foldersGoBothWays()
{
    const QString root = m_dir.filePath(QStringLiteral("folders"));
    QVERIFY(QDir().mkpath(root));
    const QString project = m_dir.filePath(QStringLiteral("hostproject/app"));
    writeFile(project + QStringLiteral("/README"), "readme\n");
    writeFile(project + QStringLiteral("/src/lib.c"), "void f(void) {}\n");
    auto tab = newTab(root);
    QVERIFY(tab);
    QSignalSpy done(tab.get(), &FilesTab::transfersDone);
    tab->uploadPaths({project});
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().isEmpty(), qPrintable(tab->errorText()));
    QCOMPARE(readFile(root + QStringLiteral("/app/src/lib.c")), QByteArray("void f(void) {}\n"));
    QTRY_VERIFY_WITH_TIMEOUT(tab->model()->rowOf(QStringLiteral("app")) >= 0, kWaitMs);

    const QString into = m_dir.filePath(QStringLiteral("hostback"));
    QVERIFY(QDir().mkpath(into));
    tab->downloadTo({QStringLiteral("app")}, into);
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().isEmpty(), qPrintable(tab->errorText()));
    QCOMPARE(readFile(into + QStringLiteral("/app/README")), QByteArray("readme\n"));
    QCOMPARE(readFile(into + QStringLiteral("/app/src/lib.c")), QByteArray("void f(void) {}\n"));
}

void TestFilesTab::newFolderAndDelete()
{
    const QString root = m_dir.filePath(QStringLiteral("edit"));
    writeFile(root + QStringLiteral("/full/deep/file.txt"), "x");
    writeFile(root + QStringLiteral("/single.txt"), "y");
    auto tab = newTab(root);
    QVERIFY(tab);
    QSignalSpy operations(tab.get(), &FilesTab::operationDone);
    tab->makeFolder(QStringLiteral("made"));
    QVERIFY(operations.wait(kWaitMs));
    QVERIFY(QFileInfo(root + QStringLiteral("/made")).isDir());
    QTRY_VERIFY_WITH_TIMEOUT(tab->model()->rowOf(QStringLiteral("made")) >= 0, kWaitMs);

    // A folder with content goes with it; a file too.
    tab->removeEntries({QStringLiteral("full"), QStringLiteral("single.txt")});
    QVERIFY(operations.wait(kWaitMs));
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/full")));
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/single.txt")));
    QTRY_COMPARE_WITH_TIMEOUT(tab->model()->rowCount(), 1, kWaitMs);
    QVERIFY(tab->errorText().isEmpty());

    // A name with a slash is refused here, before the guest.
    tab->makeFolder(QStringLiteral("a/b"));
    QVERIFY(!tab->errorText().isEmpty());
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/a")));
}

void TestFilesTab::errorsAreShownInWords()
{
    const QString root = m_dir.filePath(QStringLiteral("errors"));
    writeFile(root + QStringLiteral("/dir/inside"), "z");
    auto tab = newTab(root);
    QVERIFY(tab);
    QSignalSpy errors(tab.get(), &FilesTab::errorShown);

    // A folder that is not there: not_found, in words, and the view stays where it was.
    tab->setPath(root + QStringLiteral("/missing"));
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY2(tab->errorText().contains(ErrorText::fileSummary({ErrorKind::NotFound, {}})),
             qPrintable(tab->errorText()));
    QCOMPARE(tab->path(), root);

    // Downloading a folder as a file: is_a_directory; no host file is left.
    const QString target = m_dir.filePath(QStringLiteral("errors-host/dir"));
    QVERIFY(QDir().mkpath(QFileInfo(target).path()));
    QSignalSpy done(tab.get(), &FilesTab::transfersDone);
    tab->downloadFile(QStringLiteral("dir"), target);
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().contains(ErrorText::fileSummary({ErrorKind::IsADirectory, {}})),
             qPrintable(tab->errorText()));
    QVERIFY(!QFileInfo::exists(target));

    // Uploading into a file as if it were a folder: not_a_directory from the guest.
    tab->setPath(root + QStringLiteral("/dir"));
    QTRY_COMPARE_WITH_TIMEOUT(tab->path(), root + QStringLiteral("/dir"), kWaitMs);
    QVERIFY(QFile::remove(root + QStringLiteral("/dir/inside")));
    writeFile(root + QStringLiteral("/dir-file"), "f");
    QVERIFY(QDir(root).rmdir(QStringLiteral("dir")));
    QVERIFY(QFile::rename(root + QStringLiteral("/dir-file"), root + QStringLiteral("/dir")));
    const QString host = m_dir.filePath(QStringLiteral("errors-host/up.txt"));
    writeFile(host, "up");
    tab->uploadPaths({host});
    QVERIFY(done.wait(kWaitMs));
    QVERIFY2(tab->errorText().contains(ErrorText::fileSummary({ErrorKind::NotADirectory, {}})),
             qPrintable(tab->errorText()));

    // A sandbox whose agent is not connected: agent_unavailable, in words.
    auto agent = std::exchange(m_agentClient, {});
    FilesTab gone(m_client.get(), kSandbox);
    QSignalSpy goneErrors(&gone, &FilesTab::errorShown);
    QVERIFY(goneErrors.wait(kWaitMs));
    m_agentClient = std::move(agent);
    QVERIFY2(gone.errorText().contains(ErrorText::fileSummary({ErrorKind::AgentUnavailable, {}})),
             qPrintable(gone.errorText()));
}

void TestFilesTab::runCommandShowsOutputAndExit()
{
    auto tab = newTab(m_dir.path());
    QVERIFY(tab);
    CommandPanel *panel = tab->commandPanel();
    QSignalSpy finished(panel, &CommandPanel::commandFinished);
    panel->commandEdit()->setText(QStringLiteral("echo to-out; echo to-err >&2; pwd; exit 3"));
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(!panel->runButton()->isEnabled());
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(panel->statusText(),
             CommandPanel::describe(finished.at(0).at(0).value<CommandExit>()));
    QCOMPARE(finished.at(0).at(0).value<CommandExit>().exitCode, 3);
    QVERIFY(panel->statusText().contains(QStringLiteral("3")));
    QVERIFY(panel->runButton()->isEnabled());
    QVERIFY(!panel->stopButton()->isEnabled());
    const QString text = panel->output()->toPlainText();
    QVERIFY2(text.contains(QStringLiteral("to-out")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("to-err")));
    // The command runs in the folder shown.
    QVERIFY(text.contains(m_dir.path()));
    // stderr is told apart by its colour; stdout is not in it.
    QTextDocument *document = panel->output()->document();
    auto colourOf = [&](const QString &needle) {
        // After the first line, which echoes the command line.
        QTextCursor cursor = document->find(needle, document->begin().next().position());
        cursor.setPosition(cursor.selectionStart() + 1);
        return cursor.charFormat().foreground().color();
    };
    QCOMPARE(colourOf(QStringLiteral("to-err")), panel->output()->stderrColor());
    QVERIFY(colourOf(QStringLiteral("to-out")) != panel->output()->stderrColor());
}

void TestFilesTab::stopEndsTheCommand()
{
    auto tab = newTab(m_dir.path());
    QVERIFY(tab);
    CommandPanel *panel = tab->commandPanel();
    QSignalSpy started(panel->runner(), &CommandRunner::started);
    QSignalSpy finished(panel, &CommandPanel::commandFinished);
    QVERIFY(panel->run(QStringLiteral("echo sleeping; exec sleep 60")));
    QVERIFY(started.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(panel->output()->toPlainText().contains(QStringLiteral("sleeping")),
                             kWaitMs);
    QVERIFY(panel->stopButton()->isEnabled());
    QTest::mouseClick(panel->stopButton(), Qt::LeftButton);
    QVERIFY(finished.wait(kWaitMs));
    const CommandExit exit = finished.at(0).at(0).value<CommandExit>();
    QCOMPARE(exit.kind, CommandExit::Kind::Signalled);
    QCOMPARE(exit.signal, 15);
    QVERIFY2(panel->statusText().contains(QStringLiteral("TERM")), qPrintable(panel->statusText()));

    // A command that does not start: its error in words, the buttons back.
    tab->commandPanel()->setWorkingFolder(m_dir.filePath(QStringLiteral("no-such-folder")));
    QSignalSpy failed(panel->runner(), &CommandRunner::failed);
    QVERIFY(panel->run(QStringLiteral("true")));
    QVERIFY(failed.wait(kWaitMs));
    QVERIFY(panel->runButton()->isEnabled());
    QVERIFY(panel->statusText().startsWith(tr("Could not run the command")));
}

void TestFilesTab::outputStaysBoundedAndPlain()
{
    auto tab = newTab(m_dir.path());
    QVERIFY(tab);
    CommandPanel *panel = tab->commandPanel();
    QSignalSpy finished(panel, &CommandPanel::commandFinished);
    // Many lines: the oldest go.
    QVERIFY(panel->run(QStringLiteral("seq 1 30000")));
    QVERIFY(finished.wait(kWaitMs));
    QTextDocument *document = panel->output()->document();
    QVERIFY(document->blockCount() <= CommandOutputView::kMaxLines);
    QVERIFY(panel->output()->toPlainText().contains(QStringLiteral("\n30000\n")));
    QVERIFY(!panel->output()->toPlainText().contains(QStringLiteral("\n20000\n")));

    // One endless line: broken into bounded blocks.
    QVERIFY(panel->run(QStringLiteral("head -c 300000 /dev/zero | tr '\\0' x")));
    QVERIFY(finished.wait(kWaitMs));
    int longest = 0;
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
        longest = std::max(longest, int(block.length()));
    QVERIFY2(longest <= CommandOutputView::kMaxLineChars + 1, qPrintable(QString::number(longest)));

    // Markup and terminal escapes stay text.
    QVERIFY(panel->run(QStringLiteral("printf '\\033[31m<b>bold</b>&amp;\\r\\n'")));
    QVERIFY(finished.wait(kWaitMs));
    const QString text = panel->output()->toPlainText();
    QVERIFY2(text.contains(QStringLiteral("\uFFFD[31m<b>bold</b>&amp;\uFFFD")), qPrintable(text));
}

void TestFilesTab::bringProjectAndReviewTakeASubset()
{
    const QString project = m_dir.filePath(QStringLiteral("review/host"));
    writeFile(project + QStringLiteral("/keep.txt"), "same\n");
    writeFile(project + QStringLiteral("/edit.txt"), "one\ntwo\nthree\n");
    writeFile(project + QStringLiteral("/gone.txt"), "bye\n");
    writeFile(project + QStringLiteral("/skip.txt"), "old\n");
    const QString guest = m_dir.filePath(QStringLiteral("review/guest"));
    auto tab = newTab(m_dir.path());
    QVERIFY(tab);

    BringProjectDialog *bring = tab->showBringProject();
    QCOMPARE(bring->guestFolderEdit()->text(), QStringLiteral("/workspace"));
    bring->hostFolderEdit()->setText(project);
    bring->guestFolderEdit()->setText(guest);
    QSignalSpy pushed(bring, &BringProjectDialog::pushed);
    bring->push();
    QVERIFY(pushed.wait(kWaitMs));
    QCOMPARE(pushed.at(0).at(0).value<workspace::PushResult>().refusedCount, quint64(0));
    QVERIFY2(bring->statusText().contains(guest), qPrintable(bring->statusText()));
    QCOMPARE(readFile(guest + QStringLiteral("/edit.txt")), QByteArray("one\ntwo\nthree\n"));
    bring->close();

    // The agent's work: an edit, a new file, a deletion, one change not to take, and a link
    // leaving the folder that the host refuses.
    writeFile(guest + QStringLiteral("/edit.txt"), "one\nTWO\nthree\n");
    writeFile(guest + QStringLiteral("/added.txt"), "new\n");
    writeFile(guest + QStringLiteral("/skip.txt"), "changed but not wanted\n");
    QVERIFY(QFile::remove(guest + QStringLiteral("/gone.txt")));
    QCOMPARE(
        ::symlink("/etc/passwd", QFile::encodeName(guest + QStringLiteral("/evil")).constData()),
        0);

    ReviewDialog *review = tab->showReview(); // the last pushed pair of folders
    QCOMPARE(review->hostFolderEdit()->text(), project);
    QCOMPARE(review->guestFolderEdit()->text(), guest);
    QSignalSpy ready(review, &ReviewDialog::ready);
    QVERIFY(ready.count() == 1 || ready.wait(kWaitMs));
    WorkspaceChangeModel *model = review->model();
    QStringList listed;
    for (int row = 0; row < model->rowCount(); ++row)
        listed << model->changeAt(row)->path + u' '
                + workspace::changeStatusName(model->changeAt(row)->status);
    QCOMPARE(listed,
             (QStringList {QStringLiteral("added.txt added"), QStringLiteral("edit.txt modified"),
                           QStringLiteral("evil refused"), QStringLiteral("gone.txt deleted"),
                           QStringLiteral("skip.txt modified")}));
    // The refused one: its reason shown, neither checkable nor selectable.
    const int evil = model->rowOf(QStringLiteral("evil"));
    const QModelIndex evilIndex = model->index(evil, WorkspaceChangeModel::PathColumn);
    QVERIFY(!(model->flags(evilIndex) & Qt::ItemIsSelectable));
    QVERIFY(!(model->flags(evilIndex) & Qt::ItemIsUserCheckable));
    // In words, with the stable name.
    const QString reason =
        model->index(evil, WorkspaceChangeModel::DetailsColumn).data().toString();
    QVERIFY2(reason.contains(QStringLiteral("outside the folder"))
                 && reason.contains(QStringLiteral("symlink_escapes")),
             qPrintable(reason));
    QVERIFY(!model->accepted().contains(QStringLiteral("evil")));

    // The patch of the selected file.
    review->selectChange(QStringLiteral("edit.txt"));
    const QString patch = review->patchView()->toPlainText();
    QVERIFY2(patch.contains(QStringLiteral("-two")) && patch.contains(QStringLiteral("+TWO")),
             qPrintable(patch));

    // None, then all, then all but skip.txt.
    QTest::mouseClick(review->noneButton(), Qt::LeftButton);
    QVERIFY(model->accepted().isEmpty());
    QVERIFY(!review->takeButton()->isEnabled());
    QTest::mouseClick(review->allButton(), Qt::LeftButton);
    QCOMPARE(model->accepted().size(), qsizetype(4));
    model->setAccepted(model->rowOf(QStringLiteral("skip.txt")), false);
    QSignalSpy applied(review, &ReviewDialog::applied);
    QTest::mouseClick(review->takeButton(), Qt::LeftButton);
    QCOMPARE(applied.count(), 1);
    const auto result = applied.at(0).at(0).value<workspace::ApplyResult>();
    QCOMPARE(result.written, quint64(2));
    QCOMPARE(result.removed, quint64(1));
    QVERIFY(review->statusText().contains(project));
    QCOMPARE(readFile(project + QStringLiteral("/edit.txt")), QByteArray("one\nTWO\nthree\n"));
    QCOMPARE(readFile(project + QStringLiteral("/added.txt")), QByteArray("new\n"));
    QCOMPARE(readFile(project + QStringLiteral("/skip.txt")), QByteArray("old\n"));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/gone.txt")));
    QVERIFY(!QFileInfo(project + QStringLiteral("/evil")).isSymLink());
    QCOMPARE(readFile(project + QStringLiteral("/keep.txt")), QByteArray("same\n"));
    review->close();
}

void TestFilesTab::mainWindowOpensFilesTab()
{
    MainWindow window(m_client.get());
    FilesTab *tab = window.openFiles(kSandbox);
    QVERIFY(tab);
    QCOMPARE(window.consoleTabs()->currentWidget(), static_cast<QWidget *>(tab));
    QCOMPARE(window.filesTab(kSandbox), tab);
    // Opening again brings the same tab forward.
    QCOMPARE(window.openFiles(kSandbox), tab);
    QCOMPARE(window.consoleTabs()->count(), 1);
}

QTEST_MAIN(TestFilesTab)
#include "tst_filestab.moc"
