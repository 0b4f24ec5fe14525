#include "core/snapshot/chunkdigest.h"

#include <openssl/evp.h>

#include <cstring>

namespace airlock {

ChunkDigest ChunkDigest::of(std::span<const char> data)
{
    ChunkDigest digest;
    unsigned int length = 0;
    // EVP_Digest is the one-shot form of EVP_DigestInit/Update/Final; SHA-256 cannot fail on
    // a valid buffer.
    EVP_Digest(data.data(), data.size(), digest.bytes.data(), &length, EVP_sha256(), nullptr);
    return digest;
}

std::optional<ChunkDigest> ChunkDigest::fromHex(QStringView hex)
{
    if (hex.size() != kSize * 2)
        return std::nullopt;
    ChunkDigest digest;
    for (int i = 0; i < kSize; ++i) {
        int value = 0;
        for (int half = 0; half < 2; ++half) {
            const QChar c = hex.at(i * 2 + half);
            int nibble;
            if (c >= u'0' && c <= u'9')
                nibble = c.unicode() - u'0';
            else if (c >= u'a' && c <= u'f')
                nibble = c.unicode() - u'a' + 10;
            else
                return std::nullopt;
            value = value * 16 + nibble;
        }
        digest.bytes[size_t(i)] = static_cast<unsigned char>(value);
    }
    return digest;
}

bool ChunkDigest::isZero() const
{
    return *this == ChunkDigest {};
}

QString ChunkDigest::hex() const
{
    static constexpr char digits[] = "0123456789abcdef";
    QString text(kSize * 2, Qt::Uninitialized);
    for (int i = 0; i < kSize; ++i) {
        text[i * 2] = QLatin1Char(digits[bytes[size_t(i)] >> 4]);
        text[i * 2 + 1] = QLatin1Char(digits[bytes[size_t(i)] & 0xf]);
    }
    return text;
}

bool isAllZero(std::span<const char> data)
{
    // Word at a time; memcmp against a shifted copy of itself is the classic trick but reads
    // the buffer twice.
    size_t i = 0;
    for (; i + sizeof(quint64) <= data.size(); i += sizeof(quint64)) {
        quint64 word;
        std::memcpy(&word, data.data() + i, sizeof word);
        if (word != 0)
            return false;
    }
    for (; i < data.size(); ++i) {
        if (data[i] != 0)
            return false;
    }
    return true;
}

} // namespace airlock
