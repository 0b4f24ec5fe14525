#include "core/agentwire/messages.h"

#include "core/agentwire/payloadreader.h"
#include "core/agentwire/payloadwriter.h"

#include <algorithm>

namespace airlock::agentwire {

namespace {

constexpr std::size_t kMaxSoftwareBytes = 256;
constexpr std::size_t kMaxMessageBytes = 1024;
constexpr std::size_t kMaxUserBytes = 32;
constexpr std::size_t kMaxEnvNameBytes = 256;
constexpr std::size_t kMaxCommandBytes = 256;
constexpr std::size_t kMaxProcesses = 64;
constexpr std::size_t kMaxListedRefusals = 64;
constexpr std::size_t kMaxReasonBytes = 64;
constexpr std::size_t kMaxHostnameBytes = 64;
constexpr std::size_t kMaxAddressBytes = 45; // INET6_ADDRSTRLEN - 1
constexpr std::size_t kMaxSeedNameBytes = 64;
constexpr std::size_t kMaxStepBytes = 16;
constexpr std::uint32_t kMaxSignal = 64;

using Why = std::optional<std::string>;

template<typename T, typename Write>
EncodeResult encodeWith(const T &message, Write write)
{
    if (Why why = message.validate())
        return std::unexpected(std::move(*why));
    PayloadWriter out;
    write(out);
    if (!out.ok())
        return std::unexpected(std::string("the message does not fit one frame"));
    return out.take();
}

template<typename T, typename Read>
std::optional<T> decodeWith(ByteView payload, Read read)
{
    PayloadReader in(payload);
    T message;
    read(in, message);
    if (!in.finish() || message.validate())
        return std::nullopt;
    return message;
}

bool isIn(char c, std::string_view set)
{
    return set.find(c) != std::string_view::npos;
}

bool isAlnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool isEnvName(std::string_view name)
{
    if (name.empty() || name.size() > kMaxEnvNameBytes || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return isAlnum(c) || c == '_'; });
}

bool isPlainFileName(std::string_view name)
{
    if (name.empty() || name.size() > kMaxSeedNameBytes || name[0] == '.')
        return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return isAlnum(c) || isIn(c, "._-"); });
}

bool isHostname(std::string_view name)
{
    return name.size() <= kMaxHostnameBytes && std::all_of(name.begin(), name.end(), [](char c) {
               return isAlnum(c) || isIn(c, "._-");
           });
}

bool isMac(std::string_view mac)
{
    if (mac.empty())
        return true;
    if (mac.size() != 17)
        return false;
    for (std::size_t i = 0; i < mac.size(); ++i) {
        const char c = mac[i];
        const bool ok = i % 3 == 2 ? c == ':' : (isAlnum(c) && isIn(c, "0123456789abcdefABCDEF"));
        if (!ok)
            return false;
    }
    return true;
}

bool isAddressText(std::string_view address)
{
    return address.size() <= kMaxAddressBytes
        && std::all_of(address.begin(), address.end(),
                       [](char c) { return isIn(c, "0123456789abcdefABCDEF.:"); });
}

