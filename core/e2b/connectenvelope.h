#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace airlock::e2b {

/// Framing of the Connect protocol's streaming calls (https://connectrpc.com/docs/protocol,
/// "Streaming-RPC"): every message is an envelope of one flags byte, a 4-byte big-endian
/// length and the message; flag 0x02 marks the end-of-stream message (`{}` or
/// `{"error": {code, message}}`); flag 0x01 (compressed) is refused, since airlock-e2b
/// advertises no compression.
namespace connectenvelope {

inline constexpr quint8 kCompressed = 0x01;
inline constexpr quint8 kEndStream = 0x02;
/// The most one request envelope may carry (the SDK's requests are a few hundred bytes).
inline constexpr quint32 kMaxMessageBytes = 1024 * 1024;

QByteArray encode(const QByteArray &message, quint8 flags = 0);
/// The end-of-stream envelope: `{}` with an empty `code`, else `{"error":{code,message}}`.
QByteArray endStream(const QString &code = {}, const QString &message = {});
/// Splits a whole request body into its messages; an envelope that is cut off, compressed,
/// or longer than kMaxMessageBytes is invalid_params.
Result<QList<QByteArray>> decodeAll(const QByteArray &body);

} // namespace connectenvelope

} // namespace airlock::e2b
