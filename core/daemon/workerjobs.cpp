#include "core/daemon/workerjobs.h"

#include <QtGlobal>

#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

namespace airlock {

WorkerJobs::~WorkerJobs()
{
    for (QThread *thread : std::as_const(m_threads)) {
        thread->wait();
        delete thread;
    }
}

void WorkerJobs::yieldToEventLoop()
{
    // Relative to the thread that made it (the event loop's value, inherited), so a helper run
    // with a nice value of its own keeps its workers below it. Best effort: a failure leaves the
    // thread at the helper's own weight.
    const id_t self = id_t(::gettid());
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, self);
    if (errno == 0)
        (void)::setpriority(PRIO_PROCESS, self, qMin(current + kWorkerNice, 19));
}

void WorkerJobs::waitForAll()
{
    for (QThread *thread : std::as_const(m_threads))
        thread->wait();
}

void WorkerJobs::start(QThread *thread)
{
    m_threads.append(thread);
    connect(thread, &QThread::finished, this, [this, thread] {
        m_threads.removeOne(thread);
        thread->deleteLater();
    });
    thread->start();
}

} // namespace airlock