bool isLowerWord(std::string_view word, std::size_t maxBytes)
{
    return !word.empty() && word.size() <= maxBytes
        && std::all_of(word.begin(), word.end(),
                       [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

Why pathWhy(std::string_view path, std::string_view what)
{
    if (!isValidPath(path))
        return std::string(what) + " is not an absolute path of at most 4096 bytes";
    return std::nullopt;
}

void writeInfo(PayloadWriter &out, const FileInfo &info)
{
    out.u8(static_cast<std::uint8_t>(info.kind))
        .u32(info.mode)
        .u64(info.size)
        .i64(info.mtimeNs)
        .u32(info.uid)
        .u32(info.gid)
        .str(info.name)
        .str(info.linkTarget);
}

FileInfo readInfo(PayloadReader &in)
{
    FileInfo info;
    const std::uint8_t kind = in.u8();
    if (kind < 1 || kind > 4)
        in.invalidate();
    info.kind = static_cast<FileKind>(kind);
    info.mode = in.u32();
    info.size = in.u64();
    info.mtimeNs = in.i64();
    info.uid = in.u32();
    info.gid = in.u32();
    info.name = in.str(kMaxPathBytes);
    info.linkTarget = in.str(kMaxPathBytes);
    return info;
}

} // namespace

bool isValidPath(std::string_view path)
{
    return !path.empty() && path.size() <= kMaxPathBytes && path[0] == '/'
        && path.find('\0') == std::string_view::npos;
}

bool isValidUserName(std::string_view name)
{
    if (name.empty() || name.size() > kMaxUserBytes
        || !((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

// Hello

Why Hello::validate() const
{
    if (software.size() > kMaxSoftwareBytes)
        return "software name over 256 bytes";
    if (maxPayload < 1024)
        return "a frame limit under 1024 bytes";
    return std::nullopt;
}

EncodeResult Hello::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.u16(version).u64(capabilities).u32(maxPayload).str(software);
    });
}

std::optional<Hello> Hello::decode(ByteView payload)
{
    return decodeWith<Hello>(payload, [](PayloadReader &in, Hello &m) {
        m.version = in.u16();
        m.capabilities = in.u64();
        m.maxPayload = in.u32();
        m.software = in.str(kMaxSoftwareBytes);
    });
}

// ErrorMessage

Why ErrorMessage::validate() const
{
    if (!isKnownErrorCode(static_cast<std::uint16_t>(code)))
        return "unknown error code";
    if (message.size() > kMaxMessageBytes)
        return "error message over 1024 bytes";
    return std::nullopt;
}

EncodeResult ErrorMessage::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.u16(static_cast<std::uint16_t>(code)).str(message);
    });
}

std::optional<ErrorMessage> ErrorMessage::decode(ByteView payload)
{
    return decodeWith<ErrorMessage>(payload, [](PayloadReader &in, ErrorMessage &m) {
        const std::uint16_t code = in.u16();
        if (!isKnownErrorCode(code))
            in.invalidate();
        m.code = static_cast<ErrorCode>(code);
        m.message = in.str(kMaxMessageBytes);
    });
}

// Credit

Why Credit::validate() const
{
    if (bytes == 0 || bytes > kMaxCreditWindow)
        return "a credit of 0 or over the window";
    return std::nullopt;
}

EncodeResult Credit::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u32(bytes); });
}

std::optional<Credit> Credit::decode(ByteView payload)
{
    return decodeWith<Credit>(payload, [](PayloadReader &in, Credit &m) { m.bytes = in.u32(); });
}

// ExecRequest

Why ExecRequest::validate() const
{
    if (argv.empty() || argv.size() > kMaxArgs)
        return "argv must hold 1 to 1024 arguments";
    if (shell && argv.size() != 1)
        return "a shell request holds one line";
    for (const std::string &arg : argv) {
        if (arg.size() > kMaxStringBytes || arg.find('\0') != std::string::npos)
            return "an argument over 32 KiB or with a NUL byte";
    }
    if (argv[0].empty())
        return "an empty command";
    if (env.size() > kMaxArgs)
        return "over 1024 environment entries";
    for (const auto &[name, value] : env) {
        if (!isEnvName(name))
            return "environment name '" + name + "' is not [A-Za-z_][A-Za-z0-9_]*";
        if (value.size() > kMaxStringBytes || value.find('\0') != std::string::npos)
            return "an environment value over 32 KiB or with a NUL byte";
    }
    if (!cwd.empty())
        if (Why why = pathWhy(cwd, "cwd"))
            return why;
    if (!user.empty() && !isValidUserName(user))
        return "user '" + user + "' is not a user name";
    if (pty && (rows == 0 || cols == 0))
        return "a PTY of zero rows or columns";
    return std::nullopt;
}

