// HelperClient and LocalSocketTransport against a QLocalServer that each test scripts: the real
// client code on a real Unix socket, with the helper's side played by the test.

#include "core/client/consolestream.h"
#include "core/client/helperclient.h"
#include "core/client/helperstartadvice.h"
#include "core/client/localsockettransport.h"
#include "core/protocol/message.h"
#include "eventloop.h"
#include "resultcheck.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalServer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <cstring>
#include <functional>
#include <memory>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace airlock;

namespace {

/// Plays airlockd: answers hello, hands every other request to `onRequest`.
class ScriptedHelper : public QObject
{
    Q_OBJECT
public:
    using Handler = std::function<void(QLocalSocket *, const QJsonObject &)>;

    explicit ScriptedHelper(const QString &path) : m_path(path)
    {
        connect(&m_server, &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *socket = m_server.nextPendingConnection()) {
                m_sockets.append(socket);
                connect(socket, &QLocalSocket::readyRead, this, [this, socket] { read(socket); });
                if (onConnection)
                    onConnection(socket);
            }
        });
    }

    bool listen() { return m_server.listen(m_path); }
    void stop()
    {
        m_server.close();
        for (QLocalSocket *socket : std::as_const(m_sockets))
            socket->abort();
        m_sockets.clear();
    }
    QLocalSocket *lastSocket() const { return m_sockets.isEmpty() ? nullptr : m_sockets.last(); }

    static void send(QLocalSocket *socket, const QByteArray &bytes)
    {
        socket->write(bytes);
        socket->flush();
    }

    Handler onRequest;
    std::function<void(QLocalSocket *)> onConnection;
    QList<QJsonObject> received;
    bool answerHello = true;

private:
    void read(QLocalSocket *socket)
    {
        while (socket->canReadLine()) {
            const QByteArray line = socket->readLine().trimmed();
            const QJsonObject message = QJsonDocument::fromJson(line).object();
            received.append(message);
            if (message.value(QStringLiteral("method")) == QStringLiteral("hello")) {
                if (answerHello)
                    send(
                        socket,
                        protocol::encodeResult(
                            message.value(QStringLiteral("id")),
                            QJsonObject {{QStringLiteral("protocol"), 1},
                                         {QStringLiteral("helper"), QStringLiteral("test")},
                                         {QStringLiteral("acceleration"), QStringLiteral("tcg")}}));
                continue;
            }
            if (onRequest)
                onRequest(socket, message);
        }
    }

    QString m_path;
    QLocalServer m_server;
    QList<QLocalSocket *> m_sockets;
};

QJsonValue idOf(const QJsonObject &message)
{
    return message.value(QStringLiteral("id"));
}

} // namespace

