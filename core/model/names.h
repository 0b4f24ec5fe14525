#pragma once

#include "core/model/error.h"

namespace airlock {

/// Validates a sandbox or image name: `[a-z0-9][a-z0-9-]{0,62}` (a DNS label without upper
/// case or a trailing-hyphen rule, so it can be a hostname). Returns the name unchanged, or an
/// InvalidName error that says what is wrong. Nothing is repaired: "Demo" is rejected, not
/// lowered.
Result<QString> validateName(const QString &name, QStringView what = u"sandbox name");

} // namespace airlock