EncodeResult ExecRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        const std::uint8_t flags = (shell ? 1 : 0) | (stdinOpen ? 2 : 0) | (pty ? 4 : 0);
        out.u8(flags).u16(static_cast<std::uint16_t>(argv.size()));
        for (const std::string &arg : argv)
            out.str(arg);
        out.u16(static_cast<std::uint16_t>(env.size()));
        for (const auto &[name, value] : env)
            out.str(name).str(value);
        out.str(cwd).str(user).u16(rows).u16(cols).u32(timeoutMs);
    });
}

std::optional<ExecRequest> ExecRequest::decode(ByteView payload)
{
    return decodeWith<ExecRequest>(payload, [](PayloadReader &in, ExecRequest &m) {
        const std::uint8_t flags = in.u8();
        if ((flags & ~7u) != 0)
            in.invalidate();
        m.shell = flags & 1;
        m.stdinOpen = flags & 2;
        m.pty = flags & 4;
        const std::uint16_t argc = in.u16();
        if (argc > kMaxArgs)
            in.invalidate();
        for (std::uint16_t i = 0; i < argc && in.ok(); ++i)
            m.argv.push_back(in.str());
        const std::uint16_t envc = in.u16();
        if (envc > kMaxArgs)
            in.invalidate();
        for (std::uint16_t i = 0; i < envc && in.ok(); ++i) {
            std::string name = in.str(kMaxEnvNameBytes);
            std::string value = in.str();
            m.env.emplace_back(std::move(name), std::move(value));
        }
        m.cwd = in.str(kMaxPathBytes);
        m.user = in.str(kMaxUserBytes);
        m.rows = in.u16();
        m.cols = in.u16();
        m.timeoutMs = in.u32();
    });
}

// AttachRequest, Started

Why AttachRequest::validate() const
{
    if (pid == 0 || pid > 0x7fffffff)
        return "no such process id";
    return std::nullopt;
}

EncodeResult AttachRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u32(pid); });
}

std::optional<AttachRequest> AttachRequest::decode(ByteView payload)
{
    return decodeWith<AttachRequest>(payload,
                                     [](PayloadReader &in, AttachRequest &m) { m.pid = in.u32(); });
}

Why Started::validate() const
{
    if (pid == 0 || pid > 0x7fffffff)
        return "no such process id";
    return std::nullopt;
}

EncodeResult Started::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u32(pid); });
}

std::optional<Started> Started::decode(ByteView payload)
{
    return decodeWith<Started>(payload, [](PayloadReader &in, Started &m) { m.pid = in.u32(); });
}

// ExitStatus

Why ExitStatus::validate() const
{
    if (signaled ? (value < 1 || value > static_cast<std::int32_t>(kMaxSignal))
                 : (value < 0 || value > 255))
        return "an exit code outside 0..255 or a signal outside 1..64";
    if (timedOut && !signaled)
        return "a timeout that did not kill";
    return std::nullopt;
}

EncodeResult ExitStatus::encode() const
{
    return encodeWith(
        *this, [this](PayloadWriter &out) { out.boolean(signaled).i32(value).boolean(timedOut); });
}

std::optional<ExitStatus> ExitStatus::decode(ByteView payload)
{
    return decodeWith<ExitStatus>(payload, [](PayloadReader &in, ExitStatus &m) {
        m.signaled = in.boolean();
        m.value = in.i32();
        m.timedOut = in.boolean();
    });
}

// SignalRequest, ResizeRequest

Why SignalRequest::validate() const
{
    if (signal < 1 || signal > kMaxSignal)
        return "a signal outside 1..64";
    return std::nullopt;
}

EncodeResult SignalRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u32(signal); });
}

std::optional<SignalRequest> SignalRequest::decode(ByteView payload)
{
    return decodeWith<SignalRequest>(
        payload, [](PayloadReader &in, SignalRequest &m) { m.signal = in.u32(); });
}

Why ResizeRequest::validate() const
{
    if (rows == 0 || cols == 0)
        return "a PTY of zero rows or columns";
    return std::nullopt;
}

EncodeResult ResizeRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u16(rows).u16(cols); });
}

