#include "core/agentwire/archiveformat.h"

#include "core/agentwire/byteorder.h"

#include <algorithm>
#include <cstring>
#include <sys/stat.h>

namespace airlock::agentwire {

namespace {

/// The type bits each kind allows.
bool modeMatches(ArchiveKind kind, std::uint32_t mode)
{
    const std::uint32_t type = mode & S_IFMT;
    switch (kind) {
    case ArchiveKind::File:
    case ArchiveKind::Hardlink:
        return type == S_IFREG;
    case ArchiveKind::Directory:
        return type == S_IFDIR;
    case ArchiveKind::Symlink:
        return type == S_IFLNK;
    case ArchiveKind::Other:
        return type == S_IFIFO || type == S_IFSOCK || type == S_IFCHR || type == S_IFBLK;
    case ArchiveKind::End:
        return mode == 0;
    }
    return false;
}

std::optional<std::string> entryWhy(const ArchiveEntry &entry)
{
    if (entry.kind == ArchiveKind::End)
        return "an end record inside the stream";
    if (static_cast<std::uint8_t>(entry.kind) > 5)
        return "unknown entry kind";
    if (!modeMatches(entry.kind, entry.mode))
        return "a mode whose type does not match the entry kind";
    if ((entry.mode & ~(S_IFMT | 07777u)) != 0)
        return "unknown mode bits";
    if (entry.path.empty() || entry.path.size() > kMaxPathBytes
        || entry.path.find('\0') != std::string::npos)
        return "a path that is empty, over 4096 bytes or holds NUL";
    const bool linked = entry.kind == ArchiveKind::Symlink || entry.kind == ArchiveKind::Hardlink;
    if (linked != !entry.link.empty())
        return "a link target on an entry that is no link, or a link without one";
    if (entry.link.size() > kMaxPathBytes || entry.link.find('\0') != std::string::npos)
        return "a link target over 4096 bytes or with NUL";
    if (entry.kind != ArchiveKind::File && entry.size != 0)
        return "content on an entry that is no file";
    return std::nullopt;
}

} // namespace

std::string_view archiveKindName(ArchiveKind kind)
{
    switch (kind) {
    case ArchiveKind::End:
        return "end";
    case ArchiveKind::File:
        return "file";
    case ArchiveKind::Directory:
        return "directory";
    case ArchiveKind::Symlink:
        return "symlink";
    case ArchiveKind::Hardlink:
        return "hardlink";
    case ArchiveKind::Other:
        return "other";
    }
    return "unknown";
}

void appendArchiveStart(Bytes &out)
{
    out.insert(out.end(), std::begin(kArchiveMagic), std::end(kArchiveMagic));
}

bool appendArchiveRecord(Bytes &out, const ArchiveEntry &entry)
{
    if (entryWhy(entry))
        return false;
    const std::size_t at = out.size();
    out.resize(at + kArchiveRecordBytes);
    std::uint8_t *p = out.data() + at;
    p[0] = static_cast<std::uint8_t>(entry.kind);
    storeLe<std::uint32_t>(p + 1, entry.mode);
    storeLe<std::uint64_t>(p + 5, static_cast<std::uint64_t>(entry.mtimeNs));
    storeLe<std::uint16_t>(p + 13, static_cast<std::uint16_t>(entry.path.size()));
    storeLe<std::uint16_t>(p + 15, static_cast<std::uint16_t>(entry.link.size()));
    storeLe<std::uint64_t>(p + 17, entry.size);
    out.insert(out.end(), entry.path.begin(), entry.path.end());
    out.insert(out.end(), entry.link.begin(), entry.link.end());
    return true;
}

void appendArchiveEnd(Bytes &out)
{
    out.insert(out.end(), kArchiveRecordBytes, 0);
}

bool ArchiveDecoder::fail(std::string why)
{
    m_state = State::Failed;
    m_error = std::move(why);
    return false;
}

bool ArchiveDecoder::parseFixed()
{
    const std::uint8_t *p = m_buffer.data();
    if (p[0] > 5)
        return fail("unknown entry kind " + std::to_string(p[0]));
    m_entry = ArchiveEntry {};
    m_entry.kind = static_cast<ArchiveKind>(p[0]);
    m_entry.mode = loadLe<std::uint32_t>(p + 1);
    m_entry.mtimeNs = static_cast<std::int64_t>(loadLe<std::uint64_t>(p + 5));
    m_pathLength = loadLe<std::uint16_t>(p + 13);
    m_linkLength = loadLe<std::uint16_t>(p + 15);
    m_entry.size = loadLe<std::uint64_t>(p + 17);
    if (m_entry.kind == ArchiveKind::End) {
        if (!std::all_of(m_buffer.begin(), m_buffer.end(), [](std::uint8_t b) { return b == 0; }))
            return fail("an end record with fields set");
        m_state = State::Finished;
        m_sink.end();
        return true;
    }
    if (m_pathLength == 0 || m_pathLength > kMaxPathBytes || m_linkLength > kMaxPathBytes)
        return fail("a path or link length out of bounds");
    m_state = State::Names;
    m_need = std::size_t(m_pathLength) + m_linkLength;
    m_buffer.clear();
    return true;
}

bool ArchiveDecoder::parseNames()
{
    const char *p = reinterpret_cast<const char *>(m_buffer.data());
    m_entry.path.assign(p, m_pathLength);
    m_entry.link.assign(p + m_pathLength, m_linkLength);
    if (auto why = entryWhy(m_entry))
        return fail(*why);
    m_buffer.clear();
    if (!m_sink.entry(m_entry)) {
        m_stopped = true;
        m_state = State::Failed;
        return false;
    }
    if (m_entry.kind == ArchiveKind::File && m_entry.size > 0) {
        m_state = State::Content;
        m_contentLeft = m_entry.size;
        return true;
    }
    if (m_entry.kind == ArchiveKind::File && !m_sink.entryDone()) {
        m_stopped = true;
        m_state = State::Failed;
        return false;
    }
    m_state = State::Fixed;
    m_need = kArchiveRecordBytes;
    return true;
}

bool ArchiveDecoder::feed(ByteView bytes)
{
    while (!bytes.empty()) {
        switch (m_state) {
        case State::Failed:
            return false;
        case State::Finished:
            return fail("bytes after the end record");
        case State::Content: {
            const std::size_t n =
                static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), m_contentLeft));
            if (!m_sink.content(bytes.first(n))) {
                m_stopped = true;
                m_state = State::Failed;
                return false;
            }
            bytes = bytes.subspan(n);
            m_contentLeft -= n;
            if (m_contentLeft == 0) {
                if (!m_sink.entryDone()) {
                    m_stopped = true;
                    m_state = State::Failed;
                    return false;
                }
                m_state = State::Fixed;
                m_need = kArchiveRecordBytes;
            }
            break;
        }
        case State::Magic:
        case State::Fixed:
        case State::Names: {
            const std::size_t n = std::min(bytes.size(), m_need - m_buffer.size());
            m_buffer.insert(m_buffer.end(), bytes.begin(), bytes.begin() + n);
            bytes = bytes.subspan(n);
            if (m_buffer.size() < m_need)
                break;
            if (m_state == State::Magic) {
                if (!std::equal(m_buffer.begin(), m_buffer.end(), std::begin(kArchiveMagic)))
                    return fail("not an archive stream (magic)");
                m_buffer.clear();
                m_state = State::Fixed;
                m_need = kArchiveRecordBytes;
            } else if (m_state == State::Fixed) {
                if (!parseFixed())
                    return false;
                if (m_state == State::Names && m_need == 0 && !parseNames())
                    return false;
            } else if (!parseNames()) {
                return false;
            }
            break;
        }
        }
    }
    return m_state != State::Failed;
}

} // namespace airlock::agentwire
