#pragma once

// Typed payloads of the agent protocol (docs/agent-protocol.md, "Messages"). Each message is a
// struct with:
//   std::optional<std::string> validate() const;  // why its values are not allowed
//   std::expected<Bytes, std::string> encode() const;  // validate(), then the payload bytes
//   static std::optional<T> decode(ByteView payload);  // strict: every byte, validate()
// The same validate() runs on both ends, so a payload one end encodes the other decodes, and
// whatever a hostile peer sends that encode() would not produce is refused by decode().
// Data-carrying types (Data, Stdout, Stderr, Stdin, Ping, Pong) have raw payloads and no
// struct; End, Ok, Cancel, StdinClose and ListProcesses have empty payloads.

#include "core/agentwire/wire.h"

#include <expected>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace airlock::agentwire {

/// True for an absolute path of at most kMaxPathBytes bytes (NUL bytes never decode).
bool isValidPath(std::string_view path);
/// True for a name of at most 32 bytes in [a-z_][a-z0-9_-]* (a user from /etc/passwd).
bool isValidUserName(std::string_view name);

using EncodeResult = std::expected<Bytes, std::string>;

/// Both ends, first frame of a connection: the host's Hello asks the guest to start the
/// connection over; the guest answers with its own under the same request id, and also sends
/// one unasked (request id 0) when it starts and when it sees a new host on its port.
struct Hello
{
    std::uint16_t version = kVersion;
    std::uint64_t capabilities = 0; ///< Capability bits
    std::uint32_t maxPayload = kMaxPayloadBytes; ///< largest payload the sender accepts
    std::string software; ///< "airlock-agent 0.1.0", at most 256 bytes

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<Hello> decode(ByteView payload);
};

/// Guest: a request or stream failed. Also sent on stream 0 with request id 0 when the guest
/// could not parse the host's bytes (code ProtocolError), before it resynchronises.
struct ErrorMessage
{
    ErrorCode code = ErrorCode::Internal;
    std::string message; ///< for people, at most 1024 bytes

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ErrorMessage> decode(ByteView payload);
};

/// Both: the receiver of the stream's data grants `bytes` more (non-zero).
struct Credit
{
    std::uint32_t bytes = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<Credit> decode(ByteView payload);
};

/// Host: start a process. The stream id of the frame is the new stream.
struct ExecRequest
{
    /// argv[0] is looked up in PATH (of `env` or the default); with `shell`, argv holds one
    /// line that `/bin/sh -c` runs.
    std::vector<std::string> argv;
    bool shell = false;
    /// Added to (or replacing entries of) the default environment: PATH, HOME, USER, LOGNAME,
    /// SHELL, TERM with a PTY, and the seed's /run/airlock/env. Names [A-Za-z_][A-Za-z0-9_]*.
    std::vector<std::pair<std::string, std::string>> env;
    std::string cwd; ///< absolute; empty: the user's home
    std::string user; ///< a name from the guest's /etc/passwd; empty: root
    bool stdinOpen = false; ///< false: stdin is /dev/null
    bool pty = false; ///< stdin, stdout and stderr on one pseudo terminal; no Stderr frames
    std::uint16_t rows = 24; ///< PTY size (both non-zero with pty)
    std::uint16_t cols = 80;
    std::uint32_t timeoutMs = 0; ///< 0: none; at the deadline the process group gets SIGKILL

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ExecRequest> decode(ByteView payload);
};

/// Host: bind process `pid` (from ProcessList) to the frame's new stream.
struct AttachRequest
{
    std::uint32_t pid = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<AttachRequest> decode(ByteView payload);
};

/// Guest: the stream's process runs (pid in the guest).
struct Started
{
    std::uint32_t pid = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<Started> decode(ByteView payload);
};

/// Guest: the process ended and its output was all sent; the last frame of an exec stream.
struct ExitStatus
{
    bool signaled = false; ///< value is a signal number (1..64) instead of an exit code
    std::int32_t value = 0; ///< exit code 0..255 or signal number
    bool timedOut = false; ///< killed by the request's timeout (then signaled, SIGKILL)

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ExitStatus> decode(ByteView payload);
};

/// Host: signal number 1..64 for the stream's process group.
struct SignalRequest
{
    std::uint32_t signal = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<SignalRequest> decode(ByteView payload);
};

/// Host: the stream's PTY is now rows x cols (both non-zero).
struct ResizeRequest
{
    std::uint16_t rows = 0;
    std::uint16_t cols = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ResizeRequest> decode(ByteView payload);
};