std::optional<ResizeRequest> ResizeRequest::decode(ByteView payload)
{
    return decodeWith<ResizeRequest>(payload, [](PayloadReader &in, ResizeRequest &m) {
        m.rows = in.u16();
        m.cols = in.u16();
    });
}

// ProcessList

Why ProcessList::validate() const
{
    if (processes.size() > kMaxProcesses)
        return "over 64 processes";
    for (const ProcessInfo &p : processes) {
        if (p.pid == 0 || p.pid > 0x7fffffff || p.user.size() > kMaxUserBytes
            || p.command.size() > kMaxCommandBytes)
            return "a process entry out of bounds";
    }
    return std::nullopt;
}

EncodeResult ProcessList::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.u16(static_cast<std::uint16_t>(processes.size()));
        for (const ProcessInfo &p : processes)
            out.u32(p.pid)
                .boolean(p.running)
                .boolean(p.attached)
                .boolean(p.pty)
                .str(p.user)
                .str(p.command);
    });
}

std::optional<ProcessList> ProcessList::decode(ByteView payload)
{
    return decodeWith<ProcessList>(payload, [](PayloadReader &in, ProcessList &m) {
        const std::uint16_t count = in.u16();
        if (count > kMaxProcesses)
            in.invalidate();
        for (std::uint16_t i = 0; i < count && in.ok(); ++i) {
            ProcessInfo p;
            p.pid = in.u32();
            p.running = in.boolean();
            p.attached = in.boolean();
            p.pty = in.boolean();
            p.user = in.str(kMaxUserBytes);
            p.command = in.str(kMaxCommandBytes);
            m.processes.push_back(std::move(p));
        }
    });
}

// StatRequest, FileInfo, StatResult

Why StatRequest::validate() const
{
    return pathWhy(path, "path");
}

EncodeResult StatRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path).boolean(follow); });
}

std::optional<StatRequest> StatRequest::decode(ByteView payload)
{
    return decodeWith<StatRequest>(payload, [](PayloadReader &in, StatRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.follow = in.boolean();
    });
}

Why FileInfo::validate() const
{
    const auto kindValue = static_cast<std::uint8_t>(kind);
    if (kindValue < 1 || kindValue > 4)
        return "unknown file kind";
    if (name.size() > kMaxPathBytes || linkTarget.size() > kMaxPathBytes)
        return "a name over 4096 bytes";
    if (kind != FileKind::Symlink && !linkTarget.empty())
        return "a link target on something that is not a symlink";
    return std::nullopt;
}

EncodeResult StatResult::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { writeInfo(out, info); });
}

std::optional<StatResult> StatResult::decode(ByteView payload)
{
    return decodeWith<StatResult>(payload,
                                  [](PayloadReader &in, StatResult &m) { m.info = readInfo(in); });
}

// ListRequest, ListResult

Why ListRequest::validate() const
{
    if (Why why = pathWhy(path, "path"))
        return why;
    if (depth == 0 || depth > 64)
        return "a depth outside 1..64";
    if (maxEntries == 0 || maxEntries > kMaxListEntries)
        return "maxEntries outside 1..100000";
    return std::nullopt;
}

EncodeResult ListRequest::encode() const
{
    return encodeWith(*this,
                      [this](PayloadWriter &out) { out.str(path).u16(depth).u32(maxEntries); });
}

std::optional<ListRequest> ListRequest::decode(ByteView payload)
{
    return decodeWith<ListRequest>(payload, [](PayloadReader &in, ListRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.depth = in.u16();
        m.maxEntries = in.u32();
    });
}

std::size_t ListResult::entryBytes(const FileInfo &info)
{
    return 1 + 4 + 8 + 8 + 4 + 4 + 2 + info.name.size() + 2 + info.linkTarget.size();
}

Why ListResult::validate() const
{
    for (const FileInfo &info : entries) {
        if (Why why = info.validate())
            return why;
        if (info.name.empty())
            return "a list entry without a name";
    }
    if (entries.size() > 0xffff)
        return "over 65535 entries in one batch";
    return std::nullopt;
}

