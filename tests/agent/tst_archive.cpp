// The archive stream (core/agentwire/archive*.h) on real temporary folders: the walker types
// every entry (symlinks with their targets, hard links, FIFOs, setuid bits); the decoder is
// strict; the host's policy refuses and names what may leave or alias the target or carry
// privilege; the extractor writes nothing outside its folder even when the folder already
// holds symlinks pointing out.

#include "core/agentwire/archiveextractor.h"
#include "core/agentwire/archivewalker.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace airlock::agentwire;

namespace {

/// Records what a decoder hands it.
class RecordingSink : public ArchiveSink
{
public:
    bool entry(const ArchiveEntry &entry) override
    {
        entries.push_back(entry);
        contents.emplace_back();
        return true;
    }
    bool content(ByteView bytes) override
    {
        contents.back().append(reinterpret_cast<const char *>(bytes.data()),
                               qsizetype(bytes.size()));
        return true;
    }
    bool entryDone() override { return true; }
    void end() override { ended = true; }

    const ArchiveEntry *find(const std::string &path) const
    {
        for (const ArchiveEntry &entry : entries) {
            if (entry.path == path)
                return &entry;
        }
        return nullptr;
    }

    std::vector<ArchiveEntry> entries;
    std::vector<QByteArray> contents;
    bool ended = false;
};

void writeFile(const QString &path, const QByteArray &content, int mode = 0644)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
    file.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode_t(mode)), 0);
}

/// The tree a hostile guest plants: a symlink out (absolute and by ..), one inside, a FIFO, a
/// setuid file, a hard link, a device-free rest.
void plantTree(const QString &root)
{
    QVERIFY(QDir().mkpath(root + QStringLiteral("/src/sub")));
    writeFile(root + QStringLiteral("/src/main.c"), "int main() { return 0; }\n");
    writeFile(root + QStringLiteral("/src/sub/data.bin"), QByteArray(100000, 'x'));
    writeFile(root + QStringLiteral("/src/empty"), {});
    writeFile(root + QStringLiteral("/src/setuid"), "#!/bin/sh\n", 04755);
    QCOMPARE(::symlink("/etc/passwd",
                       QFile::encodeName(root + QStringLiteral("/src/escape")).constData()),
             0);
    QCOMPARE(::symlink("../../../outside",
                       QFile::encodeName(root + QStringLiteral("/src/sub/up")).constData()),
             0);
    QCOMPARE(::symlink("sub/data.bin",
                       QFile::encodeName(root + QStringLiteral("/src/inside")).constData()),
             0);
    QCOMPARE(::mkfifo(QFile::encodeName(root + QStringLiteral("/src/fifo")).constData(), 0644), 0);
    QCOMPARE(::link(QFile::encodeName(root + QStringLiteral("/src/main.c")).constData(),
                    QFile::encodeName(root + QStringLiteral("/src/sub/alias.c")).constData()),
             0);
}

Bytes archiveOf(const QString &folder)
{
    auto walker = ArchiveWalker::open(QFile::encodeName(folder).toStdString());
    if (!walker)
        return {};
    Bytes out;
    for (;;) {
        // Small pieces: the walker must resume anywhere.
        auto more = (*walker)->produce(out, 777);
        if (!more || !*more)
            break;
    }
    return out;
}

RecordingSink decode(const Bytes &archive, std::optional<std::string> *error = nullptr)
{
    RecordingSink sink;
    ArchiveDecoder decoder(sink);
    ByteView rest(archive);
    while (!rest.empty()) {
        const std::size_t n = std::min<std::size_t>(rest.size(), 1000);
        if (!decoder.feed(rest.first(n)))
            break;
        rest = rest.subspan(n);
    }
    if (error)
        *error = decoder.error();
    return sink;
}

} // namespace

