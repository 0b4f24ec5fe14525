#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace airlock::gateway {

/// Undoes the content- and transfer-codings of a response body that the gateway must scrub
/// (docs/credentials.md, "Compressed and partial responses";
/// docs/reviews/2026-12-01-credentials-redteam.md#f1): a secret inside a gzip stream matches no
/// form, and the guest would gunzip it. The gateway asks for `Accept-Encoding: identity` whenever
/// it scrubs, so this only runs for an upstream that compresses anyway. Codings are zlib's:
/// `gzip`/`x-gzip` (RFC 1952, several members too) and `deflate` (RFC 9110 §8.4.1.2: the zlib
/// format of RFC 1950; a raw RFC 1951 stream, which some servers send instead, is accepted as
/// well). Anything else is refused by forCodings(), never passed through.
///
/// The output is bounded against decompression bombs: at most kSlackBytes plus kMaxRatio times
/// the compressed bytes fed so far; beyond that feed() fails. Not thread-safe.
class ContentDecoder final
{
public:
    static constexpr qint64 kMaxRatio = 64;
    static constexpr qint64 kSlackBytes = 1024 * 1024;
    /// More codings than this on one body are refused (each layer multiplies a bomb).
    static constexpr int kMaxLayers = 2;

    /// A decoder for a body with `codings` in the order they were applied (the order of the
    /// Transfer-Encoding codings other than chunked, then of Content-Encoding, RFC 9110
    /// §8.4, RFC 9112 §6.1), lower-case, without parameters. `identity` entries are ignored;
    /// nullopt with `*error` naming the coding when one is not gzip, x-gzip or deflate, or
    /// there are more than kMaxLayers.
    static std::optional<ContentDecoder> forCodings(const QList<QByteArray> &codings,
                                                    QString *error);
    /// The codings of one field value ("gzip, chunked" → {"gzip", "chunked"}), lower-case,
    /// parameters and empty members removed.
    static QList<QByteArray> parseCodings(QByteArrayView fieldValue);

    ContentDecoder(ContentDecoder &&) noexcept;
    ContentDecoder &operator=(ContentDecoder &&) noexcept;
    ~ContentDecoder();

    /// True when there is nothing to decode (identity only).
    bool isIdentity() const;
    /// Decoded bytes for the next piece of the body; false with `*error` when the data is not
    /// in the coding or the output exceeds the ratio bound.
    bool feed(QByteArrayView bytes, QByteArray *output, QString *error);

private:
    struct Layer;
    ContentDecoder();
    std::vector<std::unique_ptr<Layer>> m_layers; ///< innermost (applied first) first
    qint64 m_in = 0;
    qint64 m_out = 0;
};

} // namespace airlock::gateway
