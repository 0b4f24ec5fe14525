#pragma once

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>

#include <deque>

namespace airlock {

/// Fan-out of guest console bytes (docs/architecture.md, "Create → boot → console"). Per sandbox it
/// keeps a scrollback ring of at most `scrollbackBytes` (the newest bytes win; an old chunk is
/// cut at the front when only part of it still fits) and the set of attached clients, named by
/// the RPC server's client ids. Every appended chunk gets the next sequence number of its
/// sandbox (1, 2, ...; never reused while the helper runs, even after clear()). Chunks larger
/// than kMaxChunkBytes are split so each `console.output` notification stays far below the
/// 1 MiB message limit.
class ConsoleHub : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kDefaultScrollbackBytes = 1024 * 1024;
    static constexpr qsizetype kMaxChunkBytes = 64 * 1024;
    /// Stored scrollback blocks grow up to this size before a new one starts.
    static constexpr qsizetype kBlockBytes = 16 * 1024;

    /// What attach() hands back: the scrollback and the seq of its newest chunk (0 when none).
    struct Replay
    {
        quint64 seq = 0;
        QByteArray data;
    };

    explicit ConsoleHub(qsizetype scrollbackBytes = kDefaultScrollbackBytes,
                        QObject *parent = nullptr);

    /// Records guest output; emits output() once per chunk (after splitting) to the clients
    /// attached at that moment. Returns the seq of the last chunk (unchanged for empty bytes).
    quint64 append(const QString &sandbox, const QByteArray &bytes);
    /// Attaches a client (again: same set, replayed again) and returns the scrollback, at most
    /// the newest `maxBytes` of it (the replay must fit in one protocol message).
    Replay attach(const QString &sandbox, quint64 client, qsizetype maxBytes = -1);
    /// False when the client was not attached to that sandbox.
    bool detach(const QString &sandbox, quint64 client);
    /// Forgets a client everywhere (it disconnected).
    void detachAll(quint64 client);
    /// The scrollback without attaching.
    Replay replay(const QString &sandbox, qsizetype maxBytes = -1) const;
    /// Empties the scrollback (a new boot) but keeps attachments and the sequence counter.
    void clear(const QString &sandbox);
    /// Forgets a sandbox entirely (deleted).
    void remove(const QString &sandbox);
    QSet<quint64> attachedClients(const QString &sandbox) const;
    /// Bytes the scrollback of `sandbox` holds in memory (allocations, not just data): stays
    /// within a small factor of scrollbackBytes() however the guest's output was split.
    qsizetype memoryUsage(const QString &sandbox) const;
    qsizetype scrollbackBytes() const { return m_capacity; }

Q_SIGNALS:
    /// A chunk of guest output for the clients in `recipients` (may be empty).
    void output(const QString &sandbox, quint64 seq, const QByteArray &bytes,
                const QSet<quint64> &recipients);

private:
    struct Chunk
    {
        quint64 seq;
        QByteArray bytes;
    };
    struct Console
    {
        std::deque<Chunk> chunks;
        qsizetype bytes = 0;
        quint64 lastSeq = 0;
        QSet<quint64> clients;
    };

    void trim(Console &console);

    qsizetype m_capacity;
    QHash<QString, Console> m_consoles;
};

} // namespace airlock
