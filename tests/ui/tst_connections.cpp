// Remote hosts in the window: the connections manager, the settings it writes (no secrets),
// and the sidebar with this computer's helper and remote helpers over a real sshd, each with
// its state.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "eventloop.h"
#include "helperprocess.h"
#include "sshserver.h"
#include "ui/connectionsdialog.h"
#include "ui/hostconnection.h"
#include "ui/hostsidebar.h"
#include "ui/hoststore.h"
#include "ui/mainwindow.h"
#include "ui/sandboxtablemodel.h"

#include <QDir>
#include <QLineEdit>
#include <QListWidget>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using airlock::HostConnection;
using airlock::SshEndpoint;
using airlock::test::HelperProcess;
using airlock::test::SshServer;

class TestConnections : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void hostStoreKeepsNoSecrets();
    void dialogAddsEditsRemoves();
    void sidebarShowsEveryHostAndItsState();

private:
    QTemporaryDir m_home;
};

void TestConnections::initTestCase()
{
    // known_hosts and the SSH config are looked up under $HOME: a fresh one per run.
    QVERIFY(m_home.isValid());
    qputenv("HOME", QFile::encodeName(m_home.path()));
    QVERIFY(QDir().mkpath(m_home.filePath(QStringLiteral(".ssh"))));
}

void TestConnections::hostStoreKeepsNoSecrets()
{
    const QString file = m_home.filePath(QStringLiteral("hosts.conf"));
    QList<SshEndpoint> hosts(2);
    hosts[0].user = QStringLiteral("alice");
    hosts[0].host = QStringLiteral("build.example.org");
    hosts[0].port = 2222;
    hosts[0].identityFile = QStringLiteral("/home/alice/.ssh/id_ed25519");
    hosts[1].host = QStringLiteral("::1");
    hosts[1].socketPath = QStringLiteral("/run/other/airlockd.sock");
    {
        QSettings settings(file, QSettings::IniFormat);
        airlock::HostStore::save(settings, hosts);
    }
    QSettings settings(file, QSettings::IniFormat);
    QCOMPARE(airlock::HostStore::load(settings), hosts);
    for (const QString &key : settings.allKeys())
        QVERIFY2(!key.contains(QStringLiteral("pass"), Qt::CaseInsensitive), qPrintable(key));

    // Saving fewer hosts leaves no stale entries behind.
    airlock::HostStore::save(settings, hosts.mid(1));
    QCOMPARE(airlock::HostStore::load(settings), hosts.mid(1));
}

void TestConnections::dialogAddsEditsRemoves()
{
    SshEndpoint existing;
    existing.host = QStringLiteral("old.example.org");
    airlock::ConnectionsDialog dialog({existing});
    QCOMPARE(dialog.list()->count(), 1);
    QCOMPARE(dialog.hostEdit()->text(), QStringLiteral("old.example.org"));

    dialog.addHost();
    QCOMPARE(dialog.list()->count(), 2);
    QTest::keyClicks(dialog.userEdit(), QStringLiteral("bob"));
    QTest::keyClicks(dialog.hostEdit(), QStringLiteral("new.example.org"));
    dialog.portEdit()->setValue(2200);
    dialog.identityEdit()->setText(QStringLiteral("/home/bob/.ssh/id_ed25519"));
    QCOMPARE(dialog.hosts().size(), 2);
    const SshEndpoint added = dialog.hosts().at(1);
    QCOMPARE(added.user, QStringLiteral("bob"));
    QCOMPARE(added.host, QStringLiteral("new.example.org"));
    QCOMPARE(added.port, quint16(2200));
    QCOMPARE(added.socketPath, QStringLiteral(AIRLOCK_DEFAULT_SOCKET));
    QCOMPARE(dialog.list()->item(1)->text(), QStringLiteral("bob@new.example.org:2200"));

    // An empty host name keeps the dialog open.
    dialog.addHost();
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    dialog.removeSelectedHost();
    QCOMPARE(dialog.hosts().size(), 2);

    dialog.list()->setCurrentRow(0);
    dialog.removeSelectedHost();
    QCOMPARE(dialog.hosts(), QList<SshEndpoint> {added});
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
}

