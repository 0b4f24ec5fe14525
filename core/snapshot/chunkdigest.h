#pragma once

#include <QString>

#include <array>
#include <compare>
#include <optional>
#include <span>

namespace airlock {

/// The SHA-256 of one chunk's uncompressed bytes (OpenSSL EVP), which is also its name in the
/// chunk store. The all-zero value never names stored bytes: it marks a chunk that is all zero
/// bytes (a hole), which the store keeps no file for.
struct ChunkDigest
{
    static constexpr int kSize = 32;
    std::array<unsigned char, kSize> bytes {};

    /// SHA-256 of `data`.
    static ChunkDigest of(std::span<const char> data);
    /// The hole marker (all zero).
    static ChunkDigest zero() { return {}; }
    /// Parses 64 lower-case hex digits; nullopt otherwise.
    static std::optional<ChunkDigest> fromHex(QStringView hex);

    bool isZero() const;
    /// 64 lower-case hex digits.
    QString hex() const;

    friend auto operator<=>(const ChunkDigest &, const ChunkDigest &) = default;
};

/// True when every byte of `data` is zero (such chunks are stored as holes).
bool isAllZero(std::span<const char> data);

} // namespace airlock
