#include "core/daemon/workerjobs.h"

namespace airlock {

WorkerJobs::~WorkerJobs()
{
    for (QThread *thread : std::as_const(m_threads)) {
        thread->wait();
        delete thread;
    }
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
