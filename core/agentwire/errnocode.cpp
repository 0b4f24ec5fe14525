#include "core/agentwire/errnocode.h"

#include <cerrno>

namespace airlock::agentwire {

ErrorCode errorCodeOfErrno(int error)
{
    switch (error) {
    case ENOENT:
    case ESRCH:
        return ErrorCode::NotFound;
    case EISDIR:
        return ErrorCode::IsADirectory;
    case ENOTDIR:
        return ErrorCode::NotADirectory;
    case EEXIST:
        return ErrorCode::Exists;
    case EACCES:
    case EPERM:
    case EROFS:
        return ErrorCode::Permission;
    case EINVAL:
    case ELOOP:
    case EXDEV:
        return ErrorCode::Invalid;
    case ENOTEMPTY:
        return ErrorCode::NotEmpty;
    case ENOSPC:
    case EDQUOT:
        return ErrorCode::NoSpace;
    case EBUSY:
    case ETXTBSY:
        return ErrorCode::Busy;
    case EFBIG:
    case ENAMETOOLONG:
    case E2BIG:
        return ErrorCode::TooLarge;
    case EMFILE:
    case ENFILE:
    case EAGAIN:
        return ErrorCode::Limit;
    default:
        return ErrorCode::Io;
    }
}

} // namespace airlock::agentwire
