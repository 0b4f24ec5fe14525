#pragma once

#include "guest/agent/stream.h"

namespace airlock::guest {

/// Read: FileOpened (size, mode), then the bytes in Data frames within the host's credit,
/// then End. Only regular files (a directory is is_a_directory, a FIFO or device invalid);
/// a file that shrinks meanwhile ends the stream with an Error `io`.
class FileReadStream : public Stream
{
public:
    FileReadStream(Connection &connection, std::uint32_t id, std::uint64_t request);
    ~FileReadStream() override;

    /// Opens the file and sends FileOpened, or an Error that ends the stream.
    void open(const agentwire::ReadRequest &request);
    bool canProduce() const override;
    void produce() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    int m_fd = -1;
    std::uint64_t m_left = 0;
    std::string m_path;
};

} // namespace airlock::guest
