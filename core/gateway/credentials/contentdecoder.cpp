#include "core/gateway/credentials/contentdecoder.h"

#include <zlib.h>

namespace airlock::gateway {

namespace {
constexpr qsizetype kOutChunk = 64 * 1024;
} // namespace

struct ContentDecoder::Layer
{
    QByteArray name;
    z_stream stream {};
    bool initialized = false;
    bool ended = false; ///< Z_STREAM_END seen: more input starts a new gzip member
    bool deflate = false;
    bool triedRaw = false; ///< deflate: fell back to a raw RFC 1951 stream
    bool sawOutput = false;
    QByteArray firstBytes; ///< deflate: the stream's first 2 bytes, replayed for a raw stream

    explicit Layer(QByteArray coding) : name(std::move(coding)), deflate(name == "deflate") { }
    ~Layer()
    {
        if (initialized)
            inflateEnd(&stream);
    }

    bool init(int windowBits)
    {
        if (initialized)
            inflateEnd(&stream);
        stream = z_stream {};
        initialized = inflateInit2(&stream, windowBits) == Z_OK;
        return initialized;
    }

    bool start()
    {
        // 15 + 16: gzip only; 15: zlib (deflate's registered format).
        return init(deflate ? 15 : 15 + 16);
    }

    /// Appends what `input` decodes to; fails as soon as the output passes `budget` bytes.
    bool feed(QByteArrayView input, QByteArray *output, qint64 budget, QString *error)
    {
        const qsizetype before = firstBytes.size();
        if (deflate && !triedRaw && firstBytes.size() < 2)
            firstBytes += input.first(qMin<qsizetype>(2 - firstBytes.size(), input.size()));
        qsizetype at = 0;
        while (at < input.size()) {
            if (ended) {
                if (deflate) {
                    // Bytes after the end of a zlib stream: not ours to guess at.
                    *error = QStringLiteral("data after the end of the deflate stream");
                    return false;
                }
                // Another gzip member (RFC 1952 §2.2); zero padding after the last is common.
                if (input.at(at) == '\0') {
                    ++at;
                    continue;
                }
                if (inflateReset(&stream) != Z_OK) {
                    *error = QStringLiteral("zlib: cannot reset");
                    return false;
                }
                ended = false;
            }
            stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(input.data() + at));
            stream.avail_in = uInt(input.size() - at);
            char out[kOutChunk];
            stream.next_out = reinterpret_cast<Bytef *>(out);
            stream.avail_out = uInt(sizeof out);
            const int rc = inflate(&stream, Z_NO_FLUSH);
            const qsizetype produced = qsizetype(sizeof out) - qsizetype(stream.avail_out);
            const qsizetype used = (input.size() - at) - qsizetype(stream.avail_in);
            if (rc == Z_DATA_ERROR && deflate && !triedRaw && !sawOutput && stream.total_in <= 2) {
                // Not a zlib header: some servers send a raw deflate stream under "deflate".
                // Replayed from the stream's start (the header may have come in an earlier
                // piece).
                triedRaw = true;
                if (!init(-15)) {
                    *error = QStringLiteral("zlib: cannot start a raw inflate");
                    return false;
                }
                const QByteArray replay = firstBytes.left(before) + input.toByteArray();
                return feed(replay, output, budget, error);
            }
            if (rc != Z_OK && rc != Z_STREAM_END
                && !(rc == Z_BUF_ERROR && used == 0 && produced == 0)) {
                *error = QStringLiteral("the %1 data does not decode: %2")
                             .arg(QString::fromLatin1(name),
                                  QString::fromLatin1(stream.msg ? stream.msg : "zlib error"));
                return false;
            }
            if (produced > 0) {
                sawOutput = true;
                if (output->size() + produced > budget) {
                    *error = QStringLiteral("the decoded response grows more than %1 times its "
                                            "encoded size (a decompression bomb?)")
                                 .arg(ContentDecoder::kMaxRatio);
                    return false;
                }
                output->append(out, produced);
            }
            at += used;
            if (rc == Z_STREAM_END)
                ended = true;
            else if (used == 0 && produced == 0)
                break;
        }
        return true;
    }
};

ContentDecoder::ContentDecoder() = default;
ContentDecoder::ContentDecoder(ContentDecoder &&) noexcept = default;
ContentDecoder &ContentDecoder::operator=(ContentDecoder &&) noexcept = default;
ContentDecoder::~ContentDecoder() = default;

QList<QByteArray> ContentDecoder::parseCodings(QByteArrayView fieldValue)
{
    QList<QByteArray> codings;
    for (const QByteArray &member : fieldValue.toByteArray().split(',')) {
        const QByteArray coding = member.split(';').value(0).trimmed().toLower();
        if (!coding.isEmpty())
            codings.append(coding);
    }
    return codings;
}

std::optional<ContentDecoder> ContentDecoder::forCodings(const QList<QByteArray> &codings,
                                                         QString *error)
{
    ContentDecoder decoder;
    for (const QByteArray &coding : codings) {
        if (coding == "identity")
            continue;
        if (coding != "gzip" && coding != "x-gzip" && coding != "deflate") {
            *error = QStringLiteral("the response is encoded with '%1', which the gateway cannot "
                                    "decode to scrub it")
                         .arg(QString::fromLatin1(coding.left(64)));
            return std::nullopt;
        }
        if (int(decoder.m_layers.size()) == kMaxLayers) {
            *error = QStringLiteral("the response has more than %1 codings").arg(kMaxLayers);
            return std::nullopt;
        }
        auto layer = std::make_unique<Layer>(coding == "x-gzip" ? QByteArray("gzip") : coding);
        if (!layer->start()) {
            *error = QStringLiteral("zlib: cannot start an inflate stream");
            return std::nullopt;
        }
        decoder.m_layers.push_back(std::move(layer));
    }
    return decoder;
}

bool ContentDecoder::isIdentity() const
{
    return m_layers.empty();
}

bool ContentDecoder::feed(QByteArrayView bytes, QByteArray *output, QString *error)
{
    if (m_layers.empty()) {
        output->append(bytes);
        return true;
    }
    m_in += bytes.size();
    // The outermost coding (applied last) is undone first.
    QByteArray current = bytes.toByteArray();
    for (auto it = m_layers.rbegin(); it != m_layers.rend(); ++it) {
        QByteArray next;
        // Every layer's output is bounded by the same budget: an inner bomb cannot hide
        // behind an outer layer that compresses it further.
        if (!(*it)->feed(current, &next, kSlackBytes + kMaxRatio * m_in - m_out, error))
            return false;
        current = std::move(next);
    }
    m_out += current.size();
    output->append(current);
    return true;
}

} // namespace airlock::gateway
