#pragma once

#include "core/model/error.h"
#include "core/snapshot/chunkdigest.h"

#include <QByteArray>
#include <QString>

#include <vector>

namespace airlock {

/// What one snapshot holds: named objects (guest memory, device state, later disks), each a
/// byte string of `size` bytes cut into fixed-size chunks named by their SHA-256 (the zero
/// digest for an all-zero chunk, which is stored as a hole). Manifests are self-contained:
/// every snapshot lists all of its chunks, so any snapshot can be deleted without touching
/// another.
///
/// File format (docs/snapshots.md), all integers little-endian:
///   "AIRLKSNP" | u32 version (1) | u32 body length L | L bytes: zstd frame of the body |
///   32 bytes SHA-256 of everything before it.
/// Body: u32 object count, then per object: u16 name length, name (UTF-8), u64 size,
///   u32 chunk size, u32 chunk count (= ceil(size / chunk size)), count × 32-byte digests.
struct Manifest
{
    static constexpr quint32 kVersion = 1;
    static constexpr qint64 kMaxBodyBytes = 512LL * 1024 * 1024; ///< 32 GiB of 16 KiB chunks

    struct Object
    {
        QString name; ///< e.g. "memory", "device-state"; 1..64 bytes of [a-z0-9:.-]
        qint64 size = 0; ///< bytes
        quint32 chunkSize = 0; ///< bytes; a power of two from 4 KiB to 4 MiB
        std::vector<ChunkDigest> chunks;

        friend bool operator==(const Object &, const Object &) = default;
    };

    std::vector<Object> objects;

    /// The object named `name`, or nullptr.
    const Object *find(const QString &name) const;
    /// Checks names, sizes and chunk counts (the rules above). InvalidParams naming the object.
    Result<void> validate() const;
    QByteArray serialize() const;
    /// Parses and validates; OperationFailed ("damaged manifest: why") on any mismatch,
    /// including a wrong trailing hash.
    static Result<Manifest> parse(const QByteArray &bytes);

    friend bool operator==(const Manifest &, const Manifest &) = default;
};

} // namespace airlock
