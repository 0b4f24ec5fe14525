#include "core/snapshot/manifest.h"

#include <QRegularExpression>
#include <QtEndian>

#include <zstd.h>

#include <cstring>

namespace airlock {

namespace {

constexpr char kMagic[8] = {'A', 'I', 'R', 'L', 'K', 'S', 'N', 'P'};

template<typename T>
void put(QByteArray &out, T value)
{
    char bytes[sizeof(T)];
    qToLittleEndian(value, bytes);
    out.append(bytes, sizeof(T));
}

/// Reads little-endian integers and byte runs from a buffer; every read is bounds-checked.
class Reader
{
public:
    explicit Reader(const QByteArray &bytes) : m_bytes(bytes) { }
    template<typename T>
    bool get(T &value)
    {
        if (m_bytes.size() - m_pos < qsizetype(sizeof(T)))
            return false;
        value = qFromLittleEndian<T>(m_bytes.constData() + m_pos);
        m_pos += sizeof(T);
        return true;
    }
    bool take(char *out, qsizetype count)
    {
        if (count < 0 || m_bytes.size() - m_pos < count)
            return false;
        std::memcpy(out, m_bytes.constData() + m_pos, size_t(count));
        m_pos += count;
        return true;
    }
    bool atEnd() const { return m_pos == m_bytes.size(); }

private:
    const QByteArray &m_bytes;
    qsizetype m_pos = 0;
};

std::unexpected<Error> damaged(const QString &why)
{
    return fail(ErrorKind::OperationFailed, QStringLiteral("damaged manifest: %1").arg(why));
}

} // namespace

const Manifest::Object *Manifest::find(const QString &name) const
{
    for (const Object &object : objects) {
        if (object.name == name)
            return &object;
    }
    return nullptr;
}

Result<void> Manifest::validate() const
{
    static const QRegularExpression namePattern(QStringLiteral("^[a-z0-9][a-z0-9:.-]{0,63}$"));
    for (const Object &object : objects) {
        if (!namePattern.match(object.name).hasMatch())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("object name '%1' is not [a-z0-9][a-z0-9:.-]{0,63}")
                            .arg(object.name));
        const bool powerOfTwo =
            object.chunkSize != 0 && (object.chunkSize & (object.chunkSize - 1)) == 0;
        if (!powerOfTwo || object.chunkSize < 4096 || object.chunkSize > 4 * 1024 * 1024)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("object '%1': chunk size %2 is not a power of two "
                                       "from 4 KiB to 4 MiB")
                            .arg(object.name)
                            .arg(object.chunkSize));
        if (object.size < 0)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("object '%1': negative size").arg(object.name));
        const qint64 expected = (object.size + object.chunkSize - 1) / object.chunkSize;
        if (qint64(object.chunks.size()) != expected)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("object '%1': %2 chunks for %3 bytes, expected %4")
                            .arg(object.name)
                            .arg(object.chunks.size())
                            .arg(object.size)
                            .arg(expected));
        for (const Object &other : objects) {
            if (&other != &object && other.name == object.name)
                return fail(ErrorKind::InvalidParams,
                            QStringLiteral("object '%1' appears twice").arg(object.name));
        }
    }
    return {};
}

QByteArray Manifest::serialize() const
{
    QByteArray body;
    put<quint32>(body, quint32(objects.size()));
    for (const Object &object : objects) {
        const QByteArray name = object.name.toUtf8();
        put<quint16>(body, quint16(name.size()));
        body.append(name);
        put<quint64>(body, quint64(object.size));
        put<quint32>(body, object.chunkSize);
        put<quint32>(body, quint32(object.chunks.size()));
        for (const ChunkDigest &digest : object.chunks)
            body.append(reinterpret_cast<const char *>(digest.bytes.data()), ChunkDigest::kSize);
    }
    QByteArray frame(qsizetype(ZSTD_compressBound(size_t(body.size()))), Qt::Uninitialized);
    const size_t size =
        ZSTD_compress(frame.data(), size_t(frame.size()), body.constData(), size_t(body.size()), 3);
    // Compressing into a buffer of ZSTD_compressBound cannot fail.
    frame.truncate(qsizetype(size));

    QByteArray out(kMagic, sizeof kMagic);
    put<quint32>(out, kVersion);
    put<quint32>(out, quint32(frame.size()));
    out.append(frame);
    const ChunkDigest trailer = ChunkDigest::of(out);
    out.append(reinterpret_cast<const char *>(trailer.bytes.data()), ChunkDigest::kSize);
    return out;
}

