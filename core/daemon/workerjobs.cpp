#include "core/daemon/workerjobs.h"

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
    // Best effort: a failure leaves the thread at the helper's own weight.
    (void)::setpriority(PRIO_PROCESS, id_t(::gettid()), kWorkerNice);
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
