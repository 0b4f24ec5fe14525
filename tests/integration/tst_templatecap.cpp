// At most --templates-max templates are kept; beyond that the least recently used goes, with
// its memory cache in tmpfs (docs/reviews/2026-12-01-newuser-pass.md#m4: any group member could
// make the helper keep one template per shape). Real airlockd, real template guests (TCG).

#include "helperprocess.h"
#include "rpctestclient.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

class TestTemplateCap : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void leastRecentlyUsedTemplateGoes();

private:
    /// template.prepare for `memoryMib`, then waits until it is listed; its id or "".
    QString prepare(int memoryMib);
    /// memoryMib → id of every listed template.
    QMap<int, QString> templates();
    QString cachePath(const QString &id) const;

    std::unique_ptr<HelperProcess> m_helper;
};

void TestTemplateCap::initTestCase()
{
    m_helper = std::make_unique<HelperProcess>(
        QStringList {QStringLiteral("--templates-max"), QStringLiteral("2")});
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
}

void TestTemplateCap::cleanupTestCase()
{
    m_helper.reset();
}

QMap<int, QString> TestTemplateCap::templates()
{
    RpcTestClient client(m_helper->socketPath());
    QMap<int, QString> made;
    const QJsonArray all = RpcTestClient::result(client.call(QStringLiteral("template.list")))
                               .value(QStringLiteral("templates"))
                               .toArray();
    for (const QJsonValue &value : all) {
        const QJsonObject object = value.toObject();
        made.insert(object.value(QStringLiteral("memoryMib")).toInt(),
                    object.value(QStringLiteral("id")).toString());
    }
    return made;
}

QString TestTemplateCap::prepare(int memoryMib)
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer =
        client.call(QStringLiteral("template.prepare"), {{QStringLiteral("memoryMib"), memoryMib}});
    if (!answer.contains(QStringLiteral("result"))) {
        qWarning("%s", QJsonDocument(answer).toJson().constData());
        return {};
    }
    QString id;
    // Empty when the template never appeared: the caller's assertion on the id fails then.
    if (!QTest::qWaitFor([&] { return !(id = templates().value(memoryMib)).isEmpty(); }, 180000))
        qWarning("no template of %d MiB after 180 s", memoryMib);
    return id;
}

QString TestTemplateCap::cachePath(const QString &id) const
{
    const QByteArray hash = QCryptographicHash::hash(
        QFile::encodeName(QDir(m_helper->stateDir()).absolutePath()), QCryptographicHash::Sha256);
    return QStringLiteral("/dev/shm/airlock-%1/.template-%2.ram")
        .arg(QString::fromLatin1(hash.toHex().left(12)), id);
}

void TestTemplateCap::leastRecentlyUsedTemplateGoes()
{
    const QString first = prepare(128);
    QVERIFY(!first.isEmpty());
    const QString second = prepare(160);
    QVERIFY(!second.isEmpty());
    QCOMPARE(templates().size(), 2);

    // A start from the older one makes it the more recently used.
    RpcTestClient client(m_helper->socketPath());
    QVERIFY(client
                .call(QStringLiteral("sandbox.create"),
                      {{QStringLiteral("name"), QStringLiteral("user")},
                       {QStringLiteral("memoryMib"), 128}})
                .contains(QStringLiteral("result")));
    const QJsonObject started = RpcTestClient::result(
        client.call(QStringLiteral("sandbox.start"),
                    {{QStringLiteral("name"), QStringLiteral("user")}}, 60000));
    QCOMPARE(started.value(QStringLiteral("startedFrom")).toString(), QStringLiteral("template"));
    QVERIFY(QFileInfo::exists(cachePath(first)));

    // A third shape: the cap is 2, and the 160 MiB template was used least recently.
    const QString third = prepare(192);
    QVERIFY(!third.isEmpty());
    const QMap<int, QString> kept = templates();
    QCOMPARE(kept.size(), 2);
    QCOMPARE(kept.value(128), first);
    QCOMPARE(kept.value(192), third);
    QVERIFY(!QFileInfo::exists(cachePath(second)));
}

QTEST_GUILESS_MAIN(TestTemplateCap)
#include "tst_templatecap.moc"
