#include "core/terminal/terminalfeeder.h"

#include "core/terminal/terminalsession.h"

#include <QElapsedTimer>

#include <algorithm>

namespace airlock {

TerminalFeeder::TerminalFeeder(TerminalSession *session, QObject *parent)
    : QObject(parent), m_session(session)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(0);
    connect(&m_timer, &QTimer::timeout, this, [this] { step(); });
}

void TerminalFeeder::enqueue(const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return;
    m_pending.append(bytes);
    if (backlog() > kMaxBacklog) {
        const qsizetype drop = backlog() - kKeepOnOverflow;
        m_offset += drop;
        Q_EMIT skipped(drop);
    }
    if (m_offset > 0 && m_offset >= m_pending.size() / 2) {
        m_pending.remove(0, m_offset);
        m_offset = 0;
    }
    if (!m_timer.isActive())
        m_timer.start();
}

void TerminalFeeder::clear()
{
    m_pending.clear();
    m_offset = 0;
    m_timer.stop();
}

qsizetype TerminalFeeder::step()
{
    QElapsedTimer elapsed;
    elapsed.start();
    qsizetype fed = 0;
    while (backlog() > 0) {
        const qsizetype size = std::min(kSliceBytes, backlog());
        // Copied out first: feed() may emit signals whose slots enqueue more.
        const QByteArray slice = m_pending.mid(m_offset, size);
        m_offset += size;
        fed += size;
        m_session->feed(slice);
        if (elapsed.elapsed() >= m_budgetMs)
            break;
    }
    if (backlog() == 0) {
        m_pending.clear();
        m_offset = 0;
    } else if (!m_timer.isActive()) {
        m_timer.start();
    }
    return fed;
}

} // namespace airlock
