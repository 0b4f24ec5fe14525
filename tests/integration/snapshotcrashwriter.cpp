// A helper process for tst_snapshotcrash: performs one snapshot operation on a state directory
// (registry + store, as airlockd keeps them) and kills itself with SIGKILL at the k-th step of
// the commit protocol, as a crash of airlockd at that moment would.
//
//   snapshot_crash_writer DIR create GENERATION KILL_AT
//   snapshot_crash_writer DIR delete ID KILL_AT
//   snapshot_crash_writer DIR reconcile - KILL_AT
// KILL_AT 0 never kills. Exit 0 prints "steps N id ID".

#include "core/daemon/registry.h"
#include "core/snapshot/snapshotarchive.h"

#include <QCoreApplication>
#include <QDir>
#include <QRandomGenerator>

#include <csignal>
#include <cstdio>

using namespace airlock;

namespace {

/// The object contents of generation `g`: 1 MiB of "memory" whose first 256 KiB change with
/// every generation, and a small device state.
QByteArray memoryFor(int generation)
{
    QByteArray data(1024 * 1024, '\0');
    QRandomGenerator(7).fillRange(reinterpret_cast<quint32 *>(data.data()), data.size() / 4);
    QRandomGenerator(100 + quint32(generation))
        .fillRange(reinterpret_cast<quint32 *>(data.data()), 256 * 1024 / 4);
    return data;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() != 5) {
        std::fprintf(stderr, "usage: %s DIR create|delete|reconcile ARG KILL_AT\n", argv[0]);
        return 2;
    }
    const QDir dir(args[1]);
    const QString mode = args[2];
    const int killAt = args[4].toInt();
    auto registry = Registry::open(dir.filePath(QStringLiteral("registry.sqlite")));
    auto store = SnapshotStore::open(dir.filePath(QStringLiteral("store")));
    if (!registry || !store) {
        std::fprintf(stderr, "cannot open the state dir\n");
        return 1;
    }
    SnapshotCatalog catalog((*registry)->connectionName());
    SnapshotArchive archive(**store, catalog);
    int steps = 0;
    archive.setStepHook([&] {
        if (++steps == killAt)
            ::raise(SIGKILL);
    });

    QString id;
    if (mode == QLatin1String("create")) {
        const int generation = args[3].toInt();
        const QByteArray memory = memoryFor(generation);
        const QByteArray state =
            QByteArray("state of generation ") + QByteArray::number(generation);
        Snapshot meta;
        meta.sandbox = QStringLiteral("crash");
        meta.parent = catalog.head(meta.sandbox);
        meta.label = QStringLiteral("generation %1").arg(generation);
        auto committed = archive.commit(
            meta, {{QStringLiteral("memory"), memory}, {QStringLiteral("device-state"), state}});
        if (!committed) {
            std::fprintf(stderr, "%s\n", qPrintable(committed.error().message));
            return 1;
        }
        id = committed->id;
    } else if (mode == QLatin1String("delete")) {
        id = args[3];
        if (auto removed = archive.remove(id); !removed) {
            std::fprintf(stderr, "%s\n", qPrintable(removed.error().message));
            return 1;
        }
        if (auto collected = archive.collectGarbage(); !collected) {
            std::fprintf(stderr, "%s\n", qPrintable(collected.error().message));
            return 1;
        }
    } else if (mode == QLatin1String("reconcile")) {
        if (auto reconciled = archive.reconcile(); !reconciled) {
            std::fprintf(stderr, "%s\n", qPrintable(reconciled.error().message));
            return 1;
        }
    } else {
        return 2;
    }
    std::printf("steps %d id %s\n", steps, id.isEmpty() ? "-" : qPrintable(id));
    return 0;
}