EncodeResult ListResult::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.boolean(truncated).u16(static_cast<std::uint16_t>(entries.size()));
        for (const FileInfo &info : entries)
            writeInfo(out, info);
    });
}

std::optional<ListResult> ListResult::decode(ByteView payload)
{
    return decodeWith<ListResult>(payload, [](PayloadReader &in, ListResult &m) {
        m.truncated = in.boolean();
        const std::uint16_t count = in.u16();
        for (std::uint16_t i = 0; i < count && in.ok(); ++i)
            m.entries.push_back(readInfo(in));
    });
}

// ReadRequest, FileOpened, WriteRequest

Why ReadRequest::validate() const
{
    return pathWhy(path, "path");
}

EncodeResult ReadRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path).u64(offset).u64(length); });
}

std::optional<ReadRequest> ReadRequest::decode(ByteView payload)
{
    return decodeWith<ReadRequest>(payload, [](PayloadReader &in, ReadRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.offset = in.u64();
        m.length = in.u64();
    });
}

Why FileOpened::validate() const
{
    return std::nullopt;
}

EncodeResult FileOpened::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.u64(size).u32(mode); });
}

std::optional<FileOpened> FileOpened::decode(ByteView payload)
{
    return decodeWith<FileOpened>(payload, [](PayloadReader &in, FileOpened &m) {
        m.size = in.u64();
        m.mode = in.u32();
    });
}

Why WriteRequest::validate() const
{
    if (Why why = pathWhy(path, "path"))
        return why;
    if (mode > 07777)
        return "a mode over 07777";
    if (append && exclusive)
        return "append and exclusive together";
    return std::nullopt;
}

EncodeResult WriteRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        const std::uint8_t flags = (createParents ? 1 : 0) | (append ? 2 : 0) | (exclusive ? 4 : 0);
        out.str(path).u32(mode).u8(flags);
    });
}

std::optional<WriteRequest> WriteRequest::decode(ByteView payload)
{
    return decodeWith<WriteRequest>(payload, [](PayloadReader &in, WriteRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.mode = in.u32();
        const std::uint8_t flags = in.u8();
        if ((flags & ~7u) != 0)
            in.invalidate();
        m.createParents = flags & 1;
        m.append = flags & 2;
        m.exclusive = flags & 4;
    });
}

// WatchRequest, WatchRecord, WatchRecordDecoder

Why WatchRequest::validate() const
{
    return pathWhy(path, "path");
}

EncodeResult WatchRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path).boolean(recursive); });
}

std::optional<WatchRequest> WatchRequest::decode(ByteView payload)
{
    return decodeWith<WatchRequest>(payload, [](PayloadReader &in, WatchRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.recursive = in.boolean();
    });
}

Why WatchRecord::validate() const
{
    const auto value = static_cast<std::uint8_t>(op);
    if (value < 1 || value > 6)
        return "an unknown watch op";
    if (op == WatchOp::Overflow)
        return name.empty() ? Why() : Why("a name on an overflow record");
    if (name.empty() || name.size() > kMaxPathBytes || name.find('\0') != std::string::npos)
        return "a name that is empty, longer than 4096 bytes or holds a NUL";
    return std::nullopt;
}

bool WatchRecord::appendTo(Bytes &out) const
{
    if (validate())
        return false;
    out.push_back(static_cast<std::uint8_t>(op));
    out.push_back(std::uint8_t(name.size() & 0xff));
    out.push_back(std::uint8_t(name.size() >> 8));
    out.insert(out.end(), name.begin(), name.end());
    return true;
}

