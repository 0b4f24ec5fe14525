#include "core/agentwire/wire.h"

namespace airlock::agentwire {

namespace {

struct TypeInfo
{
    MessageType type;
    Sender sender;
    std::string_view name;
};

constexpr TypeInfo kTypes[] = {
    {MessageType::Hello, Sender::Both, "hello"},
    {MessageType::Ok, Sender::Guest, "ok"},
    {MessageType::Error, Sender::Guest, "error"},
    {MessageType::Credit, Sender::Both, "credit"},
    {MessageType::Cancel, Sender::Host, "cancel"},
    {MessageType::Ping, Sender::Host, "ping"},
    {MessageType::Pong, Sender::Guest, "pong"},
    {MessageType::End, Sender::Both, "end"},
    {MessageType::Data, Sender::Both, "data"},
    {MessageType::Exec, Sender::Host, "exec"},
    {MessageType::Attach, Sender::Host, "attach"},
    {MessageType::Started, Sender::Guest, "started"},
    {MessageType::Stdout, Sender::Guest, "stdout"},
    {MessageType::Stderr, Sender::Guest, "stderr"},
    {MessageType::Exit, Sender::Guest, "exit"},
    {MessageType::Stdin, Sender::Host, "stdin"},
    {MessageType::StdinClose, Sender::Host, "stdin_close"},
    {MessageType::Signal, Sender::Host, "signal"},
    {MessageType::Resize, Sender::Host, "resize"},
    {MessageType::ListProcesses, Sender::Host, "list_processes"},
    {MessageType::ProcessList, Sender::Guest, "process_list"},
    {MessageType::Stat, Sender::Host, "stat"},
    {MessageType::StatResult, Sender::Guest, "stat_result"},
    {MessageType::List, Sender::Host, "list"},
    {MessageType::ListResult, Sender::Guest, "list_result"},
    {MessageType::Read, Sender::Host, "read"},
    {MessageType::FileOpened, Sender::Guest, "file_opened"},
    {MessageType::Write, Sender::Host, "write"},
    {MessageType::Mkdir, Sender::Host, "mkdir"},
    {MessageType::Remove, Sender::Host, "remove"},
    {MessageType::Rename, Sender::Host, "rename"},
    {MessageType::Watch, Sender::Host, "watch"},
    {MessageType::ArchiveOut, Sender::Host, "archive_out"},
    {MessageType::ArchiveIn, Sender::Host, "archive_in"},
    {MessageType::ArchiveResult, Sender::Guest, "archive_result"},
    {MessageType::Identity, Sender::Host, "identity"},
    {MessageType::IdentityFile, Sender::Host, "identity_file"},
    {MessageType::IdentityFail, Sender::Guest, "identity_fail"},
};

constexpr std::string_view kErrorNames[] = {
    "",
    "not_found",
    "is_a_directory",
    "not_a_directory",
    "exists",
    "permission",
    "invalid",
    "not_empty",
    "io",
    "no_space",
    "busy",
    "too_large",
    "unsupported",
    "canceled",
    "limit",
    "protocol_error",
    "internal",
};

} // namespace

std::optional<Sender> senderOf(std::uint8_t type)
{
    for (const TypeInfo &info : kTypes) {
        if (static_cast<std::uint8_t>(info.type) == type)
            return info.sender;
    }
    return std::nullopt;
}

std::string_view messageTypeName(MessageType type)
{
    for (const TypeInfo &info : kTypes) {
        if (info.type == type)
            return info.name;
    }
    return "unknown";
}

bool isKnownErrorCode(std::uint16_t value)
{
    return value >= 1 && value < std::size(kErrorNames);
}

std::string_view errorCodeName(ErrorCode code)
{
    const auto value = static_cast<std::uint16_t>(code);
    return isKnownErrorCode(value) ? kErrorNames[value] : std::string_view("internal");
}

} // namespace airlock::agentwire
