#include "core/workspace/workspacediff.h"

#include <git2.h>

#include <mutex>

namespace airlock::workspace {

namespace {

using agentwire::ArchiveKind;

void initLibgit2()
{
    static std::once_flag once;
    std::call_once(once, [] { git_libgit2_init(); });
}

/// The unified diff of two contents, or std::nullopt when libgit2 finds either binary.
std::optional<QString> textPatch(const QString &path, const std::optional<QByteArray> &before,
                                 const std::optional<QByteArray> &after)
{
    initLibgit2();
    const QByteArray name = path.toUtf8();
    git_diff_options options = GIT_DIFF_OPTIONS_INIT;
    git_patch *patch = nullptr;
    const auto data = [](const std::optional<QByteArray> &content) {
        return content ? content->constData() : nullptr;
    };
    const auto size = [](const std::optional<QByteArray> &content) {
        return content ? size_t(content->size()) : size_t(0);
    };
    if (git_patch_from_buffers(&patch, data(before), size(before), name.constData(), data(after),
                               size(after), name.constData(), &options)
        != 0)
        return std::nullopt;
    std::optional<QString> text;
    const git_diff_delta *delta = git_patch_get_delta(patch);
    if (!(delta->flags & GIT_DIFF_FLAG_BINARY)) {
        git_buf buffer = GIT_BUF_INIT;
        if (git_patch_to_buf(&buffer, patch) == 0)
            text = QString::fromUtf8(buffer.ptr, qsizetype(buffer.size));
        git_buf_dispose(&buffer);
    }
    git_patch_free(patch);
    return text;
}

QString kindName(ArchiveKind kind)
{
    const std::string_view name = agentwire::archiveKindName(kind);
    return QString::fromLatin1(name.data(), qsizetype(name.size()));
}

QString modeText(quint32 mode)
{
    return QStringLiteral("%1").arg(mode, 4, 8, QLatin1Char('0'));
}

/// The text content of a file node for a patch: absent for a non-file (an empty side), or
/// std::nullopt through `binary` when the tree did not keep it.
std::optional<QByteArray> patchSide(const WorkspaceNode *node, bool &binary)
{
    if (!node || node->kind != ArchiveKind::File)
        return std::nullopt;
    if (!node->content)
        binary = true;
    return node->content;
}

void describe(WorkspaceChange &change, const WorkspaceNode *before, const WorkspaceNode *after)
{
    QStringList parts;
    if (before && after && before->kind != after->kind)
        parts << QStringLiteral("%1 -> %2").arg(kindName(before->kind), kindName(after->kind));
    else if (after && !before && after->kind != ArchiveKind::File)
        parts << kindName(after->kind);
    else if (before && !after && before->kind != ArchiveKind::File)
        parts << kindName(before->kind);
    if (before && after && before->mode != after->mode)
        parts << QStringLiteral("mode %1 -> %2").arg(modeText(before->mode), modeText(after->mode));
    const WorkspaceNode *shown = after ? after : before;
    if (shown->kind == ArchiveKind::Symlink || shown->kind == ArchiveKind::Hardlink)
        parts << QStringLiteral("-> %1").arg(QString::fromUtf8(shown->link));
    change.summary = parts.join(QStringLiteral(", "));

    bool binary = false;
    const auto old = patchSide(before, binary);
    const auto now = patchSide(after, binary);
    const bool contentChanged =
        (before && before->kind == ArchiveKind::File) != (after && after->kind == ArchiveKind::File)
        || (before && after && before->sha256 != after->sha256);
    if (!contentChanged)
        return;
    if (!binary) {
        if (auto patch = textPatch(change.path, old, now))
            change.patch = *patch;
        else
            binary = true;
    }
    change.binary = binary;
}

bool differs(const WorkspaceNode &before, const WorkspaceNode &after)
{
    return before.kind != after.kind || before.mode != after.mode || before.link != after.link
        || before.sha256 != after.sha256;
}

} // namespace

QString changeStatusName(WorkspaceChange::Status status)
{
    switch (status) {
    case WorkspaceChange::Status::Added:
        return QStringLiteral("added");
    case WorkspaceChange::Status::Modified:
        return QStringLiteral("modified");
    case WorkspaceChange::Status::Deleted:
        return QStringLiteral("deleted");
    case WorkspaceChange::Status::Refused:
        return QStringLiteral("refused");
    }
    return {};
}

QList<WorkspaceChange> diffTrees(const WorkspaceTree &before, const WorkspaceTree &after)
{
    QList<WorkspaceChange> changes;
    QStringList paths = before.nodes().keys() + after.nodes().keys();
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    for (const QString &path : std::as_const(paths)) {
        const auto old = before.nodes().constFind(path);
        const auto now = after.nodes().constFind(path);
        const WorkspaceNode *oldNode = old == before.nodes().cend() ? nullptr : &*old;
        const WorkspaceNode *newNode = now == after.nodes().cend() ? nullptr : &*now;
        WorkspaceChange change;
        change.path = path;
        if (newNode && !newNode->refusal.isEmpty()) {
            change.status = WorkspaceChange::Status::Refused;
            change.kind = newNode->kind;
            change.summary = newNode->refusal;
            changes.append(change);
            continue;
        }
        if (oldNode && newNode && !differs(*oldNode, *newNode))
            continue;
        change.status = !oldNode ? WorkspaceChange::Status::Added
            : !newNode           ? WorkspaceChange::Status::Deleted
                                 : WorkspaceChange::Status::Modified;
        change.kind = (newNode ? newNode : oldNode)->kind;
        describe(change, oldNode, newNode);
        changes.append(change);
    }
    return changes;
}

} // namespace airlock::workspace
