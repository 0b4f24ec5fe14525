// The client's side of workspaces (core/workspace) on real temporary folders, no helper: a
// folder's tree (kinds, modes, link targets, hashes), the diff a person reviews (text patches
// from libgit2, binaries listed, mode and link changes, refusals named), the writer that takes
// a guest's archive under a host folder (nothing outside it, each refusal named, a filter for
// what the person accepted) and removeBeneath, which never follows a symlink out.

#include "core/agentwire/archivewalker.h"
#include "core/workspace/workspacediff.h"
#include "core/workspace/workspacetree.h"
#include "core/workspace/workspacewriter.h"
#include "testfolders.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace airlock;
using namespace airlock::workspace;
using agentwire::ArchiveKind;

using airlock::test::entriesBelow;
using airlock::test::writeFile;

namespace {

void symlinkAt(const QString &target, const QString &path)
{
    QCOMPARE(::symlink(QFile::encodeName(target).constData(), QFile::encodeName(path).constData()),
             0);
}

/// The archive stream of `folder`, as a guest's agent would send it.
QByteArray streamOf(const QString &folder)
{
    auto walker = agentwire::ArchiveWalker::open(folder.toStdString());
    if (!walker)
        return {};
    agentwire::Bytes bytes;
    while (true) {
        auto more = (*walker)->produce(bytes, 64 * 1024);
        if (!more || !*more)
            break;
    }
    return QByteArray(reinterpret_cast<const char *>(bytes.data()), qsizetype(bytes.size()));
}

const WorkspaceChange *findChange(const QList<WorkspaceChange> &changes, const QString &path)
{
    for (const WorkspaceChange &change : changes) {
        if (change.path == path)
            return &change;
    }
    return nullptr;
}

} // namespace

class TestWorkspace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void treeRecordsWhatAFolderHolds();
    void diffNamesEveryKindOfChange();
    void diffOfIdenticalFoldersIsEmpty();
    void writerTakesNothingOutsideItsFolder();
    void writerFilterTakesOnlyWhatWasAccepted();
    void removeBeneathNeverFollowsASymlink();
};

void TestWorkspace::treeRecordsWhatAFolderHolds()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("src/main.c")), "int main() {}\n");
    writeFile(dir.filePath(QStringLiteral("run.sh")), "#!/bin/sh\n", 0755);
    symlinkAt(QStringLiteral("src/main.c"), dir.filePath(QStringLiteral("link")));
    WorkspaceTree tree;
    QCOMPARE(WorkspaceTree::fromFolder(dir.path(), tree), std::nullopt);
    const auto &nodes = tree.nodes();
    QVERIFY(tree.ended());
    QCOMPARE(nodes.value(QStringLiteral("src")).kind, ArchiveKind::Directory);
    QCOMPARE(nodes.value(QStringLiteral("src/main.c")).kind, ArchiveKind::File);
    QCOMPARE(nodes.value(QStringLiteral("src/main.c")).content, QByteArray("int main() {}\n"));
    QCOMPARE(nodes.value(QStringLiteral("src/main.c")).sha256,
             QCryptographicHash::hash("int main() {}\n", QCryptographicHash::Sha256));
    QCOMPARE(nodes.value(QStringLiteral("run.sh")).mode, 0755u);
    QCOMPARE(nodes.value(QStringLiteral("link")).kind, ArchiveKind::Symlink);
    QCOMPARE(nodes.value(QStringLiteral("link")).link, QByteArray("src/main.c"));
    QVERIFY(nodes.value(QStringLiteral("link")).refusal.isEmpty());

    QTemporaryDir missing;
    WorkspaceTree none;
    QVERIFY(WorkspaceTree::fromFolder(missing.filePath(QStringLiteral("nope")), none).has_value());
}

