#pragma once

#include <QCoreApplication>
#include <QString>

namespace airlock {

/// Says in translated words why a sandbox or secret name is refused, for the dialogs that ask
/// for one. The verdict is validateName's (core/model/names.h: 1 to 63 characters of a-z, 0-9
/// and '-', not starting with '-'), so the window refuses exactly what the helper refuses; only
/// the wording is the window's: the offending character is shown as itself ("“B” at position
/// 1"), or named when it cannot be seen (a space, a control character with its code).
class NameText final
{
    Q_DECLARE_TR_FUNCTIONS(NameText)
public:
    /// One or two sentences, e.g. "“B” at position 1: upper case is not allowed (use “b”).
    /// A name may only contain a–z, 0–9 and “-”."; empty when validateName accepts `name`.
    static QString problem(const QString &name);
    /// How the character `c` reads in such a sentence: “B”, “é”, "a space", "a tab",
    /// "a control character (U+0000)".
    static QString character(QChar c);
};

} // namespace airlock
