// The two layers that keep a jailed Firecracker off the host's abstract Unix sockets, each alone
// in a forked child: NoConnectFilter (seccomp: connect(2) fails with EACCES, everything else
// goes on) and LandlockScope (Landlock ABI 6: abstract sockets outside the domain refuse with
// EPERM, path-named ones stay reachable, as the chroot is what hides those).

#include "core/vmm/landlockscope.h"
#include "core/vmm/noconnectfilter.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace airlock;

namespace {

/// A listening Unix socket: abstract (`name` without the leading NUL) or at a path.
struct Listener
{
    int fd = -1;
    sockaddr_un address {};
    socklen_t length = 0;

    Listener(const QByteArray &name, bool abstract)
    {
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path + (abstract ? 1 : 0), name.constData(), size_t(name.size()));
        length = socklen_t(offsetof(sockaddr_un, sun_path) + (abstract ? 1 : 0) + name.size()
                           + (abstract ? 0 : 1));
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0
            && (::bind(fd, reinterpret_cast<sockaddr *>(&address), length) != 0
                || ::listen(fd, 8) != 0)) {
            ::close(fd);
            fd = -1;
        }
    }
    ~Listener()
    {
        if (fd >= 0)
            ::close(fd);
    }
    /// connect(2) to it from this process: 0 or errno.
    int connectHere() const
    {
        const int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (client < 0)
            return errno;
        const int result =
            ::connect(client, reinterpret_cast<const sockaddr *>(&address), length) == 0 ? 0
                                                                                         : errno;
        ::close(client);
        return result;
    }
};

/// Runs `confine` then `probe` in a forked child; the child's exit code is probe's result
/// (an errno, 0 for success), or 200 + errno when confine failed.
int inChild(int (*confine)(int), int argument, const Listener &target)
{
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (const int error = confine(argument); error != 0)
            ::_exit(200 + (error & 0x3f));
        ::_exit(target.connectHere() & 0xff);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int noConnect(int)
{
    return NoConnectFilter::install();
}

int landlock(int ruleset)
{
    return LandlockScope::restrictSelf(ruleset);
}

} // namespace

class TestVmmConfinement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void noConnectFilterRefusesConnect()
    {
        const Listener abstract("airlock-test-noconnect-" + QByteArray::number(::getpid()), true);
        QVERIFY(abstract.fd >= 0);
        QCOMPARE(abstract.connectHere(), 0); // reachable from outside the filter
        QCOMPARE(inChild(noConnect, 0, abstract), EACCES);
    }

    void landlockScopesOffAbstractSocketsOnly()
    {
        if (!LandlockScope::available())
            QSKIP(qPrintable(QStringLiteral("Landlock ABI %1 here; the scopes need ABI 6 "
                                            "(Linux 6.12)")
                                 .arg(LandlockScope::abiVersion())));
        const Listener abstract("airlock-test-landlock-" + QByteArray::number(::getpid()), true);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Listener named(QFile::encodeName(dir.filePath(QStringLiteral("named.sock"))), false);
        QVERIFY(abstract.fd >= 0 && named.fd >= 0);
        QCOMPARE(abstract.connectHere(), 0);
        const int ruleset = LandlockScope::createRuleset();
        QVERIFY(ruleset >= 0);
        QCOMPARE(inChild(landlock, ruleset, abstract), EPERM);
        QCOMPARE(inChild(landlock, ruleset, named), 0);
        ::close(ruleset);
    }
};

QTEST_GUILESS_MAIN(TestVmmConfinement)
#include "tst_vmmconfinement.moc"