void TestWorkspace::diffNamesEveryKindOfChange()
{
    QTemporaryDir host;
    QTemporaryDir guest;
    for (const QTemporaryDir *dir : {&host, &guest}) {
        writeFile(dir->filePath(QStringLiteral("README")), "same\n");
        writeFile(dir->filePath(QStringLiteral("run.sh")), "#!/bin/sh\n");
    }
    writeFile(host.filePath(QStringLiteral("src/app.py")), "print('hello')\nkeep\n");
    writeFile(guest.filePath(QStringLiteral("src/app.py")), "print('hello world')\nkeep\n");
    writeFile(host.filePath(QStringLiteral("old.txt")), "gone\n");
    writeFile(guest.filePath(QStringLiteral("new.txt")), "fresh\n");
    writeFile(guest.filePath(QStringLiteral("logo.png")), QByteArray("\x89PNG\0\0\x01", 7));
    QCOMPARE(::chmod(QFile::encodeName(guest.filePath(QStringLiteral("run.sh"))).constData(), 0755),
             0);
    symlinkAt(QStringLiteral("README"), host.filePath(QStringLiteral("doc")));
    symlinkAt(QStringLiteral("run.sh"), guest.filePath(QStringLiteral("doc")));
    // What a hostile guest plants: each is refused, never offered as a change to take.
    symlinkAt(QStringLiteral("/etc/passwd"), guest.filePath(QStringLiteral("passwd")));
    symlinkAt(QStringLiteral("../../outside"), guest.filePath(QStringLiteral("src/up")));
    QCOMPARE(::mkfifo(QFile::encodeName(guest.filePath(QStringLiteral("pipe"))).constData(), 0600),
             0);
    writeFile(guest.filePath(QStringLiteral("suid")), "x", 04755);
    QCOMPARE(::link(QFile::encodeName(guest.filePath(QStringLiteral("README"))).constData(),
                    QFile::encodeName(guest.filePath(QStringLiteral("hard"))).constData()),
             0);

    WorkspaceTree before;
    WorkspaceTree after;
    QCOMPARE(WorkspaceTree::fromFolder(host.path(), before), std::nullopt);
    QCOMPARE(WorkspaceTree::fromFolder(guest.path(), after), std::nullopt);
    const QList<WorkspaceChange> changes = diffTrees(before, after);

    using Status = WorkspaceChange::Status;
    const auto expect = [&changes](const QString &path, Status status) -> const WorkspaceChange * {
        const WorkspaceChange *change = findChange(changes, path);
        if (!change || change->status != status)
            qWarning() << "change of" << path << "is not" << changeStatusName(status);
        return change && change->status == status ? change : nullptr;
    };
    const WorkspaceChange *app = expect(QStringLiteral("src/app.py"), Status::Modified);
    QVERIFY(app);
    QVERIFY(!app->binary);
    QVERIFY2(app->patch.contains(QStringLiteral("-print('hello')\n+print('hello world')\n")),
             qPrintable(app->patch));
    QVERIFY(app->patch.contains(QStringLiteral("--- a/src/app.py")));
    const WorkspaceChange *added = expect(QStringLiteral("new.txt"), Status::Added);
    QVERIFY(added);
    QVERIFY(added->patch.contains(QStringLiteral("+fresh")));
    const WorkspaceChange *deleted = expect(QStringLiteral("old.txt"), Status::Deleted);
    QVERIFY(deleted);
    QVERIFY(deleted->patch.contains(QStringLiteral("-gone")));
    const WorkspaceChange *logo = expect(QStringLiteral("logo.png"), Status::Added);
    QVERIFY(logo);
    QVERIFY(logo->binary);
    QVERIFY(logo->patch.isEmpty());
    const WorkspaceChange *script = expect(QStringLiteral("run.sh"), Status::Modified);
    QVERIFY(script);
    QCOMPARE(script->summary, QStringLiteral("mode 0644 -> 0755"));
    QVERIFY(script->patch.isEmpty());
    const WorkspaceChange *doc = expect(QStringLiteral("doc"), Status::Modified);
    QVERIFY(doc);
    QCOMPARE(doc->summary, QStringLiteral("-> run.sh"));
    const QList<std::pair<QString, QString>> refused {
        {QStringLiteral("passwd"), QStringLiteral("symlink_escapes")},
        {QStringLiteral("src/up"), QStringLiteral("symlink_escapes")},
        {QStringLiteral("pipe"), QStringLiteral("fifo")},
        {QStringLiteral("suid"), QStringLiteral("setuid")},
        {QStringLiteral("hard"), QStringLiteral("hardlink")},
    };
    for (const auto &[path, reason] : refused) {
        const WorkspaceChange *change = expect(path, Status::Refused);
        QVERIFY2(change, qPrintable(path));
        QCOMPARE(change->summary, reason);
    }
    QCOMPARE(findChange(changes, QStringLiteral("README")), nullptr);
    QCOMPARE(changes.size(), 6 + refused.size());
}