Result<Manifest> Manifest::parse(const QByteArray &bytes)
{
    constexpr qsizetype header = sizeof kMagic + 8;
    if (bytes.size() < header + ChunkDigest::kSize)
        return damaged(QStringLiteral("too short"));
    if (std::memcmp(bytes.constData(), kMagic, sizeof kMagic) != 0)
        return damaged(QStringLiteral("no AIRLKSNP magic"));
    const QByteArray covered = bytes.left(bytes.size() - ChunkDigest::kSize);
    ChunkDigest trailer;
    std::memcpy(trailer.bytes.data(), bytes.constData() + covered.size(), ChunkDigest::kSize);
    if (ChunkDigest::of(covered) != trailer)
        return damaged(QStringLiteral("its SHA-256 does not match"));
    Reader head(covered);
    char magic[sizeof kMagic];
    quint32 version = 0;
    quint32 frameSize = 0;
    head.take(magic, sizeof magic);
    head.get(version);
    head.get(frameSize);
    if (version != kVersion)
        return damaged(QStringLiteral("version %1 is not %2").arg(version).arg(kVersion));
    if (qsizetype(frameSize) != covered.size() - header)
        return damaged(QStringLiteral("wrong body length"));
    const char *frame = covered.constData() + header;
    const unsigned long long bodySize = ZSTD_getFrameContentSize(frame, frameSize);
    if (bodySize == ZSTD_CONTENTSIZE_ERROR || bodySize == ZSTD_CONTENTSIZE_UNKNOWN
        || bodySize > quint64(kMaxBodyBytes))
        return damaged(QStringLiteral("no valid zstd frame"));
    QByteArray body(qsizetype(bodySize), Qt::Uninitialized);
    const size_t got = ZSTD_decompress(body.data(), size_t(body.size()), frame, frameSize);
    if (ZSTD_isError(got) || got != bodySize)
        return damaged(QStringLiteral("zstd frame does not decompress"));

    Reader reader(body);
    Manifest manifest;
    quint32 count = 0;
    if (!reader.get(count) || count > 1024)
        return damaged(QStringLiteral("bad object count"));
    for (quint32 i = 0; i < count; ++i) {
        Object object;
        quint16 nameSize = 0;
        quint64 size = 0;
        quint32 chunkCount = 0;
        QByteArray name;
        if (!reader.get(nameSize) || nameSize > 64)
            return damaged(QStringLiteral("bad object name"));
        name.resize(nameSize);
        if (!reader.take(name.data(), nameSize) || !reader.get(size)
            || !reader.get(object.chunkSize) || !reader.get(chunkCount)
            || size > quint64(std::numeric_limits<qint64>::max()))
            return damaged(QStringLiteral("truncated object header"));
        object.name = QString::fromUtf8(name);
        object.size = qint64(size);
        if (qint64(chunkCount) * ChunkDigest::kSize > body.size())
            return damaged(QStringLiteral("chunk count beyond the body"));
        object.chunks.resize(chunkCount);
        for (ChunkDigest &digest : object.chunks) {
            if (!reader.take(reinterpret_cast<char *>(digest.bytes.data()), ChunkDigest::kSize))
                return damaged(QStringLiteral("truncated chunk list"));
        }
        manifest.objects.push_back(std::move(object));
    }
    if (!reader.atEnd())
        return damaged(QStringLiteral("trailing bytes"));
    if (auto ok = manifest.validate(); !ok)
        return damaged(ok.error().message);
    return manifest;
}

} // namespace airlock
