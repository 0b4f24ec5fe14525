#pragma once

#include <QList>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThread>

#include <functional>
#include <memory>

namespace airlock {

/// Runs blocking work (file copies, chunk hashing and compression) on threads of its own, so
/// airlockd's event loop never waits for it, and hands each result back on the thread that owns
/// this object. The destructor waits for work still running; its results are then dropped.
class WorkerJobs : public QObject
{
public:
    explicit WorkerJobs(QObject *parent = nullptr) : QObject(parent) { }
    ~WorkerJobs() override;
    WorkerJobs(const WorkerJobs &) = delete;
    WorkerJobs &operator=(const WorkerJobs &) = delete;

    /// Calls `work()` on a new thread, then `done(result)` on this object's thread, unless this
    /// object is gone by then. `work` must touch nothing another thread uses (descriptors it
    /// owns, data it copied, objects documented as thread-safe).
    template<typename T>
    void run(std::function<T()> work, std::function<void(T)> done)
    {
        QPointer<WorkerJobs> self(this);
        // The destructor waits for this thread, so `self` cannot dangle while it runs.
        start(QThread::create([self, work = std::move(work), done = std::move(done)] {
            yieldToEventLoop();
            auto result = std::make_shared<T>(work());
            QMetaObject::invokeMethod(
                self.data(),
                [self, done, result] {
                    if (self)
                        done(std::move(*result));
                },
                Qt::QueuedConnection);
        }));
    }

    /// Work still running.
    qsizetype running() const { return m_threads.size(); }

    /// How much nicer a worker thread is than the helper: ten memory copies at the event loop's
    /// weight took most of the CPU it needed to answer other clients (bench_scale, issue 16); a
    /// worker still gets what the event loop leaves.
    static constexpr int kWorkerNice = 10;
    /// Lowers the calling thread by kWorkerNice (setpriority(2) on its tid: Linux nice values
    /// are per thread), to at most 19.
    static void yieldToEventLoop();

    /// Blocks until all work still running has finished; its results are still handed back
    /// (queued). For a shutdown that must end the work before what it reads goes.
    void waitForAll();

private:
    void start(QThread *thread);

    QList<QThread *> m_threads;
};

} // namespace airlock
