#pragma once

#include "guest/agent/stream.h"

namespace airlock::guest {

/// Write: the guest opens the file (parents, append, exclusive, mode of a new file) and grants
/// kWindow of credit, writes each Data frame as it comes and re-grants what it wrote; End
/// closes the file and is answered Ok. An open or write failure is an Error that ends the
/// stream (later Data for it is ignored).
class FileWriteStream : public Stream
{
public:
    static constexpr std::uint32_t kWindow = 256 * 1024;

    FileWriteStream(Connection &connection, std::uint32_t id, std::uint64_t request);
    ~FileWriteStream() override;

    void open(const agentwire::WriteRequest &request);
    void poke() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    int m_fd = -1;
    std::string m_path;
    std::uint32_t m_ungranted = 0;
};

} // namespace airlock::guest
