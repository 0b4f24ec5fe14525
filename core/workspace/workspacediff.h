#pragma once

#include "core/workspace/workspacetree.h"

#include <QList>
#include <QString>

namespace airlock::workspace {

/// One difference between the folder that was sent in and the guest's folder now.
struct WorkspaceChange
{
    enum class Status {
        Added, ///< only in the guest
        Modified, ///< in both, with another content, kind, link target or mode
        Deleted, ///< only on the host
        Refused, ///< in the guest, but the host's policy would not write it (reason)
    };
    QString path; ///< relative, '/'-separated, as the guest sent it
    Status status = Status::Modified;
    agentwire::ArchiveKind kind = agentwire::ArchiveKind::File; ///< the guest's (or the host's)
    /// Not shown as text: a binary content (a NUL byte, as git decides), or larger than the
    /// tree kept.
    bool binary = false;
    /// One line for a person: "mode 0644 -> 0755", "symlink -> target", the refusal reason.
    QString summary;
    /// A unified diff (RFC-less, as `diff -u` and git print it) for a text file; empty
    /// otherwise.
    QString patch;
};

/// "added", "modified", "deleted", "refused".
QString changeStatusName(WorkspaceChange::Status status);

/// The changes from `before` (the host folder) to `after` (the guest folder), sorted by path
/// (a folder before its content). Text patches come from libgit2's diff of the two contents.
QList<WorkspaceChange> diffTrees(const WorkspaceTree &before, const WorkspaceTree &after);

} // namespace airlock::workspace
