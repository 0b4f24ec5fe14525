// SandboxActions, the window's sandbox workflow without widgets, against a real airlockd and real
// TCG guests: start then stop reported in order, the restart (stop, then start once the helper
// reports `stopped`) ending running, and refusals surfacing as failed() with the helper's error
// kind. No window is made: QTEST_GUILESS_MAIN, and the library has no Qt Gui.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/protocol/methods.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "ui/sandboxactions.h"

#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace airlock;

namespace {

// sandbox.stop kills the VMM 10 s after asking the guest; TCG is slow on a loaded machine.
constexpr int kStateTimeoutMs = 60000;

using Action = SandboxActions::Action;

QString actionName(Action action)
{
    return QString::fromLatin1(QMetaEnum::fromType<Action>().valueToKey(int(action)));
}

} // namespace

class TestSandboxActions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void enablementFollowsState();
    void startThenStopInOrder();
    void restartStopsThenStarts();
    void restartOfStoppedSandboxReportsStopFailure();
    void unknownSandboxFailsWithNotFound();
    void deletingRunningSandboxFailsWithBusy();

private:
    /// The helper's state of `name` ("running", "stopped"), empty when it does not exist.
    QString helperState(const QString &name);
    /// Creates `name` through the actions and waits until the helper answered.
    bool create(const QString &name, bool start);
    int indexOf(const QString &entry, int from = 0) const
    {
        return int(m_log.indexOf(entry, from));
    }
    /// Where `entry` is logged after the first `after`; -1 when it is not (yet).
    int indexAfter(const QString &entry, const QString &after) const
    {
        const int at = indexOf(after);
        return at < 0 ? -1 : indexOf(entry, at + 1);
    }

    std::unique_ptr<test::HelperProcess> m_helper;
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<SandboxActions> m_actions;
    /// Everything in arrival order: "Start ok a", "Delete failed a busy", "state a stopped"
    /// (sandbox.changed), "progress a Restarting a…".
    QStringList m_log;
    QHash<QString, Error> m_errors; // "Action sandbox" -> the error of its last failure
};

void TestSandboxActions::initTestCase()
{
    m_helper = std::make_unique<test::HelperProcess>();
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_client = std::make_unique<HelperClient>(
        std::make_unique<LocalSocketTransport>(m_helper->socketPath()),
        QStringLiteral("tst_sandboxactions"));
    connect(m_client.get(), &HelperClient::notificationReceived, this,
            [this](const QString &method, const QJsonObject &params) {
                if (method != QLatin1String(protocol::notification::SandboxChanged))
                    return;
                const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
                m_log.append(QStringLiteral("state %1 %2")
                                 .arg(sandbox.value(QStringLiteral("name")).toString(),
                                      sandbox.value(QStringLiteral("state")).toString()));
            });
    QVERIFY(m_client->connectSync());
    // restart() follows sandbox.changed, which only subscribed connections receive (the
    // window's SandboxTableModel subscribes the same way).
    QVERIFY(m_client->callSync(QString::fromLatin1(protocol::method::EventsSubscribe), {}));

    m_actions = std::make_unique<SandboxActions>();
    m_actions->setClient(m_client.get());
    QCOMPARE(m_actions->client(), m_client.get());
    connect(m_actions.get(), &SandboxActions::succeeded, this,
            [this](Action action, const QString &sandbox) {
                m_log.append(QStringLiteral("%1 ok %2").arg(actionName(action), sandbox));
            });
    connect(m_actions.get(), &SandboxActions::failed, this,
            [this](Action action, const QString &sandbox, const QString &text, const Error &error) {
                QCOMPARE(text, SandboxActions::failureText(action, sandbox));
                m_errors.insert(actionName(action) + QLatin1Char(' ') + sandbox, error);
                m_log.append(QStringLiteral("%1 failed %2 %3")
                                 .arg(actionName(action), sandbox, errorKindName(error.kind)));
            });
    connect(m_actions.get(), &SandboxActions::progress, this,
            [this](const QString &sandbox, const QString &text) {
                m_log.append(QStringLiteral("progress %1 %2").arg(sandbox, text));
            });
}

void TestSandboxActions::cleanupTestCase()
{
    m_actions.reset();
    m_client.reset();
    m_helper.reset();
}

void TestSandboxActions::init()
{
    m_log.clear();
    m_errors.clear();
}

QString TestSandboxActions::helperState(const QString &name)
{
    const auto result = m_client->callSync(QString::fromLatin1(protocol::method::SandboxGet),
                                           {{QStringLiteral("name"), name}});
    return result ? result->toObject().value(QStringLiteral("state")).toString() : QString();
}