bool WatchRecordDecoder::feed(ByteView bytes, std::vector<WatchRecord> &records)
{
    if (m_failed)
        return false;
    std::size_t at = 0;
    while (at < bytes.size()) {
        // Take only what the current record still needs, so at most one record is held.
        std::size_t want = 3;
        if (m_pending.size() >= 3)
            want = 3 + (std::size_t(m_pending[1]) | (std::size_t(m_pending[2]) << 8));
        const std::size_t take = std::min(want - m_pending.size(), bytes.size() - at);
        m_pending.insert(m_pending.end(), bytes.begin() + std::ptrdiff_t(at),
                         bytes.begin() + std::ptrdiff_t(at + take));
        at += take;
        if (m_pending.size() < 3)
            continue;
        // The length is known now: refused at once when too long, else the record is complete
        // when it holds that many name bytes.
        const std::size_t length = std::size_t(m_pending[1]) | (std::size_t(m_pending[2]) << 8);
        if (length > kMaxPathBytes) {
            m_failed = true;
            return false;
        }
        if (m_pending.size() < 3 + length)
            continue;
        WatchRecord record;
        record.op = static_cast<WatchOp>(m_pending[0]);
        record.name.assign(m_pending.begin() + 3, m_pending.end());
        m_pending.clear();
        if (record.validate()) {
            m_failed = true;
            return false;
        }
        records.push_back(std::move(record));
    }
    return true;
}

// MkdirRequest, RemoveRequest, RenameRequest

Why MkdirRequest::validate() const
{
    if (Why why = pathWhy(path, "path"))
        return why;
    if (mode > 07777)
        return "a mode over 07777";
    return std::nullopt;
}

EncodeResult MkdirRequest::encode() const
{
    return encodeWith(*this,
                      [this](PayloadWriter &out) { out.str(path).u32(mode).boolean(parents); });
}

std::optional<MkdirRequest> MkdirRequest::decode(ByteView payload)
{
    return decodeWith<MkdirRequest>(payload, [](PayloadReader &in, MkdirRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.mode = in.u32();
        m.parents = in.boolean();
    });
}

Why RemoveRequest::validate() const
{
    return pathWhy(path, "path");
}

EncodeResult RemoveRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path).boolean(recursive); });
}

std::optional<RemoveRequest> RemoveRequest::decode(ByteView payload)
{
    return decodeWith<RemoveRequest>(payload, [](PayloadReader &in, RemoveRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.recursive = in.boolean();
    });
}

Why RenameRequest::validate() const
{
    if (Why why = pathWhy(from, "from"))
        return why;
    return pathWhy(to, "to");
}

EncodeResult RenameRequest::encode() const
{
    return encodeWith(*this,
                      [this](PayloadWriter &out) { out.str(from).str(to).boolean(noReplace); });
}

std::optional<RenameRequest> RenameRequest::decode(ByteView payload)
{
    return decodeWith<RenameRequest>(payload, [](PayloadReader &in, RenameRequest &m) {
        m.from = in.str(kMaxPathBytes);
        m.to = in.str(kMaxPathBytes);
        m.noReplace = in.boolean();
    });
}

// Archives

Why ArchiveOutRequest::validate() const
{
    return pathWhy(path, "path");
}

EncodeResult ArchiveOutRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path); });
}

std::optional<ArchiveOutRequest> ArchiveOutRequest::decode(ByteView payload)
{
    return decodeWith<ArchiveOutRequest>(
        payload, [](PayloadReader &in, ArchiveOutRequest &m) { m.path = in.str(kMaxPathBytes); });
}

Why ArchiveInRequest::validate() const
{
    if (Why why = pathWhy(path, "path"))
        return why;
    if (!user.empty() && !isValidUserName(user))
        return "user '" + user + "' is not a user name";
    return std::nullopt;
}

EncodeResult ArchiveInRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(path).str(user); });
}

std::optional<ArchiveInRequest> ArchiveInRequest::decode(ByteView payload)
{
    return decodeWith<ArchiveInRequest>(payload, [](PayloadReader &in, ArchiveInRequest &m) {
        m.path = in.str(kMaxPathBytes);
        m.user = in.str(kMaxUserBytes);
    });
}

Why ArchiveResult::validate() const
{
    if (refusals.size() > kMaxListedRefusals || refusals.size() > refusedCount)
        return "more refusals listed than counted or than 64";
    for (const auto &[path, reason] : refusals) {
        if (path.size() > kMaxPathBytes || !isLowerWord(reason, kMaxReasonBytes))
            return "a refusal out of bounds";
    }
    return std::nullopt;
}

