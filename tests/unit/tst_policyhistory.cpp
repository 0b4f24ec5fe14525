#include "core/daemon/policyhistory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace airlock;

namespace {

EgressPolicy policyOf(const QStringList &hosts)
{
    EgressPolicy policy;
    for (const QString &host : hosts)
        policy.rules.append(EgressRule {host});
    return policy;
}

QStringList hostsOf(const QJsonValue &rules)
{
    QStringList hosts;
    for (const QJsonValue &rule : rules.toArray())
        hosts.append(rule.toObject().value(QStringLiteral("host")).toString());
    return hosts;
}

} // namespace

/// PolicyHistory on its own: the record's lines, the diff, rotation and what a crash leaves.
class TestPolicyHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordsChangesNewestFirst();
    void diffCountsDuplicates();
    void rotationBoundsTheRecord();
    void aCutLineIsSkipped();
    void removeForgets();

private:
    QTemporaryDir m_dir;
};

void TestPolicyHistory::recordsChangesNewestFirst()
{
    PolicyHistory history(m_dir.filePath(QStringLiteral("a")));
    const EgressPolicy empty;
    const EgressPolicy one = policyOf({QStringLiteral("a.test")});
    const EgressPolicy two = policyOf({QStringLiteral("a.test"), QStringLiteral("b.test")});
    const QDateTime at =
        QDateTime::fromString(QStringLiteral("2026-12-04T05:00:00.000Z"), Qt::ISODateWithMs);
    QVERIFY(history.append(QStringLiteral("box"), empty, one,
                           PolicyChangeOrigin {::getuid(), QStringLiteral("editor")}, at));
    // No change, no line.
    QVERIFY(history.append(QStringLiteral("box"), one, one, PolicyChangeOrigin {}, at));
    QVERIFY(history.append(QStringLiteral("box"), one, two,
                           PolicyChangeOrigin {std::nullopt, QStringLiteral("fork")}, at));
    const QJsonArray entries = history.entries(QStringLiteral("box"), 10);
    QCOMPARE(entries.size(), 2);
    const QJsonObject newest = entries.at(0).toObject();
    const QJsonObject oldest = entries.at(1).toObject();
    QCOMPARE(newest.value(QStringLiteral("seq")).toInteger(), 2);
    QCOMPARE(newest.value(QStringLiteral("uid")), QJsonValue());
    QCOMPARE(newest.value(QStringLiteral("user")).toString(), QStringLiteral("airlockd"));
    QCOMPARE(newest.value(QStringLiteral("source")).toString(), QStringLiteral("fork"));
    QCOMPARE(hostsOf(newest.value(QStringLiteral("added"))),
             QStringList {QStringLiteral("b.test")});
    QCOMPARE(newest.value(QStringLiteral("oldRevision")).toString(), one.revision());
    QCOMPARE(newest.value(QStringLiteral("newRevision")).toString(), two.revision());
    QCOMPARE(
        hostsOf(newest.value(QStringLiteral("policy")).toObject().value(QStringLiteral("rules"))),
        (QStringList {QStringLiteral("a.test"), QStringLiteral("b.test")}));
    QCOMPARE(oldest.value(QStringLiteral("uid")).toInteger(), qint64(::getuid()));
    QCOMPARE(oldest.value(QStringLiteral("time")).toString(),
             QStringLiteral("2026-12-04T05:00:00.000Z"));
    QCOMPARE(oldest.value(QStringLiteral("oldRevision")).toString(), empty.revision());
    QCOMPARE(history.entries(QStringLiteral("box"), 1).size(), 1);
    QCOMPARE(history.entries(QStringLiteral("other"), 10).size(), 0);
    // A new instance (a restarted helper) goes on counting.
    PolicyHistory again(m_dir.filePath(QStringLiteral("a")));
    QVERIFY(again.append(QStringLiteral("box"), two, empty, PolicyChangeOrigin {}));
    QCOMPARE(again.entries(QStringLiteral("box"), 1)
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("seq"))
                 .toInteger(),
             3);
    QCOMPARE(QFileInfo(m_dir.filePath(QStringLiteral("a"))).permissions() & QFileDevice::ReadOther,
             QFileDevice::Permissions());
}