/// One process the guest agent started and still keeps (running, or ended and not yet
/// reported to a stream).
struct ProcessInfo
{
    std::uint32_t pid = 0;
    bool running = false;
    bool attached = false; ///< bound to a stream of the current connection
    bool pty = false;
    std::string user; ///< at most 32 bytes
    std::string command; ///< the argv joined by spaces, cut at 256 bytes
};

/// Guest: answer to ListProcesses, one frame (the guest keeps at most 64 processes).
struct ProcessList
{
    std::vector<ProcessInfo> processes;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ProcessList> decode(ByteView payload);
};

/// Host: stat a path (lstat unless `follow`).
struct StatRequest
{
    std::string path;
    bool follow = false;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<StatRequest> decode(ByteView payload);
};

enum class FileKind : std::uint8_t { File = 1, Directory = 2, Symlink = 3, Other = 4 };

/// What stat and list say about one path.
struct FileInfo
{
    FileKind kind = FileKind::File;
    std::uint32_t mode = 0; ///< st_mode, type bits included (S_IFIFO tells an Other apart)
    std::uint64_t size = 0;
    std::int64_t mtimeNs = 0; ///< nanoseconds since the epoch
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    /// stat: the base name; list: the path relative to the listed folder ("a/b").
    std::string name;
    std::string linkTarget; ///< symlinks only

    std::optional<std::string> validate() const;
};

/// Guest: answer to Stat.
struct StatResult
{
    FileInfo info;

    std::optional<std::string> validate() const { return info.validate(); }
    EncodeResult encode() const;
    static std::optional<StatResult> decode(ByteView payload);
};

/// Host: list a folder down to `depth` levels (1: its entries), at most `maxEntries`.
struct ListRequest
{
    std::string path;
    std::uint16_t depth = 1;
    std::uint32_t maxEntries = 10000;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ListRequest> decode(ByteView payload);
};

/// Guest: a batch of list entries; the last batch has kFlagEnd and says whether entries were
/// left out for maxEntries.
struct ListResult
{
    bool truncated = false;
    std::vector<FileInfo> entries;

    /// Bytes one entry adds to an encoded ListResult (to cut batches below kMaxPayloadBytes).
    static std::size_t entryBytes(const FileInfo &info);
    /// Bytes of an encoded ListResult without entries.
    static constexpr std::size_t kBaseBytes = 3;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ListResult> decode(ByteView payload);
};

/// Host: stream `length` bytes (0: to the end) of a regular file from `offset` out, on the
/// frame's new stream: FileOpened, Data within credits, End.
struct ReadRequest
{
    std::string path;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ReadRequest> decode(ByteView payload);
};

/// Guest: the file to read is open; `size` bytes will follow (fewer if it shrinks: an Error).
struct FileOpened
{
    std::uint64_t size = 0;
    std::uint32_t mode = 0;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<FileOpened> decode(ByteView payload);
};

/// Host: stream bytes into a file on the frame's new stream: the guest opens it and grants
/// Credit, the host sends Data within credits and End, the guest answers Ok or Error.
struct WriteRequest
{
    std::string path;
    std::uint32_t mode = 0644; ///< permission bits of a new file (at most 07777)
    bool createParents = false;
    bool append = false;
    bool exclusive = false; ///< fail with `exists` when the file exists

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<WriteRequest> decode(ByteView payload);
};

/// Host: create a folder; with `parents`, its missing parents too and no error when it exists.
struct MkdirRequest
{
    std::string path;
    std::uint32_t mode = 0755;
    bool parents = false;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<MkdirRequest> decode(ByteView payload);
};

/// Host: remove a file, symlink or empty folder; with `recursive`, a folder and its content
/// (never following symlinks). "/" is refused.
struct RemoveRequest
{
    std::string path;
    bool recursive = false;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<RemoveRequest> decode(ByteView payload);
};

/// Host: rename `from` to `to`; with `noReplace`, fail with `exists` when `to` exists.
struct RenameRequest
{
    std::string from;
    std::string to;
    bool noReplace = false;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<RenameRequest> decode(ByteView payload);
};

/// Host: watch the folder `path` (and, with `recursive`, the folders under it, at most
/// kMaxWatchedFolders) on the frame's new stream: the guest answers FileOpened (size 0, the
/// folder's mode) once the watch is set, then WatchRecord records in Data frames within
/// credits, until the host cancels (or an Error: the folder went).
struct WatchRequest
{
    std::string path;
    bool recursive = false;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<WatchRequest> decode(ByteView payload);
};