void TestConnections::sidebarShowsEveryHostAndItsState()
{
    HelperProcess helper;
    QVERIFY2(!helper.useUnbootableImageStore().isEmpty(), qPrintable(helper.lastError()));
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    SshServer good;
    QVERIFY2(good.start(), qPrintable(good.lastError()));
    SshServer impostor;
    QVERIFY2(impostor.start(), qPrintable(impostor.lastError()));

    // known_hosts trusts `good`, and holds good's key for impostor's address too: impostor
    // presents another key, which is what a changed host key looks like.
    QFile knownHosts(m_home.filePath(QStringLiteral(".ssh/known_hosts")));
    QVERIFY(knownHosts.open(QIODevice::WriteOnly | QIODevice::Truncate));
    const QString goodLine = good.knownHostsLine();
    knownHosts.write(goodLine.toUtf8() + '\n');
    QString forged = goodLine;
    forged.replace(QStringLiteral("]:%1 ").arg(good.port()),
                   QStringLiteral("]:%1 ").arg(impostor.port()));
    knownHosts.write(forged.toUtf8() + '\n');
    knownHosts.close();

    auto endpointOf = [&](const SshServer &server) {
        SshEndpoint endpoint;
        endpoint.user = QStringLiteral("root");
        endpoint.host = QStringLiteral("127.0.0.1");
        endpoint.port = server.port();
        endpoint.socketPath = helper.socketPath();
        endpoint.identityFile = server.clientKeyPath();
        return endpoint;
    };

    airlock::HelperClient local(
        std::make_unique<airlock::LocalSocketTransport>(helper.socketPath()),
        QStringLiteral("tst_connections"));
    airlock::MainWindow window(&local);
    window.show();
    local.connectToHelper();
    window.setRemoteHosts({endpointOf(good), endpointOf(impostor)});
    QCOMPARE(window.hosts().size(), 3);
    HostConnection *localHost = window.hosts().at(0);
    HostConnection *remote = window.hosts().at(1);
    HostConnection *changed = window.hosts().at(2);
    QVERIFY(!localHost->isRemote());

    QTRY_COMPARE_WITH_TIMEOUT(localHost->state(), HostConnection::State::Connected, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(remote->state(), HostConnection::State::Connected, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(changed->state(), HostConnection::State::HostKeyChanged, 15000);
    airlock::HostSidebar *sidebar = window.sidebar();
    QVERIFY(sidebar->itemFor(remote)->text(0).contains(QStringLiteral("Connected")));
    QVERIFY(sidebar->itemFor(changed)->text(0).contains(QStringLiteral("Host key changed")));
    QVERIFY(sidebar->itemFor(changed)->toolTip(0).contains(QStringLiteral("ssh-keygen -R")));
    // Not retried behind the user's back: no reconnect is scheduled, and it stays refused.
    QCOMPARE(changed->client()->scheduledReconnectMs(), -1);
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(changed->state(), HostConnection::State::HostKeyChanged);

    // A sandbox made through the remote host shows under it (and under this computer: it is
    // the same helper here).
    window.setCurrentHost(remote);
    QCOMPARE(window.model(), remote->model());
    QVERIFY(remote->client()
                ->callSync(QStringLiteral("sandbox.create"),
                           {{QStringLiteral("name"), QStringLiteral("far-away")}})
                .has_value());
    QTRY_COMPARE_WITH_TIMEOUT(sidebar->itemFor(remote)->childCount(), 1, 10000);
    QCOMPARE(sidebar->itemFor(remote)->child(0)->text(0), QStringLiteral("far-away"));
    QTRY_COMPARE_WITH_TIMEOUT(window.model()->rowCount(), 1, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(sidebar->itemFor(localHost)->childCount(), 1, 10000);
    QVERIFY(window.statusText().contains(QStringLiteral("127.0.0.1")));

    // The changed host as current: the window says why, with the fix.
    window.setCurrentHost(changed);
    QVERIFY(window.isShowingConnectionProblem());
    QVERIFY2(window.connectionProblemText().contains(QStringLiteral("host key")),
             qPrintable(window.connectionProblemText()));

    // Removing a host from the settings removes it from the sidebar.
    window.setRemoteHosts({endpointOf(good)});
    QCOMPARE(window.hosts().size(), 2);
    QCOMPARE(sidebar->topLevelItemCount(), 2);
    QVERIFY(local
                .callSync(QStringLiteral("sandbox.delete"),
                          {{QStringLiteral("name"), QStringLiteral("far-away")}})
                .has_value());
}

QTEST_MAIN(TestConnections)
#include "tst_connections.moc"
