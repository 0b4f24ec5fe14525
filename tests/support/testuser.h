#pragma once

#include <QList>
#include <QString>

#include <memory>

#include <sys/types.h>

class QProcess;

namespace airlock::test {

class RpcTestClient;

/// A real second host user for tests of per-user rules (the helper's SO_PEERCRED checks):
/// created with `useradd --system --no-create-home --shell /usr/sbin/nologin -G GROUP`, deleted
/// with `userdel` by the destructor. Names are "alt-u<pid>-<n>"; users a killed test run left
/// behind (their pid is gone) are deleted when the next TestUser is made. Needs root.
///
///     HelperProcess helper;                 // creates group airlock
///     QVERIFY(helper.start());
///     TestUser alice;                       // member of airlock
///     QVERIFY2(alice.isValid(), qPrintable(alice.lastError()));
///     auto client = alice.connect(helper.socketPath());
///     client->call("secret.list");          // the helper sees alice's uid
///     QProcess ctl; alice.runAs(ctl);       // airlockctl as alice
///
/// The membership is a supplementary group, as `usermod -aG airlock alice` makes it: the
/// primary group is the user's own.
class TestUser
{
public:
    /// `group` must exist (airlockd creates `airlock` at start).
    explicit TestUser(const QString &group = QStringLiteral("airlock"));
    ~TestUser();
    TestUser(const TestUser &) = delete;
    TestUser &operator=(const TestUser &) = delete;

    bool isValid() const { return m_uid != uid_t(-1); }
    QString lastError() const { return m_lastError; }
    QString name() const { return m_name; }
    uid_t uid() const { return m_uid; }
    gid_t gid() const { return m_gid; }

    /// An RpcTestClient connected as this user: effective uid, gid and groups are switched for
    /// the connect() alone (the kernel records them for SO_PEERCRED then) and switched back.
    /// Check isConnected(); null when the switch failed.
    std::unique_ptr<RpcTestClient> connect(const QString &socketPath) const;
    /// Makes `process` run as this user (setgroups, setgid, setuid between fork and exec). Call
    /// before start(); replaces a child process modifier set before.
    void runAs(QProcess &process) const;

private:
    static void deleteStaleUsers();

    QString m_name;
    uid_t m_uid = uid_t(-1);
    gid_t m_gid = gid_t(-1);
    QList<gid_t> m_groups; ///< primary first, then the supplementary group
    QString m_lastError;
};

} // namespace airlock::test
