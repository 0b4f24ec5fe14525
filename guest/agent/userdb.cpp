#include "guest/agent/userdb.h"

#include "guest/agent/sysfile.h"

#include <charconv>

namespace airlock::guest {

namespace {

std::vector<std::string_view> fields(std::string_view line)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t colon = line.find(':', start);
        out.push_back(
            line.substr(start, colon == std::string_view::npos ? line.npos : colon - start));
        if (colon == std::string_view::npos)
            return out;
        start = colon + 1;
    }
}

std::vector<std::string_view> lines(std::string_view text)
{
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        out.push_back(text.substr(0, newline));
        if (newline == std::string_view::npos)
            break;
        text.remove_prefix(newline + 1);
    }
    return out;
}

template<typename T>
bool number(std::string_view text, T &out)
{
    unsigned long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()
        || value > 0xfffffffeul)
        return false;
    out = static_cast<T>(value);
    return true;
}

} // namespace

std::optional<UserEntry> lookupUser(std::string_view name, const std::string &passwdPath,
                                    const std::string &groupPath)
{
    const std::optional<std::string> passwd = readSmallFile(passwdPath);
    if (!passwd)
        return std::nullopt;
    std::optional<UserEntry> user;
    for (std::string_view line : lines(*passwd)) {
        if (user)
            break;
        const auto f = fields(line);
        if (f.size() != 7 || f[0] != name)
            continue;
        UserEntry entry;
        entry.name = std::string(name);
        if (!number(f[2], entry.uid) || !number(f[3], entry.gid))
            continue;
        entry.home = f[5].empty() ? std::string("/") : std::string(f[5]);
        entry.shell = f[6].empty() ? std::string("/bin/sh") : std::string(f[6]);
        user = std::move(entry);
    }
    if (!user)
        return std::nullopt;
    user->groups.push_back(user->gid);
    const std::string group = readSmallFile(groupPath).value_or(std::string());
    for (std::string_view line : lines(group)) {
        const auto f = fields(line);
        gid_t gid = 0;
        if (f.size() != 4 || !number(f[2], gid) || gid == user->gid)
            continue;
        std::string_view members = f[3];
        while (!members.empty()) {
            const std::size_t comma = members.find(',');
            if (members.substr(0, comma) == name) {
                user->groups.push_back(gid);
                break;
            }
            if (comma == std::string_view::npos)
                break;
            members.remove_prefix(comma + 1);
        }
    }
    return user;
}

} // namespace airlock::guest
