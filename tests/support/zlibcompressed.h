#pragma once

#include <QByteArray>

#include <zlib.h>

namespace airlock::test {

/// `data` compressed by zlib in one go: windowBits 31 gives gzip (RFC 1952), 15 zlib
/// (RFC 1950), -15 raw deflate (RFC 1951). Empty when zlib refuses the parameters.
inline QByteArray zlibCompressed(const QByteArray &data, int windowBits)
{
    z_stream stream {};
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY)
        != Z_OK)
        return {};
    QByteArray out(qsizetype(deflateBound(&stream, uLong(data.size()))) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.constData()));
    stream.avail_in = uInt(data.size());
    stream.next_out = reinterpret_cast<Bytef *>(out.data());
    stream.avail_out = uInt(out.size());
    deflate(&stream, Z_FINISH);
    out.truncate(qsizetype(stream.total_out));
    deflateEnd(&stream);
    return out;
}

} // namespace airlock::test