/// Folders one recursive watch covers at most; folders beyond it are not watched (the
/// stream says so once with a WatchOp::Overflow record).
inline constexpr std::size_t kMaxWatchedFolders = 1024;

/// What happened to an entry of a watched folder (E2B's filesystem EventType, plus Overflow:
/// events were lost, the kernel's queue or kMaxWatchedFolders ran over).
enum class WatchOp : std::uint8_t {
    Create = 1,
    Write = 2,
    Remove = 3,
    Rename = 4, ///< moved away from this name
    Chmod = 5,
    Overflow = 6, ///< name empty
};

/// One change of a watch stream: `u8 op, str name` (name relative to the watched folder,
/// 1..kMaxPathBytes bytes without NUL; empty only for Overflow). Records are packed into the
/// stream's Data frames without regard to frame boundaries, like the archive stream.
struct WatchRecord
{
    WatchOp op = WatchOp::Create;
    std::string name;

    std::optional<std::string> validate() const;
    /// Appends the record's bytes to `out`; false (nothing appended) when it is not valid.
    bool appendTo(Bytes &out) const;
};

/// Splits a watch stream's bytes into records, across any frame boundaries. Holds at most one
/// incomplete record (3 + kMaxPathBytes bytes); a record that does not validate is an error
/// that sticks.
class WatchRecordDecoder
{
public:
    /// Takes `bytes` and appends the complete records to `records`; false once the stream
    /// broke the format (an unknown op, a bad name).
    bool feed(ByteView bytes, std::vector<WatchRecord> &records);
    bool failed() const { return m_failed; }

private:
    Bytes m_pending;
    bool m_failed = false;
};

/// Host: stream the folder `path` out as an archive (archiveformat.h) in Data frames within
/// credits, then End.
struct ArchiveOutRequest
{
    std::string path;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ArchiveOutRequest> decode(ByteView payload);
};

/// Host: extract the archive the host streams (Data within the guest's credits, End) into
/// the folder `path` (created when missing), owned by `user` (empty: root). Answered with
/// ArchiveResult, or Error.
struct ArchiveInRequest
{
    std::string path;
    std::string user;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ArchiveInRequest> decode(ByteView payload);
};

/// Guest: what an archive in wrote, and the first refusals (path, reason) of what it did not.
struct ArchiveResult
{
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;
    std::uint32_t refusedCount = 0;
    std::vector<std::pair<std::string, std::string>> refusals; ///< at most 64 listed

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<ArchiveResult> decode(ByteView payload);
};

/// Host: a restored guest's new identity (docs/snapshots.md, "Guest agent"); fileCount
/// IdentityFile frames under the same request id follow, then the guest applies it and answers
/// Ok or IdentityFail.
struct IdentityRequest
{
    std::string hostname; ///< [A-Za-z0-9._-], at most 64 bytes; empty: unchanged
    std::string mac; ///< "02:61:6c:00:00:01" or empty
    std::string address; ///< IPv4/IPv6 text or empty (no network change)
    std::uint8_t prefixLength = 0;
    std::string gateway;
    std::string dns;
    Bytes entropy; ///< at most kMaxEntropyBytes, written to /dev/urandom
    std::uint16_t fileCount = 0; ///< at most kMaxIdentityFiles

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<IdentityRequest> decode(ByteView payload);
};

/// Host: one seed file of an identity refresh (the complete set replaces /run/airlock).
struct IdentityFile
{
    std::string name; ///< a plain file name [A-Za-z0-9_-][A-Za-z0-9._-]*, at most 64 bytes
    std::uint32_t mode = 0644;
    Bytes content; ///< at most kMaxIdentityFileBytes

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<IdentityFile> decode(ByteView payload);
};

/// Guest: the refresh failed; `step` is the first failed step (entropy, name, files,
/// network), the shell agent's names.
struct IdentityFail
{
    std::string step;

    std::optional<std::string> validate() const;
    EncodeResult encode() const;
    static std::optional<IdentityFail> decode(ByteView payload);
};

/// Empty payloads (Ok, End, Cancel, StdinClose, ListProcesses): true when `payload` is empty.
inline bool isEmptyPayload(ByteView payload)
{
    return payload.empty();
}

} // namespace airlock::agentwire
