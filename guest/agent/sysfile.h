#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace airlock::guest {

/// The content of a small file (at most `maxBytes`), or std::nullopt when it cannot be read
/// or is larger. No iostreams: they would double the static binary.
std::optional<std::string> readSmallFile(const std::string &path, std::size_t maxBytes = 1 << 20);

/// Writes `content` to `path` through a temporary file in the same folder and rename(2), with
/// permission bits `mode`. False with errno set on failure.
bool writeFileAtomically(const std::string &path, std::string_view content, unsigned mode = 0644);

/// mkdir -p: creates `path` and its missing parents with `mode`. False with errno set.
bool makeDirectories(const std::string &path, unsigned mode = 0755);

} // namespace airlock::guest
