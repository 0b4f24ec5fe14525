#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace airlock::e2b {

/// One file of a `multipart/form-data` body (RFC 7578), as the SDK's `files.write` sends it
/// through undici's FormData: part name `file`, the guest path as its filename.
struct FormFile
{
    QString fieldName;
    QString fileName;
    QByteArray content;
};

/// Splits a multipart/form-data body at its boundary (RFC 2046 §5.1.1). Strict: the boundary
/// from the Content-Type, CRLF line ends, a Content-Disposition of `form-data` in every part,
/// and the closing delimiter; anything else is invalid_params naming what is wrong.
Result<QList<FormFile>> parseMultipartForm(const QByteArray &contentType, const QByteArray &body);

} // namespace airlock::e2b
