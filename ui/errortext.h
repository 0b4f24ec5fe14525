#pragma once

#include "core/model/error.h"

#include <QCoreApplication>

namespace airlock {

/// Turns error kinds from the helper into translated sentences for the window. The helper's own
/// (English) message is kept as the detail, because it names paths and values.
class ErrorText final
{
    Q_DECLARE_TR_FUNCTIONS(ErrorText)
public:
    /// One short translated sentence for the kind, e.g. "No sandbox with that name exists.".
    static QString summary(const Error &error);
    /// summary(), a blank line, then the helper's message: the informative text of the
    /// message box for a failed action.
    static QString details(const Error &error);
    /// summary() for an error of a guest file operation (files.*, workspace.*): `not_found`
    /// and `permission_denied` name the guest path there, not a sandbox or the helper.
    static QString fileSummary(const Error &error);
    /// Headline for a failed connection, e.g. "The Airlock helper is not running".
    static QString connectionTitle(const Error &error);
    /// What the user can do about a failed connection, e.g. the usermod command.
    static QString connectionFix(const Error &error);
};

} // namespace airlock
