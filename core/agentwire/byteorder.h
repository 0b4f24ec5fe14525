#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>

namespace airlock::agentwire {

/// Reads an unsigned integer stored little-endian at `at` (any alignment), whatever the host's
/// byte order: the protocol's byte order is explicit, not the machine's.
template<std::unsigned_integral T>
T loadLe(const std::uint8_t *at)
{
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
        value = static_cast<T>(value | static_cast<T>(static_cast<T>(at[i]) << (8 * i)));
    return value;
}

/// Stores `value` little-endian at `at`.
template<std::unsigned_integral T>
void storeLe(std::uint8_t *at, T value)
{
    for (std::size_t i = 0; i < sizeof(T); ++i)
        at[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

} // namespace airlock::agentwire