void TestWorkspace::diffOfIdenticalFoldersIsEmpty()
{
    QTemporaryDir one;
    QTemporaryDir two;
    for (const QTemporaryDir *dir : {&one, &two}) {
        writeFile(dir->filePath(QStringLiteral("a/b/c.txt")), "same\n");
        symlinkAt(QStringLiteral("a/b/c.txt"), dir->filePath(QStringLiteral("l")));
    }
    WorkspaceTree before;
    WorkspaceTree after;
    QCOMPARE(WorkspaceTree::fromFolder(one.path(), before), std::nullopt);
    QCOMPARE(WorkspaceTree::fromFolder(two.path(), after), std::nullopt);
    QCOMPARE(diffTrees(before, after).size(), 0);
}

void TestWorkspace::writerTakesNothingOutsideItsFolder()
{
    QTemporaryDir guest;
    writeFile(guest.filePath(QStringLiteral("ok/file.txt")), "fine\n");
    symlinkAt(QStringLiteral("file.txt"), guest.filePath(QStringLiteral("ok/inside")));
    symlinkAt(QStringLiteral("/etc"), guest.filePath(QStringLiteral("etc")));
    symlinkAt(QStringLiteral("../.."), guest.filePath(QStringLiteral("ok/up")));
    QCOMPARE(::mkfifo(QFile::encodeName(guest.filePath(QStringLiteral("pipe"))).constData(), 0600),
             0);
    writeFile(guest.filePath(QStringLiteral("sgid")), "x", 02755);
    QCOMPARE(::link(QFile::encodeName(guest.filePath(QStringLiteral("ok/file.txt"))).constData(),
                    QFile::encodeName(guest.filePath(QStringLiteral("zalias"))).constData()),
             0);

    QTemporaryDir parent;
    writeFile(parent.filePath(QStringLiteral("sentinel")), "mine\n");
    const QString target = parent.filePath(QStringLiteral("project"));
    auto writer = WorkspaceWriter::open(target);
    QVERIFY(writer);
    QVERIFY((*writer)->feed(streamOf(guest.path())));
    QVERIFY((*writer)->finished());
    QCOMPARE((*writer)->error(), std::nullopt);

    QMap<QString, QString> refused;
    for (const auto &refusal : (*writer)->refusals())
        refused.insert(QString::fromStdString(refusal.path),
                       QString::fromStdString(refusal.reason));
    QCOMPARE(refused.value(QStringLiteral("etc")), QStringLiteral("symlink_escapes"));
    QCOMPARE(refused.value(QStringLiteral("ok/up")), QStringLiteral("symlink_escapes"));
    QCOMPARE(refused.value(QStringLiteral("pipe")), QStringLiteral("fifo"));
    QCOMPARE(refused.value(QStringLiteral("sgid")), QStringLiteral("setgid"));
    QCOMPARE(refused.value(QStringLiteral("zalias")), QStringLiteral("hardlink"));
    QCOMPARE(refused.size(), 5);
    QCOMPARE(entriesBelow(target),
             (QStringList {QStringLiteral("ok"), QStringLiteral("ok/file.txt"),
                           QStringLiteral("ok/inside")}));
    QCOMPARE(entriesBelow(parent.path()),
             (QStringList {QStringLiteral("project"), QStringLiteral("project/ok"),
                           QStringLiteral("project/ok/file.txt"),
                           QStringLiteral("project/ok/inside"), QStringLiteral("sentinel")}));

    // Paths no walker writes, which a hostile agent may: absolute and "..".
    agentwire::Bytes crafted;
    agentwire::appendArchiveStart(crafted);
    for (const char *path : {"/tmp/airlock-abs", "../escape", "a/../../b"}) {
        agentwire::ArchiveEntry entry;
        entry.kind = ArchiveKind::File;
        entry.mode = S_IFREG | 0644;
        entry.path = path;
        entry.size = 1;
        QVERIFY(agentwire::appendArchiveRecord(crafted, entry));
        crafted.push_back('x');
    }
    agentwire::appendArchiveEnd(crafted);
    auto second = WorkspaceWriter::open(target);
    QVERIFY(second);
    QVERIFY((*second)->feed(
        QByteArrayView(reinterpret_cast<const char *>(crafted.data()), qsizetype(crafted.size()))));
    QStringList reasons;
    for (const auto &refusal : (*second)->refusals())
        reasons << QString::fromStdString(refusal.reason);
    QCOMPARE(reasons,
             (QStringList {QStringLiteral("absolute_path"), QStringLiteral("parent_path"),
                           QStringLiteral("parent_path")}));
    QVERIFY(!QFileInfo::exists(QStringLiteral("/tmp/airlock-abs")));
    QVERIFY(!QFileInfo::exists(parent.filePath(QStringLiteral("escape"))));
}