class TestHelperClient : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_path = m_dir->filePath(QStringLiteral("airlockd.sock"));
        m_helper = std::make_unique<ScriptedHelper>(m_path);
    }

    void cleanup()
    {
        m_client.reset();
        m_helper.reset();
        m_dir.reset();
    }

    void helloIsSentFirstAndStored()
    {
        QVERIFY(m_helper->listen());
        makeClient();
        QSignalSpy ready(m_client.get(), &HelperClient::ready);
        const Result<void> connected = m_client->connectSync(5000);
        QVERIFY_RESULT(connected);
        QCOMPARE(m_client->state(), HelperClient::State::Ready);
        QCOMPARE(ready.count(), 1);
        QCOMPARE(m_helper->received.size(), 1);
        const QJsonObject hello = m_helper->received.first();
        QCOMPARE(hello.value(QStringLiteral("method")).toString(), QStringLiteral("hello"));
        const QJsonObject params = hello.value(QStringLiteral("params")).toObject();
        QCOMPARE(params.value(QStringLiteral("protocol")).toInt(), 1);
        QCOMPARE(params.value(QStringLiteral("client")).toString(), QStringLiteral("tst"));
        QCOMPARE(m_client->helloResult().value(QStringLiteral("acceleration")).toString(),
                 QStringLiteral("tcg"));
        QCOMPARE(m_client->transportDescription(), QStringLiteral("local helper at ") + m_path);
    }

    void answersAreMatchedById()
    {
        QVERIFY(m_helper->listen());
        // Answer the two calls in reverse order: each callback must still get its own result.
        QList<QJsonObject> held;
        m_helper->onRequest = [&held](QLocalSocket *socket, const QJsonObject &message) {
            held.append(message);
            if (held.size() < 2)
                return;
            for (auto it = held.crbegin(); it != held.crend(); ++it)
                ScriptedHelper::send(
                    socket,
                    protocol::encodeResult(idOf(*it),
                                           QJsonObject {{QStringLiteral("echo"),
                                                         it->value(QStringLiteral("method"))}}));
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        QString first;
        QString second;
        m_client->call(QStringLiteral("sandbox.list"), {}, [&](const Result<QJsonValue> &r) {
            first = r->toObject().value(QStringLiteral("echo")).toString();
        });
        m_client->call(QStringLiteral("image.list"), {}, [&](const Result<QJsonValue> &r) {
            second = r->toObject().value(QStringLiteral("echo")).toString();
        });
        QTRY_VERIFY(!first.isEmpty() && !second.isEmpty());
        QCOMPARE(first, QStringLiteral("sandbox.list"));
        QCOMPARE(second, QStringLiteral("image.list"));
    }

    void errorAnswerCarriesKindAndMessage()
    {
        QVERIFY(m_helper->listen());
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &message) {
            ScriptedHelper::send(
                socket,
                protocol::encodeError(
                    idOf(message),
                    Error {ErrorKind::NotFound, QStringLiteral("sandbox 'x' not found")}));
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        const Result<QJsonValue> result = m_client->callSync(
            QStringLiteral("sandbox.get"), {{QStringLiteral("name"), QStringLiteral("x")}});
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::NotFound);
        QCOMPARE(result.error().message, QStringLiteral("sandbox 'x' not found"));
        // The connection survives an error answer.
        QCOMPARE(m_client->state(), HelperClient::State::Ready);
    }

    void permissionDeniedIsReportedAsSuch()
    {
        QVERIFY(m_helper->listen());
        m_helper->answerHello = false;
        const QString why = QStringLiteral("uid 1000 is not in group airlock: usermod -aG airlock");
        m_helper->onConnection = [why](QLocalSocket *socket) {
            ScriptedHelper::send(socket,
                                 protocol::encodeError(QJsonValue(QJsonValue::Null),
                                                       Error {ErrorKind::PermissionDenied, why}));
            socket->disconnectFromServer();
        };
        makeClient();
        QSignalSpy lost(m_client.get(), &HelperClient::connectionLost);
        bool callFailed = false;
        m_client->connectToHelper();
        m_client->call(QStringLiteral("sandbox.list"), {}, [&](const Result<QJsonValue> &r) {
            callFailed = !r.has_value() && r.error().kind == ErrorKind::Disconnected;
        });
        QTRY_COMPARE(lost.count(), 1);
        const Error error = lost.first().first().value<Error>();
        QCOMPARE(error.kind, ErrorKind::PermissionDenied);
        QCOMPARE(error.message, why);
        QVERIFY(callFailed);
        QCOMPARE(m_client->state(), HelperClient::State::Disconnected);

        // connectSync reports the same.
        const Result<void> again = m_client->connectSync(5000);
        QVERIFY(!again.has_value());
        QCOMPARE(again.error().kind, ErrorKind::PermissionDenied);
    }

    void unansweredCallTimesOut()
    {
        QVERIFY(m_helper->listen());
        QJsonValue lateId;
        m_helper->onRequest = [&lateId](QLocalSocket *, const QJsonObject &message) {
            lateId = idOf(message);
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        // Not before the 300 ms asked for: a 250 ms timer started first fires during the wait
        // (coarse timers may fire 5% early). The kind says the timeout ended it.
        QObject context;
        bool waiting = true;
        bool earlierTimerFired = false;
        QTimer::singleShot(250, Qt::PreciseTimer, &context, [&] { earlierTimerFired = waiting; });
        const Result<QJsonValue> result =
            m_client->callSync(QStringLiteral("sandbox.list"), {}, 300);
        waiting = false;
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::Timeout);
        QVERIFY(result.error().message.contains(QStringLiteral("sandbox.list")));
        QVERIFY(earlierTimerFired);
        // A late answer is dropped, and the connection keeps working.
        QVERIFY(!lateId.isUndefined());
        ScriptedHelper::send(m_helper->lastSocket(),
                             protocol::encodeResult(lateId, QJsonObject {}));
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &message) {
            ScriptedHelper::send(socket, protocol::encodeResult(idOf(message), QJsonObject {}));
        };
        QVERIFY(m_client->callSync(QStringLiteral("sandbox.list"), {}, 3000).has_value());
    }

    void serverCloseFailsPendingCalls()
    {
        QVERIFY(m_helper->listen());
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &) {
            socket->disconnectFromServer();
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        QSignalSpy lost(m_client.get(), &HelperClient::connectionLost);
        const Result<QJsonValue> result = m_client->callSync(QStringLiteral("sandbox.list"), {});
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::Disconnected);
        QCOMPARE(lost.count(), 1);
        QCOMPARE(lost.first().first().value<Error>().kind, ErrorKind::Disconnected);
        QCOMPARE(m_client->state(), HelperClient::State::Disconnected);
        // Later calls fail at once rather than hang.
        const Result<QJsonValue> after = m_client->callSync(QStringLiteral("sandbox.list"), {});
        QCOMPARE(after.error().kind, ErrorKind::Disconnected);
    }

    void notificationsAreEmitted()
    {
        QVERIFY(m_helper->listen());
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        QSignalSpy notes(m_client.get(), &HelperClient::notificationReceived);
        ScriptedHelper::send(m_helper->lastSocket(),
                             protocol::encodeNotification(
                                 QStringLiteral("sandbox.removed"),
                                 QJsonObject {{QStringLiteral("name"), QStringLiteral("demo")}}));
        QTRY_COMPARE(notes.count(), 1);
        QCOMPARE(notes.first().at(0).toString(), QStringLiteral("sandbox.removed"));
        QCOMPARE(notes.first().at(1).toJsonObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("demo"));
    }

    void callsBeforeReadyAreQueued()
    {
        QVERIFY(m_helper->listen());
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &message) {
            ScriptedHelper::send(socket, protocol::encodeResult(idOf(message), QJsonObject {}));
        };
        makeClient();
        m_client->connectToHelper();
        QCOMPARE(m_client->state(), HelperClient::State::Connecting);
        bool answered = false;
        m_client->call(QStringLiteral("events.subscribe"), {},
                       [&](const Result<QJsonValue> &r) { answered = r.has_value(); });
        QTRY_VERIFY(answered);
        QCOMPARE(m_helper->received.size(), 2);
        QCOMPARE(m_helper->received.at(0).value(QStringLiteral("method")).toString(),
                 QStringLiteral("hello"));
        QCOMPARE(m_helper->received.at(1).value(QStringLiteral("method")).toString(),
                 QStringLiteral("events.subscribe"));
    }

    void missingSocketSaysHowToStartTheHelper()
    {
        makeClient();
        const Result<void> result = m_client->connectSync(5000);
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::Disconnected);
        QCOMPARE(result.error().message,
                 QStringLiteral("airlockd is not running: no socket at %1 (start it with: %2)")
                     .arg(m_path, HelperStartAdvice::command(m_path)));
    }

    void startAdviceNamesSystemctlOnlyWithTheUnit()
    {
        // Issue 17: a build tree has no airlockd.service; systemctl advice there is wrong.
        QTemporaryDir units;
        QVERIFY(units.isValid());
        QVERIFY(!HelperStartAdvice::hasSystemdUnit({units.path()}));
        const QString byHand = HelperStartAdvice::command(m_path, {units.path()});
        QVERIFY2(!byHand.contains(QStringLiteral("systemctl")), qPrintable(byHand));
        QVERIFY2(byHand.contains(QStringLiteral("run-demo.sh")), qPrintable(byHand));
        QVERIFY2(byHand.contains(QStringLiteral("airlockd --socket ") + m_path),
                 qPrintable(byHand));
        QVERIFY2(!HelperStartAdvice::command(QStringLiteral("/run/airlock/airlockd.sock"),
                                             {units.path()})
                      .contains(QStringLiteral("--socket")),
                 "the default socket needs no --socket");
        QFile unit(units.filePath(QStringLiteral("airlockd.service")));
        QVERIFY(unit.open(QIODevice::WriteOnly));
        unit.close();
        QVERIFY(HelperStartAdvice::hasSystemdUnit({units.path()}));
        QCOMPARE(HelperStartAdvice::command(m_path, {units.path()}),
                 QStringLiteral("sudo systemctl start airlockd"));
    }

    void refusedSocketIsPermissionDenied()
    {
        // A real EACCES from connect(2): the socket is root's 0600, and we are somebody else
        // (root passes every permission check, so a root test takes another effective uid).
        QVERIFY(m_helper->listen());
        uid_t stranger = ::geteuid();
        if (stranger == 0) {
            stranger = 65534;
            QVERIFY(::chmod(QFile::encodeName(m_dir->path()).constData(), 0711) == 0);
        }
        QVERIFY(::chmod(QFile::encodeName(m_path).constData(), 0) == 0);
        makeClient();
        QVERIFY(::seteuid(stranger) == 0);
        const Result<void> result = m_client->connectSync(5000);
        QVERIFY(::seteuid(0) == 0 || ::geteuid() == stranger);
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::PermissionDenied);
        QVERIFY2(result.error().message.contains(QStringLiteral("usermod -aG airlock")),
                 qPrintable(result.error().message));
        QVERIFY2(!result.error().message.contains(QStringLiteral("systemctl")),
                 qPrintable(result.error().message));
    }

    void connectErrorReasons_data()
    {
        QTest::addColumn<int>("error");
        QTest::addColumn<QString>("expected");
        QTest::newRow("access") << int(QLocalSocket::SocketAccessError)
                                << QStringLiteral("permission denied on /s: add yourself to the "
                                                  "airlock group (sudo usermod -aG airlock $USER) "
                                                  "and log in again");
        QTest::newRow("refused") << int(QLocalSocket::ConnectionRefusedError)
                                 << QStringLiteral("airlockd is not running: nothing accepts "
                                                   "connections on /s (start it with: %1)")
                                        .arg(HelperStartAdvice::command(QStringLiteral("/s")));
        QTest::newRow("other") << int(QLocalSocket::UnknownSocketError)
                               << QStringLiteral("cannot connect to the helper at /s: boom");
    }

    void connectErrorReasons()
    {
        QFETCH(int, error);
        QFETCH(QString, expected);
        QCOMPARE(LocalSocketTransport::connectErrorReason(QLocalSocket::LocalSocketError(error),
                                                          QStringLiteral("/s"),
                                                          QStringLiteral("boom")),
                 expected);
    }

    void staleSocketFileIsRefused()
    {
        // A socket file left behind by a dead helper: bound, but nobody listens.
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        QVERIFY(fd >= 0);
        sockaddr_un address {};
        address.sun_family = AF_UNIX;
        const QByteArray path = QFile::encodeName(m_path);
        std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        ::close(fd);
        QVERIFY(QFileInfo::exists(m_path));
        makeClient();
        const Result<void> result = m_client->connectSync(5000);
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().message,
                 QStringLiteral("airlockd is not running: nothing accepts connections on %1 "
                                "(start it with: %2)")
                     .arg(m_path, HelperStartAdvice::command(m_path)));
    }

    void oversizedMessageFromHelperDropsTheConnection()
    {
        QVERIFY(m_helper->listen());
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &) {
            ScriptedHelper::send(socket, QByteArray(1024 * 1024 + 10, 'x'));
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        QSignalSpy lost(m_client.get(), &HelperClient::connectionLost);
        const Result<QJsonValue> result = m_client->callSync(QStringLiteral("sandbox.list"), {});
        QCOMPARE(result.error().kind, ErrorKind::Disconnected);
        QCOMPARE(lost.count(), 1);
        QCOMPARE(lost.first().first().value<Error>().kind, ErrorKind::MessageTooLarge);
    }

    void helloErrorIsConnectionLost()
    {
        QVERIFY(m_helper->listen());
        m_helper->answerHello = false;
        m_helper->onConnection = [this](QLocalSocket *socket) {
            connect(socket, &QLocalSocket::readyRead, this, [socket] {
                // The ScriptedHelper reader consumed the line; answer whatever id hello had.
                ScriptedHelper::send(
                    socket,
                    protocol::encodeError(QJsonValue(1),
                                          Error {ErrorKind::InvalidRequest,
                                                 QStringLiteral("protocol 1 unsupported")}));
            });
        };
        makeClient();
        const Result<void> result = m_client->connectSync(5000);
        QVERIFY(!result.has_value());
        QCOMPARE(result.error().kind, ErrorKind::InvalidRequest);
    }

    void reconnectsAfterTheHelperRestarts()
    {
        QVERIFY(m_helper->listen());
        makeClient();
        m_client->setAutoReconnect(true);
        m_client->setReconnectBackoff(20, 80);
        QSignalSpy ready(m_client.get(), &HelperClient::ready);
        QSignalSpy lost(m_client.get(), &HelperClient::connectionLost);
        QVERIFY(m_client->connectSync(5000).has_value());
        QCOMPARE(ready.count(), 1);

        m_helper->stop(); // the helper goes away...
        QTRY_VERIFY(lost.count() >= 1);
        QCOMPARE(m_client->state(), HelperClient::State::Disconnected);
        // ...a few attempts fail with "no socket" while it is gone, each one later than the last
        // (20, 40, then 80 ms: the backoff doubles up to its cap)...
        QTRY_VERIFY(lost.count() >= 4);
        QCOMPARE(m_client->scheduledReconnectMs(), 80);
        QVERIFY(m_helper->listen()); // ...and comes back: the client finds it without help.
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 15000);
        QCOMPARE(m_client->state(), HelperClient::State::Ready);
        m_helper->onRequest = [](QLocalSocket *socket, const QJsonObject &message) {
            ScriptedHelper::send(socket, protocol::encodeResult(idOf(message), QJsonObject {}));
        };
        QVERIFY(m_client->callSync(QStringLiteral("sandbox.list"), {}).has_value());

        // An explicit disconnect stops the retries: none is scheduled.
        m_client->disconnectFromHelper();
        const int readyBefore = ready.count();
        QCOMPARE(m_client->scheduledReconnectMs(), -1);
        QVERIFY(airlock::test::runUntilIdle());
        QCOMPARE(ready.count(), readyBefore);
        QCOMPARE(m_client->state(), HelperClient::State::Disconnected);
    }

    void consoleStreamReplaysThenStreamsWithoutDuplicates()
    {
        QVERIFY(m_helper->listen());
        QList<QByteArray> written;
        m_helper->onRequest = [&written](QLocalSocket *socket, const QJsonObject &message) {
            const QString method = message.value(QStringLiteral("method")).toString();
            const QJsonObject params = message.value(QStringLiteral("params")).toObject();
            if (method == QStringLiteral("console.attach")) {
                // A live chunk that races the answer and is already inside the replay (seq 2),
                // then the answer, then a new chunk.
                const auto output = [socket](int seq, const char *text) {
                    ScriptedHelper::send(
                        socket,
                        protocol::encodeNotification(
                            QStringLiteral("console.output"),
                            QJsonObject {{QStringLiteral("sandbox"), QStringLiteral("demo")},
                                         {QStringLiteral("seq"), seq},
                                         {QStringLiteral("data"),
                                          QString::fromLatin1(QByteArray(text).toBase64())}}));
                };
                output(2, "two");
                ScriptedHelper::send(
                    socket,
                    protocol::encodeResult(
                        idOf(message),
                        QJsonObject {{QStringLiteral("sandbox"), QStringLiteral("demo")},
                                     {QStringLiteral("seq"), 2},
                                     {QStringLiteral("data"),
                                      QString::fromLatin1(QByteArray("onetwo").toBase64())}}));
                output(3, "three");
            } else if (method == QStringLiteral("console.write")) {
                written.append(QByteArray::fromBase64(
                    params.value(QStringLiteral("data")).toString().toLatin1()));
                ScriptedHelper::send(socket, protocol::encodeResult(idOf(message), QJsonObject {}));
            }
        };
        makeClient();
        QVERIFY(m_client->connectSync(5000).has_value());
        ConsoleStream stream(m_client.get(), QStringLiteral("demo"));
        QByteArray seen;
        connect(&stream, &ConsoleStream::output, this,
                [&seen](const QByteArray &bytes) { seen += bytes; });
        stream.attach();
        QTRY_COMPARE(seen, QByteArray("onetwothree"));
        QVERIFY(stream.isAttached());

        const QByteArray big(ConsoleStream::kMaxWriteBytes + 5, 'k');
        stream.write(big);
        QTRY_COMPARE(written.size(), 2);
        QCOMPARE(written.at(0).size(), ConsoleStream::kMaxWriteBytes);
        QCOMPARE(written.at(0) + written.at(1), big);
    }

private:
    void makeClient()
    {
        m_client = std::make_unique<HelperClient>(std::make_unique<LocalSocketTransport>(m_path),
                                                  QStringLiteral("tst"));
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
    std::unique_ptr<ScriptedHelper> m_helper;
    std::unique_ptr<HelperClient> m_client;
};

QTEST_GUILESS_MAIN(TestHelperClient)
#include "tst_helperclient.moc"