class TestArchive : public QObject
{
    Q_OBJECT
private slots:
    void walkerTypesEveryEntry();
    void hostPolicyRefusesAndNames();
    void guestPolicyKeepsLinks();
    void extractorNeverFollowsExistingSymlinks();
    void refusalNames_data();
    void refusalNames();
    void symlinkRule_data();
    void symlinkRule();
    void decoderIsStrict_data();
    void decoderIsStrict();

private:
    QTemporaryDir m_dir;
};

void TestArchive::walkerTypesEveryEntry()
{
    QVERIFY(m_dir.isValid());
    const QString root = m_dir.path() + QStringLiteral("/walk");
    plantTree(root);
    const Bytes archive = archiveOf(root + QStringLiteral("/src"));
    std::optional<std::string> error;
    const RecordingSink sink = decode(archive, &error);
    QVERIFY2(!error, error ? error->c_str() : "");
    QVERIFY(sink.ended);
    QCOMPARE(sink.entries.size(), std::size_t(10));
    // Sorted, a folder before its content.
    QCOMPARE(sink.entries.front().path, std::string("empty"));
    const ArchiveEntry *escape = sink.find("escape");
    QVERIFY(escape);
    QCOMPARE(escape->kind, ArchiveKind::Symlink);
    QCOMPARE(escape->link, std::string("/etc/passwd"));
    QCOMPARE(sink.find("sub/up")->link, std::string("../../../outside"));
    QCOMPARE(sink.find("fifo")->kind, ArchiveKind::Other);
    QVERIFY(S_ISFIFO(sink.find("fifo")->mode));
    QCOMPARE(sink.find("setuid")->mode & 07777, 04755u);
    QCOMPARE(sink.find("main.c")->kind, ArchiveKind::File);
    QCOMPARE(sink.find("sub/alias.c")->kind, ArchiveKind::Hardlink);
    QCOMPARE(sink.find("sub/alias.c")->link, std::string("main.c"));
    QCOMPARE(sink.find("sub")->kind, ArchiveKind::Directory);
    for (std::size_t i = 0; i < sink.entries.size(); ++i) {
        if (sink.entries[i].path == "sub/data.bin")
            QCOMPARE(sink.contents[i], QByteArray(100000, 'x'));
    }
}

