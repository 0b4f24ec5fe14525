#pragma once

#include <QString>

namespace airlock {

/// Which airlockd a tap device or nftables table belongs to. Several helpers may share one
/// network namespace (a packaged helper and a developer's, or a test's): each one names its
/// objects with its own tag, lists only objects carrying that tag, and so never takes another
/// helper's live table or tap for a crash's leftover (docs/reviews/2026-12-01-newuser-pass.md#h1).
class HelperInstance
{
public:
    /// Characters of a tag: 5 lowercase hex digits (20 bits), short enough to fit in a tap
    /// name beside the sandbox name (IFNAMSIZ).
    static constexpr int kTagLength = 5;
    /// The tag of the helper with state dir `stateDir` (an absolute path, as airlockd gets it):
    /// the first kTagLength hex digits of SHA-256 over the path. Empty for an empty path (the
    /// untagged names of tests that build one network by hand).
    static QString tagFor(const QString &stateDir);
};

} // namespace airlock
