#pragma once

#include <QString>

namespace airlock {

/// Guest text (command output, file names, patches) made safe to show as plain text: control
/// and format characters other than newline and tab (terminal escapes, carriage returns, bidi
/// overrides that would reorder what a person reads) become U+FFFD.
class GuestText final
{
public:
    static QString shown(const QString &text);
};

} // namespace airlock