void TestArchive::hostPolicyRefusesAndNames()
{
    const QString root = m_dir.path() + QStringLiteral("/host");
    plantTree(root);
    QVERIFY(QDir().mkpath(root + QStringLiteral("/target")));
    const Bytes archive = archiveOf(root + QStringLiteral("/src"));
    const int target = ::open(QFile::encodeName(root + QStringLiteral("/target")).constData(),
                              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(target >= 0);
    ArchiveExtractor extractor(target, ArchivePolicy {});
    ArchiveDecoder decoder(extractor);
    QVERIFY(decoder.feed(archive));
    QVERIFY(decoder.finished());
    QVERIFY(!extractor.error());
    ::close(target);

    std::map<std::string, std::string> refused;
    for (const ArchiveRefusal &refusal : extractor.refusals())
        refused[refusal.path] = refusal.reason;
    const std::map<std::string, std::string> expected {{"escape", "symlink_escapes"},
                                                       {"sub/up", "symlink_escapes"},
                                                       {"fifo", "fifo"},
                                                       {"setuid", "setuid"},
                                                       {"sub/alias.c", "hardlink"}};
    QCOMPARE(refused, expected);
    const QString out = root + QStringLiteral("/target");
    QFile main(out + QStringLiteral("/main.c"));
    QVERIFY(main.open(QIODevice::ReadOnly));
    QCOMPARE(main.readAll(), QByteArray("int main() { return 0; }\n"));
    QCOMPARE(QFileInfo(out + QStringLiteral("/sub/data.bin")).size(), 100000);
    QCOMPARE(QFileInfo(out + QStringLiteral("/inside")).symLinkTarget(),
             out + QStringLiteral("/sub/data.bin"));
    for (const char *absent : {"/escape", "/sub/up", "/fifo", "/setuid", "/sub/alias.c"})
        QVERIFY2(!QFileInfo(out + QLatin1String(absent)).exists()
                     && !QFileInfo(out + QLatin1String(absent)).isSymLink(),
                 absent);
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/outside")));
}

void TestArchive::guestPolicyKeepsLinks()
{
    const QString root = m_dir.path() + QStringLiteral("/guest");
    plantTree(root);
    QVERIFY(QDir().mkpath(root + QStringLiteral("/target")));
    const int target = ::open(QFile::encodeName(root + QStringLiteral("/target")).constData(),
                              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ArchivePolicy policy;
    policy.allowEscapingSymlinks = true;
    policy.allowHardlinks = true;
    policy.allowSetid = true;
    ArchiveExtractor extractor(target, policy);
    ArchiveDecoder decoder(extractor);
    QVERIFY(decoder.feed(archiveOf(root + QStringLiteral("/src"))));
    ::close(target);
    QCOMPARE(extractor.refusals().size(), std::size_t(1));
    QCOMPARE(extractor.refusals()[0].reason, std::string("fifo"));
    const QString out = root + QStringLiteral("/target");
    QCOMPARE(QFileInfo(out + QStringLiteral("/escape")).symLinkTarget(),
             QStringLiteral("/etc/passwd"));
    struct stat a
    {
    }, b {};
    QCOMPARE(::stat(QFile::encodeName(out + QStringLiteral("/main.c")).constData(), &a), 0);
    QCOMPARE(::stat(QFile::encodeName(out + QStringLiteral("/sub/alias.c")).constData(), &b), 0);
    QCOMPARE(a.st_ino, b.st_ino);
    QCOMPARE(QFileInfo(out + QStringLiteral("/setuid")).permissions() & QFile::ExeOwner,
             QFile::ExeOwner);
    struct stat setuid
    {
    };
    ::stat(QFile::encodeName(out + QStringLiteral("/setuid")).constData(), &setuid);
    QCOMPARE(setuid.st_mode & 07777, 04755u);
}

void TestArchive::extractorNeverFollowsExistingSymlinks()
{
    // The target already holds symlinks pointing out (a careless user, or a second pull):
    // nothing reaches the outside through them.
    const QString root = m_dir.path() + QStringLiteral("/existing");
    QVERIFY(QDir().mkpath(root + QStringLiteral("/target")));
    QVERIFY(QDir().mkpath(root + QStringLiteral("/outside")));
    const QByteArray target = QFile::encodeName(root + QStringLiteral("/target"));
    QCOMPARE(::symlink(QFile::encodeName(root + QStringLiteral("/outside")).constData(),
                       target + "/dir"),
             0);
    QCOMPARE(::symlink(QFile::encodeName(root + QStringLiteral("/outside")).constData(),
                       target + "/deep"),
             0);
    QCOMPARE(::symlink(QFile::encodeName(root + QStringLiteral("/outside/victim")).constData(),
                       target + "/file"),
             0);
    writeFile(root + QStringLiteral("/outside/victim"), "untouched");

    Bytes archive;
    appendArchiveStart(archive);
    appendArchiveRecord(archive,
                        ArchiveEntry {ArchiveKind::Directory, S_IFDIR | 0755, 0, "dir", "", 0});
    appendArchiveRecord(archive,
                        ArchiveEntry {ArchiveKind::File, S_IFREG | 0644, 0, "dir/x", "", 1});
    archive.push_back('1');
    appendArchiveRecord(archive,
                        ArchiveEntry {ArchiveKind::File, S_IFREG | 0644, 0, "deep/y", "", 1});
    archive.push_back('2');
    appendArchiveRecord(archive,
                        ArchiveEntry {ArchiveKind::File, S_IFREG | 0644, 0, "file", "", 3});
    archive.insert(archive.end(), {'n', 'e', 'w'});
    appendArchiveRecord(archive,
                        ArchiveEntry {ArchiveKind::File, S_IFREG | 0644, 0, "../escaped", "", 1});
    archive.push_back('3');
    appendArchiveEnd(archive);

    const int fd = ::open(target.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ArchiveExtractor extractor(fd, ArchivePolicy {});
    ArchiveDecoder decoder(extractor);
    QVERIFY(decoder.feed(archive));
    ::close(fd);
    std::map<std::string, std::string> refused;
    for (const ArchiveRefusal &refusal : extractor.refusals())
        refused[refusal.path] = refusal.reason;
    // "dir" (a symlink in the way of a folder) was replaced by a real folder; "deep" is a
    // symlink in the path of an entry; "file" (a symlink in the way of a file) was replaced.
    const std::map<std::string, std::string> expected {{"deep/y", "symlink_in_path"},
                                                       {"../escaped", "parent_path"}};
    QCOMPARE(refused, expected);
    QVERIFY(QFileInfo(root + QStringLiteral("/target/dir")).isDir()
            && !QFileInfo(root + QStringLiteral("/target/dir")).isSymLink());
    QVERIFY(QFileInfo::exists(root + QStringLiteral("/target/dir/x")));
    QVERIFY(!QFileInfo(root + QStringLiteral("/target/file")).isSymLink());
    QStringList outside =
        QDir(root + QStringLiteral("/outside")).entryList(QDir::NoDotAndDotDot | QDir::AllEntries);
    QCOMPARE(outside, QStringList {QStringLiteral("victim")});
    QFile victim(root + QStringLiteral("/outside/victim"));
    QVERIFY(victim.open(QIODevice::ReadOnly));
    QCOMPARE(victim.readAll(), QByteArray("untouched"));
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/escaped")));
}

void TestArchive::refusalNames_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("mode");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("link");
    QTest::addColumn<QString>("refusal");
    const auto row = [](const char *name, ArchiveKind kind, int mode, const char *path,
                        const char *link, const char *refusal) {
        QTest::newRow(name) << int(kind) << mode << QString::fromLatin1(path)
                            << QString::fromLatin1(link) << QString::fromLatin1(refusal);
    };
    row("plain file", ArchiveKind::File, S_IFREG | 0644, "a/b", "", "");
    row("absolute", ArchiveKind::File, S_IFREG | 0644, "/etc/cron.d/x", "", "absolute_path");
    row("dotdot", ArchiveKind::File, S_IFREG | 0644, "a/../../b", "", "parent_path");
    row("dot", ArchiveKind::File, S_IFREG | 0644, "./a", "", "bad_path");
    row("empty component", ArchiveKind::File, S_IFREG | 0644, "a//b", "", "bad_path");
    row("setuid", ArchiveKind::File, S_IFREG | 04755, "x", "", "setuid");
    row("setgid dir", ArchiveKind::Directory, S_IFDIR | 02775, "d", "", "setgid");
    row("sticky dir", ArchiveKind::Directory, S_IFDIR | 01777, "d", "", "");
    row("fifo", ArchiveKind::Other, S_IFIFO | 0644, "p", "", "fifo");
    row("socket", ArchiveKind::Other, S_IFSOCK | 0755, "s", "", "socket");
    row("char device", ArchiveKind::Other, S_IFCHR | 0666, "null", "", "device");
    row("block device", ArchiveKind::Other, S_IFBLK | 0660, "sda", "", "device");
    row("hardlink", ArchiveKind::Hardlink, S_IFREG | 0644, "b", "a", "hardlink");
    row("symlink inside", ArchiveKind::Symlink, S_IFLNK | 0777, "a/l", "../b", "");
    row("symlink absolute", ArchiveKind::Symlink, S_IFLNK | 0777, "l", "/etc", "symlink_escapes");
    row("symlink up", ArchiveKind::Symlink, S_IFLNK | 0777, "a/l", "../../b", "symlink_escapes");
}

void TestArchive::refusalNames()
{
    QFETCH(int, kind);
    QFETCH(int, mode);
    QFETCH(QString, path);
    QFETCH(QString, link);
    QFETCH(QString, refusal);
    ArchiveEntry entry {ArchiveKind(kind),  std::uint32_t(mode), 0,
                        path.toStdString(), link.toStdString(),  0};
    const auto reason = archiveRefusal(entry, ArchivePolicy {});
    QCOMPARE(QString::fromStdString(std::string(reason.value_or(""))), refusal);
}

void TestArchive::symlinkRule_data()
{
    QTest::addColumn<QString>("link");
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("inside");
    QTest::newRow("sibling") << "a"
                             << "b" << true;
    QTest::newRow("down") << "a"
                          << "b/c/d" << true;
    QTest::newRow("up one at depth one") << "x/a"
                                         << "../b" << true;
    QTest::newRow("up two at depth two") << "x/y/a"
                                         << "../../b" << true;
    QTest::newRow("up past the root") << "x/a"
                                      << "../../b" << false;
    QTest::newRow("up at the root") << "a"
                                    << "../b" << false;
    QTest::newRow("absolute") << "a"
                              << "/b" << false;
    // b/.. would climb out of b's target if b were a symlink: only leading ".." count.
    QTest::newRow("dotdot after a name") << "a"
                                         << "b/../c" << false;
    QTest::newRow("dot") << "a"
                         << "./b" << false;
    QTest::newRow("trailing slash") << "a"
                                    << "b/" << false;
    QTest::newRow("empty") << "a"
                           << "" << false;
}

void TestArchive::symlinkRule()
{
    QFETCH(QString, link);
    QFETCH(QString, target);
    QFETCH(bool, inside);
    QCOMPARE(symlinkStaysInside(link.toStdString(), target.toStdString()), inside);
}

void TestArchive::decoderIsStrict_data()
{
    QTest::addColumn<QByteArray>("archive");
    const auto bytes = [](const Bytes &b) {
        return QByteArray(reinterpret_cast<const char *>(b.data()), qsizetype(b.size()));
    };
    Bytes start;
    appendArchiveStart(start);
    const auto withRecord = [&](auto change) {
        Bytes out = start;
        appendArchiveRecord(out, ArchiveEntry {ArchiveKind::File, S_IFREG | 0644, 0, "f", "", 0});
        change(out);
        return bytes(out);
    };
    QTest::newRow("bad magic") << QByteArray("ALA2");
    QTest::newRow("unknown kind") << withRecord([](Bytes &b) { b[4] = 9; });
    QTest::newRow("file with directory mode") << withRecord([](Bytes &b) { b[4 + 2] = 0x41; });
    QTest::newRow("path length zero") << withRecord([](Bytes &b) { b[4 + 13] = 0; });
    QTest::newRow("link on a file") << withRecord([](Bytes &b) {
        b[4 + 15] = 1;
        b.push_back('x');
    });
    QTest::newRow("content on a directory") << withRecord([](Bytes &b) {
        b[4] = std::uint8_t(ArchiveKind::Directory);
        b[4 + 2] = 0x41;
        b[4 + 17] = 1;
    });
    QTest::newRow("bytes after the end") << withRecord([](Bytes &b) {
        appendArchiveEnd(b);
        b.push_back(0);
    });
    QTest::newRow("end with a field set") << withRecord([](Bytes &b) {
        appendArchiveEnd(b);
        b[b.size() - 1] = 1;
    });
}

void TestArchive::decoderIsStrict()
{
    QFETCH(QByteArray, archive);
    RecordingSink sink;
    ArchiveDecoder decoder(sink);
    const bool ok = decoder.feed(ByteView(
        reinterpret_cast<const std::uint8_t *>(archive.constData()), std::size_t(archive.size())));
    QVERIFY(!ok);
    QVERIFY(decoder.error().has_value());
}

QTEST_APPLESS_MAIN(TestArchive)
#include "tst_archive.moc"
