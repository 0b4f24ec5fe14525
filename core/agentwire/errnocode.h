#pragma once

#include "core/agentwire/wire.h"

namespace airlock::agentwire {

/// The ErrorCode of an errno value: ENOENT/ESRCH not_found, EISDIR is_a_directory, ENOTDIR
/// not_a_directory, EEXIST exists, EACCES/EPERM/EROFS permission, EINVAL/ELOOP/EXDEV invalid,
/// ENOTEMPTY not_empty, ENOSPC/EDQUOT no_space, EBUSY/ETXTBSY busy, EFBIG/ENAMETOOLONG/E2BIG
/// too_large, EMFILE/ENFILE/EAGAIN limit, anything else io.
ErrorCode errorCodeOfErrno(int error);

} // namespace airlock::agentwire