void TestWorkspace::writerFilterTakesOnlyWhatWasAccepted()
{
    QTemporaryDir guest;
    writeFile(guest.filePath(QStringLiteral("take/me.txt")), "yes\n");
    writeFile(guest.filePath(QStringLiteral("leave.txt")), "no\n");
    QTemporaryDir target;
    auto writer = WorkspaceWriter::open(target.path(), [](const agentwire::ArchiveEntry &entry) {
        return entry.path == "take/me.txt";
    });
    QVERIFY(writer);
    QVERIFY((*writer)->feed(streamOf(guest.path())));
    QVERIFY((*writer)->finished());
    QCOMPARE(entriesBelow(target.path()),
             (QStringList {QStringLiteral("take"), QStringLiteral("take/me.txt")}));
    QCOMPARE((*writer)->entriesWritten(), quint64(1));
}

void TestWorkspace::removeBeneathNeverFollowsASymlink()
{
    QTemporaryDir outside;
    writeFile(outside.filePath(QStringLiteral("victim")), "keep\n");
    QTemporaryDir root;
    symlinkAt(outside.path(), root.filePath(QStringLiteral("link")));
    writeFile(root.filePath(QStringLiteral("dir/file")), "x\n");
    const int fd = ::open(QFile::encodeName(root.path()).constData(), O_RDONLY | O_DIRECTORY);
    QVERIFY(fd >= 0);
    QVERIFY(removeBeneath(fd, QStringLiteral("link/victim")).has_value());
    QVERIFY(QFileInfo::exists(outside.filePath(QStringLiteral("victim"))));
    QVERIFY(removeBeneath(fd,
                          QStringLiteral("../") + QFileInfo(outside.path()).fileName()
                              + QStringLiteral("/victim"))
                .has_value());
    QVERIFY(QFileInfo::exists(outside.filePath(QStringLiteral("victim"))));
    QVERIFY(removeBeneath(fd, QStringLiteral("dir")).has_value()); // not empty
    QCOMPARE(removeBeneath(fd, QStringLiteral("dir/file")), std::nullopt);
    QCOMPARE(removeBeneath(fd, QStringLiteral("dir")), std::nullopt);
    QCOMPARE(removeBeneath(fd, QStringLiteral("link")), std::nullopt); // the link, not its target
    QVERIFY(QFileInfo::exists(outside.filePath(QStringLiteral("victim"))));
    QCOMPARE(entriesBelow(root.path()), QStringList());
    ::close(fd);
}

QTEST_GUILESS_MAIN(TestWorkspace)
#include "tst_workspace.moc"
