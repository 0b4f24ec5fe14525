#pragma once

// The guest agent wire protocol, version 2 (docs/agent-protocol.md): constants and the names
// both ends share. No Qt: the guest agent (guest/agent) links this library statically.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace airlock::agentwire {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

/// Version carried in every frame header. Protocol 1 was the shell agent's ASCII lines.
inline constexpr std::uint8_t kVersion = 2;
/// The first two bytes of every frame: "AL".
inline constexpr std::uint16_t kMagic = 0x4c41;
/// Fixed header in front of every payload (docs/agent-protocol.md, "Frame").
inline constexpr std::size_t kHeaderBytes = 24;
/// Largest payload of one frame; a header announcing more is a protocol error before any of
/// the payload is read, so a decoder never holds more than kHeaderBytes + kMaxPayloadBytes.
inline constexpr std::size_t kMaxPayloadBytes = 64 * 1024;
/// Longest path or file name in any message.
inline constexpr std::size_t kMaxPathBytes = 4096;
/// Longest other string (user names, messages, environment values, a shell line).
inline constexpr std::size_t kMaxStringBytes = 32 * 1024;
/// Arguments and environment entries of one exec request.
inline constexpr std::size_t kMaxArgs = 1024;
/// Credit a receiver may grant a stream beyond what it already granted and has not received:
/// a grant that takes the window past this is a protocol error.
inline constexpr std::uint64_t kMaxCreditWindow = 16 * 1024 * 1024;
/// Seed files of one identity refresh, and the largest of them (one frame each).
inline constexpr std::size_t kMaxIdentityFiles = 16;
inline constexpr std::size_t kMaxIdentityFileBytes = 60 * 1024;
/// Entropy bytes of one identity refresh.
inline constexpr std::size_t kMaxEntropyBytes = 4096;
/// Entries one list request may ask for.
inline constexpr std::uint32_t kMaxListEntries = 100000;

/// Frame flags. Every bit not defined here must be zero.
inline constexpr std::uint16_t kFlagEnd = 0x0001; ///< last frame of a multi-frame answer

/// Who sends a message type; a decoder rejects types its peer never sends.
enum class Sender : std::uint8_t { Host = 1, Guest = 2, Both = 3 };

/// Message types (the header's `type` byte). docs/agent-protocol.md lists each payload.
enum class MessageType : std::uint8_t {
    Hello = 0x01, ///< both: version, capabilities, frame limit, software
    Ok = 0x02, ///< guest: a request succeeded (no payload)
    Error = 0x03, ///< guest: a request or stream failed (ErrorCode, message)
    Credit = 0x04, ///< both: the sender may send this many more data bytes on the stream
    Cancel = 0x05, ///< host: drop the stream (an exec stream detaches, its process runs on)
    Ping = 0x06, ///< host: echo request
    Pong = 0x07, ///< guest: echo answer
    End = 0x08, ///< both: no more data on this stream in the sender's direction
    Data = 0x09, ///< both: file or archive bytes of a stream (credited)

    Exec = 0x10, ///< host: start a process on a new stream
    Attach = 0x11, ///< host: bind a running or finished process to a new stream
    Started = 0x12, ///< guest: the stream's process runs (pid)
    Stdout = 0x13, ///< guest: process output (credited)
    Stderr = 0x14, ///< guest: process error output (credited)
    Exit = 0x15, ///< guest: the process ended; last frame of an exec stream
    Stdin = 0x16, ///< host: process input (credited)
    StdinClose = 0x17, ///< host: end of process input
    Signal = 0x18, ///< host: send a signal to the process group
    Resize = 0x19, ///< host: new PTY size
    ListProcesses = 0x1a, ///< host
    ProcessList = 0x1b, ///< guest

    Stat = 0x20, ///< host
    StatResult = 0x21, ///< guest
    List = 0x22, ///< host
    ListResult = 0x23, ///< guest, one or more frames, the last with kFlagEnd
    Read = 0x24, ///< host: stream a file's bytes out
    FileOpened = 0x25, ///< guest: the file to read is open (size, mode)
    Write = 0x26, ///< host: stream bytes into a file
    Mkdir = 0x27, ///< host
    Remove = 0x28, ///< host
    Rename = 0x29, ///< host
    Watch = 0x2a, ///< host: stream a folder's changes out (inotify)

    ArchiveOut = 0x30, ///< host: stream a folder out as an archive
    ArchiveIn = 0x31, ///< host: stream an archive into a folder
    ArchiveResult = 0x32, ///< guest: what an archive in wrote and refused

    Identity = 0x40, ///< host: begin an identity refresh
    IdentityFile = 0x41, ///< host: one seed file of the refresh
    IdentityFail = 0x42, ///< guest: the refresh failed at a step
};

/// Who may send `type`; std::nullopt for values MessageType does not define.
std::optional<Sender> senderOf(std::uint8_t type);
/// "exec", "stdout", ...; "unknown" for other values.
std::string_view messageTypeName(MessageType type);

/// Error codes of an Error frame: why a request or stream failed in the guest.
enum class ErrorCode : std::uint16_t {
    NotFound = 1, ///< ENOENT, no such user, no such process id
    IsADirectory = 2, ///< EISDIR, or a directory where a file is expected
    NotADirectory = 3, ///< ENOTDIR, or a file where a directory is expected
    Exists = 4, ///< EEXIST
    Permission = 5, ///< EACCES, EPERM
    Invalid = 6, ///< a malformed or impossible request (relative path, bad mode)
    NotEmpty = 7, ///< ENOTEMPTY
    Io = 8, ///< EIO and other failures of the operation
    NoSpace = 9, ///< ENOSPC, EDQUOT
    Busy = 10, ///< the process is attached to another stream
    TooLarge = 11, ///< EFBIG, a name over kMaxPathBytes
    Unsupported = 12, ///< a capability this agent lacks
    Canceled = 13, ///< the answer to Cancel: the stream ended
    Limit = 14, ///< too many processes or streams
    ProtocolError = 15, ///< the guest could not parse what the host sent
    Internal = 16,
};

/// "not_found", "is_a_directory", ...; "internal" for values outside the enum.
std::string_view errorCodeName(ErrorCode code);
/// True for the values ErrorCode defines.
bool isKnownErrorCode(std::uint16_t value);

/// Capability bits of Hello.
enum Capability : std::uint64_t {
    kCapExec = 1 << 0,
    kCapPty = 1 << 1,
    kCapFiles = 1 << 2,
    kCapArchive = 1 << 3,
    kCapIdentity = 1 << 4,
    kCapAttach = 1 << 5,
    kCapWatch = 1 << 6,
};

} // namespace airlock::agentwire
