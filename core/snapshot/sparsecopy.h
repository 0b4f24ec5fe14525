#pragma once

#include "core/model/error.h"

#include <QString>

#include <span>

namespace airlock {

/// A private in-memory copy of a (sparse) file, e.g. a guest's RAM file taken while the guest
/// is paused so it can run on while the copy is chunked and stored. Only the file's data
/// extents (SEEK_DATA/SEEK_HOLE) are read; holes stay untouched pages of an anonymous mapping,
/// which read as zero and cost no memory.
class SparseCopy
{
public:
    /// Copies the regular file at `path` (never through a symlink). OperationFailed on errors.
    static Result<SparseCopy> of(const QString &path);
    /// Gives file `to` the size of `from` and copies only `from`'s data extents into it
    /// (copy_file_range(2), in the kernel), so holes stay holes. Returns the bytes copied.
    static Result<qint64> copyExtents(int from, int to);
    ~SparseCopy();
    SparseCopy(SparseCopy &&other) noexcept;
    SparseCopy &operator=(SparseCopy &&) = delete;
    SparseCopy(const SparseCopy &) = delete;

    std::span<const char> bytes() const { return {m_data, m_size}; }
    /// Bytes actually read (the file's data extents).
    qint64 dataBytes() const { return m_dataBytes; }

private:
    SparseCopy() = default;
    char *m_data = nullptr;
    size_t m_size = 0;
    qint64 m_dataBytes = 0;
};

} // namespace airlock
