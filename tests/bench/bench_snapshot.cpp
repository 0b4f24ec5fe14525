// Snapshot benchmark through a real airlockd and a TCG guest (docs/snapshots.md), all measured
// in one run: cold boot to a console answer (the baseline), snapshot pause time, restore to a
// console answer, fork (a new sandbox started from a snapshot of a booted guest) to a console
// answer, template start (sandbox.start of a new sandbox from the image's template, identity
// refresh included) to a console answer, and the bytes each snapshot stores against a plain
// full copy of the guest. Prints the figures and ratios (targets: template start at most 0.2 of
// a cold boot; a snapshot after dirtying N MiB stores at most 1.25 x N MiB). With --image debian
// (an image with a root disk, which always boots cold) the snapshot after writing N MiB to the
// disk instead of the template start.
//
//     build/tests/bench/bench_snapshot [--dirty MIB] [--image ID]

#include "helperprocess.h"
#include "rpctestclient.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QThread>

#include <cstdio>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

QJsonObject named(const QString &name)
{
    return {{QStringLiteral("name"), name}};
}

/// Attaches to `sandbox`'s console and waits until the guest answers a command; ms, or -1.
double answerAfter(const QString &socket, const QString &sandbox, const QElapsedTimer &since,
                   const QByteArray &command = {})
{
    RpcTestClient client(socket);
    client.call(QStringLiteral("console.attach"), named(sandbox));
    // A marker per call: lines typed into a booting guest may still be answered later.
    static int calls = 0;
    const QByteArray number = QByteArray::number(++calls * 100);
    const QByteArray answer = "R" + QByteArray::number(calls * 100 + 42) + "\r\n";
    QByteArray seen;
    QElapsedTimer retype;
    retype.start();
    const QByteArray line = "\n" + command + "echo R$((" + number + "+42))\n";
    client.call(QStringLiteral("console.write"),
                {{QStringLiteral("name"), sandbox},
                 {QStringLiteral("data"), QString::fromLatin1(line.toBase64())}});
    while (since.elapsed() < 180000) {
        auto n = client.waitForNotification(
            QStringLiteral("console.output"),
            [&](const QJsonObject &p) { return p.value(QStringLiteral("sandbox")) == sandbox; },
            200);
        if (n)
            seen += QByteArray::fromBase64(n->value(QStringLiteral("params"))
                                               .toObject()
                                               .value(QStringLiteral("data"))
                                               .toString()
                                               .toLatin1());
        if (seen.contains(answer))
            return double(since.elapsed());
        // A booting guest ignores input until its shell runs: type again now and then.
        if (retype.elapsed() > 500 && command.isEmpty()) {
            client.call(QStringLiteral("console.write"),
                        {{QStringLiteral("name"), sandbox},
                         {QStringLiteral("data"), QString::fromLatin1(line.toBase64())}});
            retype.restart();
        }
    }
    return -1;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption dirtyOption(QStringLiteral("dirty"),
                                         QStringLiteral("MiB the guest dirties between snapshots"),
                                         QStringLiteral("MIB"), QStringLiteral("32"));
    const QCommandLineOption imageOption(
        QStringLiteral("image"), QStringLiteral("image of the guest (one with a disk: debian)"),
        QStringLiteral("ID"), QStringLiteral("default"));
    parser.addOption(dirtyOption);
    parser.addOption(imageOption);
    parser.addHelpOption();
    parser.process(app);
    const int dirtyMiB = parser.value(dirtyOption).toInt();
    const QString image = parser.value(imageOption);

    qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_AIRLOCKD_PATH);
    HelperProcess helper;
    if (!helper.start()) {
        std::fprintf(stderr, "airlockd: %s\n", qPrintable(helper.lastError()));
        return 1;
    }
    const QString socket = helper.socketPath();
    RpcTestClient rpc(socket);
    const QString name = QStringLiteral("bench");
    QJsonObject spec = named(name);
    spec.insert(QStringLiteral("image"), image);
    spec.insert(QStringLiteral("boot"), QStringLiteral("cold"));
    rpc.call(QStringLiteral("sandbox.create"), spec);

    QElapsedTimer timer;
    timer.start();
    rpc.call(QStringLiteral("sandbox.start"), named(name), 60000);
    const double coldMs = answerAfter(socket, name, timer);
    std::printf("cold boot to console answer:      %8.0f ms\n", coldMs);

    auto snapshot = [&](const QString &label) {
        return RpcTestClient::result(
            rpc.call(QStringLiteral("snapshot.create"),
                     {{QStringLiteral("name"), name}, {QStringLiteral("label"), label}}, 300000));
    };
    const QJsonObject first = snapshot(QStringLiteral("booted"));
    const double logical = double(first.value(QStringLiteral("logicalBytes")).toInteger());
    std::printf("first snapshot: paused %lld ms; stored %.1f MiB new (%.1f MiB compressed) "
                "of %.1f MiB\n",
                first.value(QStringLiteral("pauseMs")).toInteger(),
                first.value(QStringLiteral("newBytes")).toInteger() / 1048576.0,
                first.value(QStringLiteral("newStoredBytes")).toInteger() / 1048576.0,
                logical / 1048576.0);

    timer.restart();
    answerAfter(socket, name, timer,
                "dd if=/dev/urandom of=/dev/shm/bench bs=1M count=" + QByteArray::number(dirtyMiB)
                    + " 2>/dev/null; ");
    const QJsonObject second = snapshot(QStringLiteral("dirtied"));
    const double added = double(second.value(QStringLiteral("newBytes")).toInteger());
    const double stored = double(second.value(QStringLiteral("newStoredBytes")).toInteger());
    std::printf("after dirtying %d MiB: paused %lld ms; added %.1f MiB (%.2f x dirtied), "
                "%.1f MiB compressed\n",
                dirtyMiB, second.value(QStringLiteral("pauseMs")).toInteger(), added / 1048576.0,
                added / (dirtyMiB * 1048576.0), stored / 1048576.0);
    std::printf("stored bytes vs a full copy:      %8.3f (uncompressed %.3f)\n", stored / logical,
                added / logical);
    if (image != u"default") {
        // Direct I/O, so the written data reaches the disk object and not the page cache.
        timer.restart();
        answerAfter(socket, name, timer,
                    "dd if=/dev/urandom of=/root/bench bs=1M oflag=direct count="
                        + QByteArray::number(dirtyMiB) + " 2>/dev/null; sync; ");
        const QJsonObject disk = snapshot(QStringLiteral("disk"));
        const double diskAdded = double(disk.value(QStringLiteral("newBytes")).toInteger());
        std::printf("after writing %d MiB to the disk: paused %lld ms; added %.1f MiB (%.2f x), "
                    "%.1f MiB compressed; snapshot of %.1f MiB\n",
                    dirtyMiB, disk.value(QStringLiteral("pauseMs")).toInteger(),
                    diskAdded / 1048576.0, diskAdded / (dirtyMiB * 1048576.0),
                    disk.value(QStringLiteral("newStoredBytes")).toInteger() / 1048576.0,
                    disk.value(QStringLiteral("logicalBytes")).toInteger() / 1048576.0);
    }

    timer.restart();
    rpc.call(QStringLiteral("snapshot.restore"),
             {{QStringLiteral("name"), name},
              {QStringLiteral("snapshot"), first.value(QStringLiteral("id"))}},
             300000);
    const double restoreMs = answerAfter(socket, name, timer, " ");
    std::printf("restore (with safety snapshot):   %8.0f ms  ratio to cold boot %.2f\n", restoreMs,
                restoreMs / coldMs);

    timer.restart();
    rpc.call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("name"), QStringLiteral("bench-fork")},
              {QStringLiteral("snapshot"), first.value(QStringLiteral("id"))}},
             300000);
    const double forkMs = answerAfter(socket, QStringLiteral("bench-fork"), timer, " ");
    std::printf("fork:                             %8.0f ms  ratio to cold boot %.2f\n", forkMs,
                forkMs / coldMs);

    if (image != u"default")
        return 0; // images with a root disk have no templates
    // The template: prepared by the helper (an internal guest booted to its agent's ready line),
    // then a new sandbox starts from it.
    timer.restart();
    QJsonObject prepared;
    while (timer.elapsed() < 300000) {
        prepared = RpcTestClient::result(rpc.call(QStringLiteral("template.prepare"), {}));
        if (prepared.value(QStringLiteral("template")).isObject()
            || !prepared.value(QStringLiteral("preparing")).toBool())
            break;
        QThread::msleep(200);
    }
    if (!prepared.value(QStringLiteral("template")).isObject()) {
        std::fprintf(stderr, "no template could be prepared\n");
        return 1;
    }
    std::printf("template prepared in:             %8lld ms (in the background)\n",
                static_cast<long long>(timer.elapsed()));
    const QString fast = QStringLiteral("bench-tpl");
    rpc.call(QStringLiteral("sandbox.create"), named(fast));
    timer.restart();
    const QJsonObject started =
        RpcTestClient::result(rpc.call(QStringLiteral("sandbox.start"), named(fast), 60000));
    const double startMs = double(timer.elapsed());
    const double templateMs = answerAfter(socket, fast, timer, " ");
    std::printf("template start (%s%s): answered %.0f ms, console answer %8.0f ms  "
                "ratio to cold boot %.2f (target <= 0.2)\n",
                qPrintable(started.value(QStringLiteral("startedFrom")).toString()),
                started.value(QStringLiteral("identityWarning")).toString().isEmpty()
                    ? ", identity confirmed"
                    : ", identity NOT confirmed",
                startMs, templateMs, templateMs / coldMs);
    return 0;
}
