// QmpClient against a QMP peer of the test's own on a Unix socket: the order of commands and
// descriptors (SCM_RIGHTS) when QEMU reads its monitor slowly.
#include "core/vmm/qmpclient.h"
#include "resultcheck.h"

#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

#include <cerrno>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace airlock;
using namespace Qt::StringLiterals;

namespace {

/// The QEMU side: a listening socket, one accepted connection, what arrived on it and where
/// in the byte stream each passed descriptor came.
struct FakeQmp
{
    int listener = -1;
    int peer = -1;
    QByteArray received;
    struct Passed
    {
        // The bytes of the recvmsg() that carried it: Linux hands a descriptor over with the
        // segment it was sent with, possibly joined to bytes sent before it.
        qsizetype begin;
        qsizetype end;
        int fd;
    };
    std::vector<Passed> passed;

    ~FakeQmp()
    {
        for (const Passed &p : passed)
            ::close(p.fd);
        if (peer >= 0)
            ::close(peer);
        if (listener >= 0)
            ::close(listener);
    }
    bool listen(const QString &path)
    {
        listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_un address {};
        address.sun_family = AF_UNIX;
        const QByteArray name = QFile::encodeName(path);
        std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
        return listener >= 0
            && ::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0
            && ::listen(listener, 1) == 0;
    }
    bool accept()
    {
        if (peer < 0)
            peer = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        return peer >= 0;
    }
    void send(const QByteArray &line)
    {
        QCOMPARE(::send(peer, line.constData(), size_t(line.size()), 0), line.size());
    }
    /// Reads what is there without blocking; descriptors are recorded with their offset.
    void read()
    {
        for (;;) {
            char buffer[65536];
            char control[CMSG_SPACE(sizeof(int))] = {};
            iovec data {buffer, sizeof buffer};
            msghdr header {};
            header.msg_iov = &data;
            header.msg_iovlen = 1;
            header.msg_control = control;
            header.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(peer, &header, MSG_CMSG_CLOEXEC);
            if (n <= 0)
                return;
            for (cmsghdr *c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                    int fd;
                    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
                    passed.push_back({received.size(), received.size() + qsizetype(n), fd});
                }
            }
            received.append(buffer, n);
        }
    }
    /// The complete lines received so far.
    QList<QJsonObject> lines() const
    {
        QList<QJsonObject> objects;
        for (const QByteArray &line : received.split('\n')) {
            if (!line.isEmpty())
                objects.append(QJsonDocument::fromJson(line).object());
        }
        if (!received.endsWith('\n') && !objects.isEmpty())
            objects.removeLast();
        return objects;
    }
};

} // namespace

class TestQmpClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void descriptorWaitsBehindQueuedBytesWithoutBlocking();
};

void TestQmpClient::descriptorWaitsBehindQueuedBytesWithoutBlocking()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"qmp.sock"_s);
    FakeQmp qemu;
    QVERIFY(qemu.listen(path));
    QmpClient client;
    std::optional<Result<void>> connected;
    client.connectToServer(path, 5000, [&](const Result<void> &r) { connected = r; });
    QTRY_VERIFY(qemu.accept());
    qemu.send(R"({"QMP":{"version":{},"capabilities":[]}})"
              "\n"_ba);
    QTRY_VERIFY((qemu.read(), qemu.lines().size() == 1));
    QCOMPARE(qemu.lines().at(0).value(u"execute"_s).toString(), u"qmp_capabilities"_s);
    qemu.send(R"({"return":{},"id":)"_ba
              + QByteArray::number(qemu.lines().at(0).value(u"id"_s).toInteger()) + "}\n");
    QTRY_VERIFY(connected.has_value());
    QVERIFY_RESULT(*connected);
    qemu.received.clear();

    // QEMU does not read: 4 MiB of one command fill the socket and Qt's buffer behind it.
    const QString blob(4 * 1024 * 1024, u'x');
    client.execute(u"first"_s, {{u"blob"_s, blob}});
    QTemporaryFile file;
    QVERIFY(file.open());
    struct stat expected
    {
    };
    QCOMPARE(::fstat(file.handle(), &expected), 0);
    const int mine = ::dup(file.handle());
    std::optional<Result<QJsonValue>> getfd;
    client.passDescriptor(u"memory"_s, mine, 10000,
                          [&](const Result<QJsonValue> &r) { getfd = r; });
    // Ours to close at once: the client sends a copy.
    ::close(mine);
    client.execute(u"after"_s);

    // Now QEMU reads: the commands arrive whole and in order, the descriptor with the bytes of
    // getfd and no earlier.
    QTRY_VERIFY_WITH_TIMEOUT((qemu.read(), qemu.lines().size() == 3), 20000);
    const QList<QJsonObject> lines = qemu.lines();
    QCOMPARE(lines.at(0).value(u"execute"_s).toString(), u"first"_s);
    QCOMPARE(lines.at(0).value(u"arguments"_s).toObject().value(u"blob"_s).toString().size(),
             blob.size());
    QCOMPARE(lines.at(1).value(u"execute"_s).toString(), u"getfd"_s);
    QCOMPARE(lines.at(2).value(u"execute"_s).toString(), u"after"_s);
    QCOMPARE(qemu.passed.size(), size_t(1));
    // It came with getfd's bytes: not with the first command's (sent before them).
    const qsizetype getfdStarts = qemu.received.indexOf('\n') + 1;
    QVERIFY(qemu.passed.front().begin <= getfdStarts);
    QVERIFY(qemu.passed.front().end > getfdStarts);
    struct stat arrived
    {
    };
    QCOMPARE(::fstat(qemu.passed.front().fd, &arrived), 0);
    QCOMPARE(arrived.st_ino, expected.st_ino);
    QCOMPARE(arrived.st_dev, expected.st_dev);

    qemu.send(R"({"return":{},"id":)"_ba
              + QByteArray::number(lines.at(1).value(u"id"_s).toInteger()) + "}\n");
    QTRY_VERIFY(getfd.has_value());
    QVERIFY_RESULT(*getfd);
}

QTEST_GUILESS_MAIN(TestQmpClient)
#include "tst_qmpclient.moc"