bool TestSandboxActions::create(const QString &name, bool start)
{
    QSignalSpy reported(m_actions.get(), &SandboxActions::sandboxReported);
    SandboxSpec spec;
    spec.name = name;
    m_actions->create(spec, start, QStringLiteral("cold"));
    const QString ok = QStringLiteral("Create ok %1").arg(name);
    const QString failed = QStringLiteral("Create %1").arg(name);
    if (!QTest::qWaitFor([&] { return m_log.contains(ok) || m_errors.contains(failed); }, 30000))
        return false;
    if (!m_log.contains(ok))
        return false;
    // The answer's sandbox came before the success, so the window can show it at once.
    return reported.size() == 1 && reported.at(0).at(0).value<Sandbox>().spec.name == name
        && reported.at(0).at(0).value<Sandbox>().state == SandboxState::Stopped;
}

void TestSandboxActions::enablementFollowsState()
{
    using E = SandboxActions::Enablement;
    // Not connected: nothing, whatever is selected.
    QCOMPARE(SandboxActions::enablement(false, SandboxState::Running), E {});
    QCOMPARE(SandboxActions::enablement(false, std::nullopt), E {});
    // Connected without a selection: only New Sandbox.
    QCOMPARE(SandboxActions::enablement(true, std::nullopt), E {.create = true});

    const E stopped = SandboxActions::enablement(true, SandboxState::Stopped);
    QCOMPARE(stopped,
             (E {.create = true,
                 .start = true,
                 .remove = true,
                 .openConsole = true,
                 .editPolicy = true}));
    const E running = SandboxActions::enablement(true, SandboxState::Running);
    QCOMPARE(running,
             (E {.create = true,
                 .stop = true,
                 .kill = true,
                 .pause = true,
                 .openConsole = true,
                 .editPolicy = true}));
    QVERIFY(!running.remove); // deleting a running sandbox is the helper's `busy`
    QCOMPARE(SandboxActions::enablement(true, SandboxState::Paused),
             (E {.create = true,
                 .stop = true,
                 .kill = true,
                 .resume = true,
                 .openConsole = true,
                 .editPolicy = true}));
    // In transition only Force Stop acts on the VMM.
    for (SandboxState state : {SandboxState::Starting, SandboxState::Stopping})
        QCOMPARE(SandboxActions::enablement(true, state),
                 (E {.create = true, .kill = true, .openConsole = true, .editPolicy = true}));

    QCOMPARE(SandboxActions::failureText(Action::Kill, QStringLiteral("a")),
             QStringLiteral("Could not force-stop sandbox “a”."));
}

void TestSandboxActions::startThenStopInOrder()
{
    const QString name = QStringLiteral("order");
    QVERIFY2(create(name, false), qPrintable(m_log.join(u'\n')));
    m_actions->start(name);
    QTRY_VERIFY2_WITH_TIMEOUT(m_log.contains(QStringLiteral("Start ok order"))
                                  || !m_errors.isEmpty(),
                              qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_log.join(u'\n')));
    QCOMPARE(helperState(name), QStringLiteral("running"));

    m_actions->stop(name);
    // sandbox.stop answers `stopping`; `stopped` follows once the guest is gone.
    QTRY_VERIFY2_WITH_TIMEOUT(
        indexAfter(QStringLiteral("state order stopped"), QStringLiteral("Stop ok order")) >= 0
            || !m_errors.isEmpty(),
        qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_log.join(u'\n')));
    const int created = indexOf(QStringLiteral("Create ok order"));
    const int started = indexOf(QStringLiteral("Start ok order"));
    const int stopped = indexOf(QStringLiteral("Stop ok order"));
    QVERIFY2(created >= 0 && created < started && started < stopped, qPrintable(m_log.join(u'\n')));
    QCOMPARE(helperState(name), QStringLiteral("stopped"));

    m_actions->remove(name);
    QTRY_VERIFY2(m_log.contains(QStringLiteral("Delete ok order")), qPrintable(m_log.join(u'\n')));
    QCOMPARE(helperState(name), QString());
}

