// Where airlockd finds airlock-gateway without --gateway (core/daemon/gatewayprogram.h):
// beside itself, in a build tree's layout, else the package's libexec dir.
#include "core/daemon/gatewayprogram.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace airlock;
using namespace Qt::Literals::StringLiterals;

namespace {

bool makeFile(const QString &path, QFile::Permissions permissions)
{
    if (!QDir().mkpath(QFileInfo(path).absolutePath()))
        return false;
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write("#!/bin/sh\n");
    file.close();
    return file.setPermissions(permissions);
}

const QFile::Permissions kExecutable =
    QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup;
const QFile::Permissions kNotExecutable = QFile::ReadOwner | QFile::WriteOwner;

} // namespace

class TestGatewayProgram : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void besideTheHelper();
    void buildTreeLayout();
    void besideWinsOverBuildTree();
    void libexecWhenNeitherExists();
    void nonExecutableAndDirectoriesDoNotCount();
};

void TestGatewayProgram::besideTheHelper()
{
    QTemporaryDir root;
    const QString bin = root.filePath(u"sbin"_s);
    QVERIFY(makeFile(bin + u"/airlock-gateway"_s, kExecutable));
    QCOMPARE(locateGatewayProgram(bin, u"/usr/lib/airlock"_s),
             QFileInfo(bin + u"/airlock-gateway"_s).canonicalFilePath());
}

void TestGatewayProgram::buildTreeLayout()
{
    QTemporaryDir root;
    const QString helperDir = root.filePath(u"app/airlockd"_s);
    QVERIFY(QDir().mkpath(helperDir));
    const QString gateway = root.filePath(u"app/airlock-gateway/airlock-gateway"_s);
    QVERIFY(makeFile(gateway, kExecutable));
    // Canonical: no "airlockd/.." left in the path the helper logs and execs.
    QCOMPARE(locateGatewayProgram(helperDir, u"/usr/lib/airlock"_s),
             QFileInfo(gateway).canonicalFilePath());
}

void TestGatewayProgram::besideWinsOverBuildTree()
{
    QTemporaryDir root;
    const QString helperDir = root.filePath(u"app/airlockd"_s);
    QVERIFY(makeFile(helperDir + u"/airlock-gateway"_s, kExecutable));
    QVERIFY(makeFile(root.filePath(u"app/airlock-gateway/airlock-gateway"_s), kExecutable));
    QCOMPARE(locateGatewayProgram(helperDir, u"/usr/lib/airlock"_s),
             QFileInfo(helperDir + u"/airlock-gateway"_s).canonicalFilePath());
}

void TestGatewayProgram::libexecWhenNeitherExists()
{
    QTemporaryDir root;
    QCOMPARE(locateGatewayProgram(root.path(), u"/usr/lib/airlock"_s),
             u"/usr/lib/airlock/airlock-gateway"_s);
}

void TestGatewayProgram::nonExecutableAndDirectoriesDoNotCount()
{
    QTemporaryDir root;
    const QString helperDir = root.filePath(u"app/airlockd"_s);
    QVERIFY(makeFile(helperDir + u"/airlock-gateway"_s, kNotExecutable));
    // A directory of that name is executable (searchable) but not a program.
    QVERIFY(QDir().mkpath(root.filePath(u"app/airlock-gateway/airlock-gateway"_s)));
    QCOMPARE(locateGatewayProgram(helperDir, u"/opt/airlock/lib"_s),
             u"/opt/airlock/lib/airlock-gateway"_s);
}

QTEST_GUILESS_MAIN(TestGatewayProgram)
#include "tst_gatewayprogram.moc"