EncodeResult ArchiveResult::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.u64(entries)
            .u64(bytes)
            .u32(refusedCount)
            .u16(static_cast<std::uint16_t>(refusals.size()));
        for (const auto &[path, reason] : refusals)
            out.str(path).str(reason);
    });
}

std::optional<ArchiveResult> ArchiveResult::decode(ByteView payload)
{
    return decodeWith<ArchiveResult>(payload, [](PayloadReader &in, ArchiveResult &m) {
        m.entries = in.u64();
        m.bytes = in.u64();
        m.refusedCount = in.u32();
        const std::uint16_t count = in.u16();
        if (count > kMaxListedRefusals)
            in.invalidate();
        for (std::uint16_t i = 0; i < count && in.ok(); ++i) {
            std::string path = in.str(kMaxPathBytes);
            std::string reason = in.str(kMaxReasonBytes);
            m.refusals.emplace_back(std::move(path), std::move(reason));
        }
    });
}

// Identity

Why IdentityRequest::validate() const
{
    if (!isHostname(hostname))
        return "hostname '" + hostname + "' is not [A-Za-z0-9._-]{0,64}";
    if (!isMac(mac))
        return "mac '" + mac + "' is not xx:xx:xx:xx:xx:xx";
    for (const std::string *text : {&address, &gateway, &dns}) {
        if (!isAddressText(*text))
            return "'" + *text + "' is not an address";
    }
    if (!address.empty() && (prefixLength > 128 || gateway.empty()))
        return "an address without a prefix length or a gateway";
    if (entropy.size() > kMaxEntropyBytes)
        return "over 4096 bytes of entropy";
    if (fileCount > kMaxIdentityFiles)
        return "over 16 seed files";
    return std::nullopt;
}

EncodeResult IdentityRequest::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) {
        out.str(hostname)
            .str(mac)
            .str(address)
            .u8(prefixLength)
            .str(gateway)
            .str(dns)
            .blob(entropy);
        out.u16(fileCount);
    });
}

std::optional<IdentityRequest> IdentityRequest::decode(ByteView payload)
{
    return decodeWith<IdentityRequest>(payload, [](PayloadReader &in, IdentityRequest &m) {
        m.hostname = in.str(kMaxHostnameBytes);
        m.mac = in.str(17);
        m.address = in.str(kMaxAddressBytes);
        m.prefixLength = in.u8();
        m.gateway = in.str(kMaxAddressBytes);
        m.dns = in.str(kMaxAddressBytes);
        m.entropy = in.blob(kMaxEntropyBytes);
        m.fileCount = in.u16();
    });
}

Why IdentityFile::validate() const
{
    if (!isPlainFileName(name))
        return "seed file name '" + name + "' is not a plain file name";
    if (mode > 07777)
        return "a mode over 07777";
    if (content.size() > kMaxIdentityFileBytes)
        return "a seed file over 60 KiB";
    return std::nullopt;
}

EncodeResult IdentityFile::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(name).u32(mode).blob(content); });
}

std::optional<IdentityFile> IdentityFile::decode(ByteView payload)
{
    return decodeWith<IdentityFile>(payload, [](PayloadReader &in, IdentityFile &m) {
        m.name = in.str(kMaxSeedNameBytes);
        m.mode = in.u32();
        m.content = in.blob(kMaxIdentityFileBytes);
    });
}

Why IdentityFail::validate() const
{
    if (!isLowerWord(step, kMaxStepBytes))
        return "a step name outside [a-z_]{1,16}";
    return std::nullopt;
}

EncodeResult IdentityFail::encode() const
{
    return encodeWith(*this, [this](PayloadWriter &out) { out.str(step); });
}

std::optional<IdentityFail> IdentityFail::decode(ByteView payload)
{
    return decodeWith<IdentityFail>(
        payload, [](PayloadReader &in, IdentityFail &m) { m.step = in.str(kMaxStepBytes); });
}

} // namespace airlock::agentwire