void TestSandboxActions::restartStopsThenStarts()
{
    const QString name = QStringLiteral("again");
    QVERIFY2(create(name, true), qPrintable(m_log.join(u'\n')));
    // create(start = true) starts after the create answer, on the same client.
    QTRY_VERIFY2_WITH_TIMEOUT(m_log.contains(QStringLiteral("Start ok again"))
                                  || !m_errors.isEmpty(),
                              qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_log.join(u'\n')));
    QCOMPARE(helperState(name), QStringLiteral("running"));

    m_log.clear();
    m_actions->restart(name);
    QCOMPARE(m_log.value(0), QStringLiteral("progress again Restarting again…"));
    QTRY_VERIFY2_WITH_TIMEOUT(m_log.contains(QStringLiteral("Start ok again"))
                                  || !m_errors.isEmpty(),
                              qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_log.join(u'\n')));
    // Stop answered, the helper reported the guest gone, and only then the start was sent.
    const int stopOk = indexOf(QStringLiteral("Stop ok again"));
    const int stopped = indexOf(QStringLiteral("state again stopped"));
    const int startOk = indexOf(QStringLiteral("Start ok again"));
    QVERIFY2(stopOk > 0 && stopOk < stopped && stopped < startOk, qPrintable(m_log.join(u'\n')));
    QCOMPARE(m_log.filter(QStringLiteral("Start ok")).size(), 1);
    QVERIFY2(indexOf(QStringLiteral("state again starting"), stopped) > stopped
                 || indexOf(QStringLiteral("state again running"), stopped) > stopped,
             qPrintable(m_log.join(u'\n')));
    QCOMPARE(helperState(name), QStringLiteral("running"));
    // No give-up message follows a restart that finished.
    QCOMPARE(m_log.filter(QStringLiteral("progress")).size(), 1);

    QVERIFY(m_client->callSync(QString::fromLatin1(protocol::method::SandboxKill),
                               {{QStringLiteral("name"), name}}));
}

void TestSandboxActions::restartOfStoppedSandboxReportsStopFailure()
{
    const QString name = QStringLiteral("idle");
    QVERIFY2(create(name, false), qPrintable(m_log.join(u'\n')));
    m_actions->restart(name);
    QTRY_VERIFY2(m_log.contains(QStringLiteral("Stop failed idle invalid_state")),
                 qPrintable(m_log.join(u'\n')));
    QCOMPARE(m_errors.value(QStringLiteral("Stop idle")).kind, ErrorKind::InvalidState);
    // The stop failed, so nothing was started: a start sent on this connection would have
    // been answered before this sandbox.get (one ordered connection).
    QCOMPARE(helperState(name), QStringLiteral("stopped"));
    QVERIFY2(m_log.filter(QStringLiteral("Start")).isEmpty(), qPrintable(m_log.join(u'\n')));
}

void TestSandboxActions::unknownSandboxFailsWithNotFound()
{
    QSignalSpy failed(m_actions.get(), &SandboxActions::failed);
    m_actions->start(QStringLiteral("no-such-sandbox"));
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.at(0).at(0).value<Action>(), Action::Start);
    QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("no-such-sandbox"));
    QCOMPARE(failed.at(0).at(2).toString(),
             QStringLiteral("Could not start sandbox “no-such-sandbox”."));
    QCOMPARE(failed.at(0).at(3).value<Error>().kind, ErrorKind::NotFound);

    // An invalid name is refused before any lookup.
    SandboxSpec spec;
    spec.name = QStringLiteral("Not Valid");
    m_actions->create(spec, true);
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.at(1).at(0).value<Action>(), Action::Create);
    QCOMPARE(failed.at(1).at(3).value<Error>().kind, ErrorKind::InvalidName);
    QVERIFY(!m_log.contains(QStringLiteral("Start ok Not Valid")));
}

void TestSandboxActions::deletingRunningSandboxFailsWithBusy()
{
    const QString name = QStringLiteral("busy");
    QVERIFY2(create(name, true), qPrintable(m_log.join(u'\n')));
    QTRY_VERIFY2_WITH_TIMEOUT(m_log.contains(QStringLiteral("Start ok busy"))
                                  || !m_errors.isEmpty(),
                              qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_log.join(u'\n')));
    // The window never offers this (enablement), but the helper is the one that refuses.
    QVERIFY(!SandboxActions::enablement(true, SandboxState::Running).remove);
    m_actions->remove(name);
    QTRY_VERIFY2(m_log.contains(QStringLiteral("Delete failed busy busy")),
                 qPrintable(m_log.join(u'\n')));
    QCOMPARE(m_errors.value(QStringLiteral("Delete busy")).kind, ErrorKind::Busy);
    QCOMPARE(helperState(name), QStringLiteral("running"));

    m_actions->kill(name);
    QTRY_VERIFY2_WITH_TIMEOUT(m_log.contains(QStringLiteral("Kill ok busy")),
                              qPrintable(m_log.join(u'\n')), kStateTimeoutMs);
    QCOMPARE(helperState(name), QStringLiteral("stopped"));
    m_actions->remove(name);
    QTRY_VERIFY2(m_log.contains(QStringLiteral("Delete ok busy")), qPrintable(m_log.join(u'\n')));
}

QTEST_GUILESS_MAIN(TestSandboxActions)
#include "tst_sandboxactions.moc"
