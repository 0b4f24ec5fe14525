#pragma once

#include <QCoreApplication>

namespace airlock {

/// The stable reason names of an archive refusal (agentwire::archiveRefusal and the
/// extractor's: symlink_escapes, device, setuid, ...) in translated words for the window, with
/// the name kept in parentheses; other text (a guest's own) is returned as it came.
class RefusalText final
{
    Q_DECLARE_TR_FUNCTIONS(RefusalText)
public:
    static QString describe(const QString &reason);
};

} // namespace airlock
