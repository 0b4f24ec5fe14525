#include "core/workspace/workspacetree.h"

#include "core/agentwire/archivewalker.h"

namespace airlock::workspace {

std::optional<QString> WorkspaceTree::fromFolder(const QString &folder, WorkspaceTree &tree)
{
    auto walker = agentwire::ArchiveWalker::open(folder.toStdString());
    if (!walker)
        return QString::fromStdString(walker.error().message);
    agentwire::ArchiveDecoder decoder(tree);
    agentwire::Bytes chunk;
    for (;;) {
        chunk.clear();
        auto more = (*walker)->produce(chunk, 256 * 1024);
        if (!more)
            return QString::fromStdString(more.error().message);
        if (!decoder.feed(chunk))
            return tree.error().value_or(
                QString::fromStdString(decoder.error().value_or("the archive did not decode")));
        if (!*more)
            break;
    }
    return std::nullopt;
}

bool WorkspaceTree::entry(const agentwire::ArchiveEntry &entry)
{
    if (m_nodes.size() >= kMaxEntries) {
        m_error = QStringLiteral("the folder holds more than %1 entries").arg(kMaxEntries);
        return false;
    }
    WorkspaceNode node;
    node.kind = entry.kind;
    node.mode = entry.mode & 07777;
    node.link = QByteArray::fromStdString(entry.link);
    node.size = entry.size;
    if (const auto refusal = agentwire::archiveRefusal(entry, m_policy))
        node.refusal = QString::fromLatin1(refusal->data(), qsizetype(refusal->size()));
    m_current = QString::fromStdString(entry.path);
    m_hash.reset();
    m_kept.clear();
    m_keeping = entry.kind == agentwire::ArchiveKind::File && entry.size <= kMaxKeptBytes
        && m_keptTotal + entry.size <= kMaxKeptTotalBytes;
    if (m_keeping)
        m_keptTotal += entry.size;
    m_nodes.insert(m_current, node);
    return true;
}

bool WorkspaceTree::content(agentwire::ByteView bytes)
{
    const QByteArrayView view(reinterpret_cast<const char *>(bytes.data()),
                              qsizetype(bytes.size()));
    m_hash.addData(view);
    if (m_keeping)
        m_kept.append(view);
    return true;
}

bool WorkspaceTree::entryDone()
{
    WorkspaceNode &node = m_nodes[m_current];
    node.sha256 = m_hash.result();
    if (m_keeping)
        node.content = std::exchange(m_kept, {});
    return true;
}

} // namespace airlock::workspace
