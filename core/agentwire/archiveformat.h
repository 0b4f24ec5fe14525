#pragma once

// The archive stream of ArchiveOut and ArchiveIn (docs/agent-protocol.md, "Archive stream"):
// a tar-like sequence of typed records, carried in Data frames without regard to their
// boundaries. Typed so that a receiver sees what each entry is (a symlink and its target, a
// hard link, a FIFO or device, setuid bits) before anything is written, and can refuse it.
//
//   stream  := "ALA1" record* end
//   record  := kind:u8 mode:u32 mtimeNs:i64 pathLength:u16 linkLength:u16 size:u64
//              path[pathLength] link[linkLength] content[size]
//   end     := a record of kind 0 with every field zero

#include "core/agentwire/wire.h"

#include <optional>
#include <string>

namespace airlock::agentwire {

inline constexpr std::uint8_t kArchiveMagic[4] = {'A', 'L', 'A', '1'};
/// Bytes of a record's fixed part.
inline constexpr std::size_t kArchiveRecordBytes = 25;

enum class ArchiveKind : std::uint8_t {
    End = 0,
    File = 1, ///< mode S_IFREG; `size` content bytes follow
    Directory = 2, ///< mode S_IFDIR
    Symlink = 3, ///< mode S_IFLNK; `link` is its target, as stored
    Hardlink = 4, ///< mode S_IFREG; `link` is the path of an earlier File entry
    Other = 5, ///< a FIFO, socket or device: mode says which; nothing follows
};

/// One record. Paths are relative to the archive's folder, '/'-separated, as the sender
/// wrote them: the receiver decides whether they are acceptable (archivepolicy.h).
struct ArchiveEntry
{
    ArchiveKind kind = ArchiveKind::File;
    std::uint32_t mode = 0; ///< st_mode with the type bits and setuid/setgid/sticky
    std::int64_t mtimeNs = 0;
    std::string path;
    std::string link;
    std::uint64_t size = 0;
};

/// "file", "directory", "symlink", "hardlink", "other", "end".
std::string_view archiveKindName(ArchiveKind kind);

/// Appends the stream's magic.
void appendArchiveStart(Bytes &out);
/// Appends `entry`'s record without its content (the caller appends `size` bytes after it).
/// False (nothing appended) when the entry would not decode: see ArchiveDecoder.
bool appendArchiveRecord(Bytes &out, const ArchiveEntry &entry);
/// Appends the end record.
void appendArchiveEnd(Bytes &out);

/// What an ArchiveDecoder hands its receiver.
class ArchiveSink
{
public:
    virtual ~ArchiveSink() = default;
    /// A record; for a File, its content follows through content() and then entryDone().
    /// Returning false stops the decoder (the receiver failed).
    virtual bool entry(const ArchiveEntry &entry) = 0;
    virtual bool content(ByteView bytes) = 0;
    virtual bool entryDone() = 0;
    /// The end record came.
    virtual void end() = 0;
};

/// Decodes an archive stream incrementally and strictly: the magic, then records whose kind
/// is known, whose mode's type bits match the kind (an Other is a FIFO, socket or device),
/// whose path is 1..kMaxPathBytes bytes without NUL, whose link is present exactly for
/// symlinks and hard links, whose size is zero except for files; nothing after the end.
/// A record's fixed part and names are buffered (at most 8 KiB); content passes through.
class ArchiveDecoder
{
public:
    explicit ArchiveDecoder(ArchiveSink &sink) : m_sink(sink) { }

    /// Feeds bytes; false on a format error (error()) or when the sink refused (stopped()).
    bool feed(ByteView bytes);
    /// True when the end record came.
    bool finished() const { return m_state == State::Finished; }
    const std::optional<std::string> &error() const { return m_error; }
    bool stopped() const { return m_stopped; }

private:
    enum class State : std::uint8_t { Magic, Fixed, Names, Content, Finished, Failed };
    bool fail(std::string why);
    bool parseFixed();
    bool parseNames();

    ArchiveSink &m_sink;
    State m_state = State::Magic;
    Bytes m_buffer;
    std::size_t m_need = 4;
    ArchiveEntry m_entry;
    std::uint16_t m_pathLength = 0;
    std::uint16_t m_linkLength = 0;
    std::uint64_t m_contentLeft = 0;
    std::optional<std::string> m_error;
    bool m_stopped = false;
};

} // namespace airlock::agentwire