void TestPolicyHistory::diffCountsDuplicates()
{
    const EgressRule a {QStringLiteral("a.test")};
    const EgressRule b {QStringLiteral("b.test")};
    EgressRule commented = a;
    commented.comment = QStringLiteral("why");
    const auto [added, removed] =
        PolicyHistory::diff(EgressPolicy {{a, a, b}}, EgressPolicy {{a, commented, b, b}});
    // One of the two a's became a commented a (removed + added), b was doubled.
    QCOMPARE(added, (QList<EgressRule> {commented, b}));
    QCOMPARE(removed, QList<EgressRule> {a});
}

void TestPolicyHistory::rotationBoundsTheRecord()
{
    PolicyHistory history(m_dir.filePath(QStringLiteral("b")));
    // Policies of ~40 rules: each line a few KiB, so a few hundred lines rotate twice.
    EgressPolicy before;
    for (int i = 0; i < 400; ++i) {
        EgressPolicy after = before;
        if (after.rules.size() >= 40)
            after.rules.removeFirst();
        after.rules.append(EgressRule {QStringLiteral("host-%1.test").arg(i)});
        QVERIFY(history.append(QStringLiteral("big"), before, after, PolicyChangeOrigin {}));
        before = after;
        QVERIFY(QFileInfo(history.filePath(QStringLiteral("big"))).size()
                <= PolicyHistory::kFileBytes);
    }
    QVERIFY(QFile::exists(history.rotatedFilePath(QStringLiteral("big"))));
    QVERIFY(QFileInfo(history.rotatedFilePath(QStringLiteral("big"))).size()
            <= PolicyHistory::kFileBytes);
    // The newest are kept, in order, numbered on; the oldest went with the rotation.
    const QJsonArray entries = history.entries(QStringLiteral("big"), PolicyHistory::kMaxLimit);
    QVERIFY(entries.size() > 50 && entries.size() < 400);
    QCOMPARE(entries.at(0).toObject().value(QStringLiteral("seq")).toInteger(), 400);
    for (qsizetype i = 1; i < entries.size(); ++i)
        QCOMPARE(entries.at(i).toObject().value(QStringLiteral("seq")).toInteger(),
                 entries.at(i - 1).toObject().value(QStringLiteral("seq")).toInteger() - 1);
}

void TestPolicyHistory::aCutLineIsSkipped()
{
    PolicyHistory history(m_dir.filePath(QStringLiteral("c")));
    QVERIFY(history.append(QStringLiteral("cut"), {}, policyOf({QStringLiteral("a.test")}),
                           PolicyChangeOrigin {}));
    // A crash in the middle of the next line.
    QFile file(history.filePath(QStringLiteral("cut")));
    QVERIFY(file.open(QIODevice::Append));
    file.write(R"({"seq":2,"time":"2026-)");
    file.close();
    QCOMPARE(history.entries(QStringLiteral("cut"), 10).size(), 1);
    PolicyHistory after(m_dir.filePath(QStringLiteral("c")));
    QVERIFY(after.append(QStringLiteral("cut"), policyOf({QStringLiteral("a.test")}), {},
                         PolicyChangeOrigin {}));
    const QJsonArray entries = after.entries(QStringLiteral("cut"), 10);
    QCOMPARE(entries.size(), 2);
    QCOMPARE(entries.at(0).toObject().value(QStringLiteral("seq")).toInteger(), 2);
}

void TestPolicyHistory::removeForgets()
{
    PolicyHistory history(m_dir.filePath(QStringLiteral("d")));
    QVERIFY(history.append(QStringLiteral("gone"), {}, policyOf({QStringLiteral("a.test")}),
                           PolicyChangeOrigin {}));
    history.remove(QStringLiteral("gone"));
    QVERIFY(!QFile::exists(history.filePath(QStringLiteral("gone"))));
    QCOMPARE(history.entries(QStringLiteral("gone"), 10).size(), 0);
    QVERIFY(history.append(QStringLiteral("gone"), {}, policyOf({QStringLiteral("b.test")}),
                           PolicyChangeOrigin {}));
    QCOMPARE(history.entries(QStringLiteral("gone"), 10)
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("seq"))
                 .toInteger(),
             1);
}

QTEST_GUILESS_MAIN(TestPolicyHistory)
#include "tst_policyhistory.moc"
