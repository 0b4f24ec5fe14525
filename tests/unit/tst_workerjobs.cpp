// WorkerJobs: results come back on the owner's thread; work still running when it goes is
// waited for, and its result is dropped.

#include "core/daemon/workerjobs.h"

#include <QCoreApplication>
#include <QSemaphore>
#include <QTest>

#include <algorithm>
#include <memory>

using namespace airlock;

class TestWorkerJobs : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void resultComesBackOnTheOwnersThread()
    {
        WorkerJobs jobs;
        QThread *worker = nullptr;
        QThread *deliveredOn = nullptr;
        int result = 0;
        jobs.run<int>(
            [&worker] {
                worker = QThread::currentThread();
                return 42;
            },
            [&](int value) {
                deliveredOn = QThread::currentThread();
                result = value;
            });
        QCOMPARE(jobs.running(), 1);
        QTRY_COMPARE(result, 42);
        QCOMPARE(deliveredOn, QThread::currentThread());
        QVERIFY(worker != nullptr);
        QVERIFY(worker != QThread::currentThread());
        QTRY_COMPARE(jobs.running(), 0);
    }

    void manyJobsEachDeliverOnce()
    {
        WorkerJobs jobs;
        QList<int> results;
        for (int i = 0; i < 8; ++i)
            jobs.run<int>([i] { return i * i; }, [&results](int value) { results.append(value); });
        QTRY_COMPARE(results.size(), 8);
        std::sort(results.begin(), results.end());
        QCOMPARE(results, (QList<int> {0, 1, 4, 9, 16, 25, 36, 49}));
    }

    void destructionWaitsAndDropsTheResult()
    {
        auto jobs = std::make_unique<WorkerJobs>();
        QSemaphore started;
        QSemaphore proceed;
        bool finished = false;
        bool delivered = false;
        jobs->run<int>(
            [&] {
                started.release();
                proceed.acquire();
                finished = true;
                return 1;
            },
            [&delivered](int) { delivered = true; });
        started.acquire();
        proceed.release();
        // Waits for the work, whose result then has no one to go to.
        jobs.reset();
        QVERIFY(finished);
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }
};

QTEST_GUILESS_MAIN(TestWorkerJobs)
#include "tst_workerjobs.moc"
