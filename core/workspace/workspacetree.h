#pragma once

#include "core/agentwire/archiveformat.h"
#include "core/agentwire/archivepolicy.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QMap>
#include <QString>

#include <optional>

namespace airlock::workspace {

/// One entry of a WorkspaceTree.
struct WorkspaceNode
{
    agentwire::ArchiveKind kind = agentwire::ArchiveKind::File;
    quint32 mode = 0; ///< permission bits and setuid/setgid/sticky (07777)
    QByteArray link; ///< symlink or hard link target, as stored
    quint64 size = 0;
    QByteArray sha256; ///< of a file's content
    /// A file's content when it is at most WorkspaceTree::kMaxKeptBytes (for a diff).
    std::optional<QByteArray> content;
    /// Why a receiver with the host's ArchivePolicy would not write it (symlink_escapes,
    /// fifo, setuid, ...), or empty.
    QString refusal;
};

/// What a folder holds, read from its archive stream (feed it to an ArchiveDecoder): each
/// entry's kind, mode, link target, size and content hash, and the content of small files,
/// by relative path. The same record for the host folder (fromFolder) and the guest's (the
/// pulled stream) is what WorkspaceDiff compares. Paths come as the sender wrote them; each
/// entry says whether the host's policy refuses it, and nothing here touches a path.
class WorkspaceTree : public agentwire::ArchiveSink
{
public:
    /// Files up to this size keep their content (for a unified diff); larger ones only their
    /// hash.
    static constexpr quint64 kMaxKeptBytes = 1024 * 1024;
    /// Content kept in all, and entries at most: a guest folder is the guest's to fill, the
    /// reviewer's memory is not. Beyond the first, files keep only their hash; beyond the
    /// second, reading stops (error()).
    static constexpr quint64 kMaxKeptTotalBytes = 128 * 1024 * 1024;
    static constexpr qsizetype kMaxEntries = 200000;

    /// Reads `folder` on the host (ArchiveWalker: nothing followed). Errors: the walker's
    /// message (not_found, not_a_directory, permission, a file that changed while read).
    static std::optional<QString> fromFolder(const QString &folder, WorkspaceTree &tree);

    bool entry(const agentwire::ArchiveEntry &entry) override;
    bool content(agentwire::ByteView bytes) override;
    bool entryDone() override;
    void end() override { m_ended = true; }

    const QMap<QString, WorkspaceNode> &nodes() const { return m_nodes; }
    bool ended() const { return m_ended; }
    /// Why reading stopped (too many entries), if it did.
    const std::optional<QString> &error() const { return m_error; }

private:
    agentwire::ArchivePolicy m_policy;
    QMap<QString, WorkspaceNode> m_nodes;
    QString m_current;
    QCryptographicHash m_hash {QCryptographicHash::Sha256};
    QByteArray m_kept;
    bool m_keeping = false;
    quint64 m_keptTotal = 0;
    bool m_ended = false;
    std::optional<QString> m_error;
};

} // namespace airlock::workspace
