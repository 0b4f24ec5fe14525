#include "core/daemon/consolehub.h"

namespace airlock {

ConsoleHub::ConsoleHub(qsizetype scrollbackBytes, QObject *parent)
    : QObject(parent), m_capacity(qMax<qsizetype>(scrollbackBytes, 1))
{ }

quint64 ConsoleHub::append(const QString &sandbox, const QByteArray &bytes)
{
    quint64 lastSeq = m_consoles[sandbox].lastSeq;
    for (qsizetype offset = 0; offset < bytes.size(); offset += kMaxChunkBytes) {
        // Looked up per chunk: a slot may detach clients or remove the sandbox while we emit.
        auto it = m_consoles.find(sandbox);
        if (it == m_consoles.end())
            break;
        const QByteArray piece = bytes.mid(offset, kMaxChunkBytes);
        lastSeq = ++it->lastSeq;
        // A serial port delivers a few bytes per read, each read in a buffer of 16 KiB or more.
        // Stored as is, 1 MiB of scrollback would pin gigabytes; so small reads are copied into
        // blocks of up to kBlockBytes. Replay needs only the newest seq, which the block keeps.
        if (!it->chunks.empty() && it->chunks.back().bytes.size() + piece.size() <= kBlockBytes) {
            it->chunks.back().bytes.append(piece);
            it->chunks.back().seq = lastSeq;
        } else {
            QByteArray block;
            block.reserve(qMax(piece.size(), qMin<qsizetype>(kBlockBytes, 4 * piece.size())));
            block.append(piece);
            it->chunks.push_back(Chunk {lastSeq, std::move(block)});
        }
        it->bytes += piece.size();
        trim(*it);
        const QSet<quint64> recipients = it->clients;
        Q_EMIT output(sandbox, lastSeq, piece, recipients);
    }
    return lastSeq;
}

ConsoleHub::Replay ConsoleHub::attach(const QString &sandbox, quint64 client, qsizetype maxBytes)
{
    m_consoles[sandbox].clients.insert(client);
    return replay(sandbox, maxBytes);
}

bool ConsoleHub::detach(const QString &sandbox, quint64 client)
{
    auto it = m_consoles.find(sandbox);
    return it != m_consoles.end() && it->clients.remove(client);
}

void ConsoleHub::detachAll(quint64 client)
{
    for (Console &console : m_consoles)
        console.clients.remove(client);
}

ConsoleHub::Replay ConsoleHub::replay(const QString &sandbox, qsizetype maxBytes) const
{
    const auto it = m_consoles.constFind(sandbox);
    if (it == m_consoles.cend() || it->chunks.empty())
        return Replay {it == m_consoles.cend() ? 0 : it->lastSeq, {}};
    Replay result;
    result.seq = it->chunks.back().seq;
    result.data.reserve(it->bytes);
    for (const Chunk &chunk : it->chunks)
        result.data.append(chunk.bytes);
    if (maxBytes >= 0 && result.data.size() > maxBytes)
        result.data = result.data.right(maxBytes);
    return result;
}

void ConsoleHub::clear(const QString &sandbox)
{
    auto it = m_consoles.find(sandbox);
    if (it == m_consoles.end())
        return;
    it->chunks.clear();
    it->bytes = 0;
}

void ConsoleHub::remove(const QString &sandbox)
{
    m_consoles.remove(sandbox);
}

qsizetype ConsoleHub::memoryUsage(const QString &sandbox) const
{
    const auto it = m_consoles.constFind(sandbox);
    if (it == m_consoles.cend())
        return 0;
    qsizetype total = 0;
    for (const Chunk &chunk : it->chunks)
        total += chunk.bytes.capacity() + qsizetype(sizeof(Chunk));
    return total;
}

QSet<quint64> ConsoleHub::attachedClients(const QString &sandbox) const
{
    return m_consoles.value(sandbox).clients;
}

void ConsoleHub::trim(Console &console)
{
    while (console.bytes > m_capacity) {
        Chunk &oldest = console.chunks.front();
        const qsizetype excess = console.bytes - m_capacity;
        if (excess >= oldest.bytes.size()) {
            console.bytes -= oldest.bytes.size();
            console.chunks.pop_front();
        } else {
            oldest.bytes.remove(0, excess);
            console.bytes -= excess;
        }
    }
}

} // namespace airlock
