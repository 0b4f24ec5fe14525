#include "guest/agent/filereadstream.h"

#include "guest/agent/fileops.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

FileReadStream::FileReadStream(Connection &connection, std::uint32_t id, std::uint64_t request)
    : Stream(connection, id, request)
{ }

FileReadStream::~FileReadStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void FileReadStream::open(const ReadRequest &request)
{
    m_path = request.path;
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    m_fd = ::open(request.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (m_fd < 0) {
        const auto failure = fileops::failure(errno, "cannot open", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    struct stat st
    {
    };
    ::fstat(m_fd, &st);
    if (S_ISDIR(st.st_mode)) {
        failWith(ErrorCode::IsADirectory, request.path + " is a directory");
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        failWith(ErrorCode::Invalid, request.path + " is not a regular file");
        return;
    }
    ::fcntl(m_fd, F_SETFL, 0);
    const std::uint64_t size = std::uint64_t(st.st_size);
    const std::uint64_t offset = std::min(request.offset, size);
    m_left = size - offset;
    if (request.length > 0)
        m_left = std::min(m_left, request.length);
    if (offset > 0 && ::lseek(m_fd, off_t(offset), SEEK_SET) < 0) {
        failWith(ErrorCode::Io, "cannot seek in " + request.path);
        return;
    }
    if (auto payload = FileOpened {m_left, st.st_mode}.encode())
        send(MessageType::FileOpened, *payload);
    if (m_left == 0) {
        send(MessageType::End);
        finish();
    }
}

bool FileReadStream::canProduce() const
{
    return !finished() && m_left > 0 && sendable() > 0;
}

void FileReadStream::produce()
{
    std::uint8_t buffer[kMaxPayloadBytes];
    while (canProduce()) {
        const std::size_t want = std::size_t(std::min<std::uint64_t>(sendable(), m_left));
        const ssize_t n = ::read(m_fd, buffer, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            failWith(ErrorCode::Io,
                     n == 0 ? m_path + " shrank while it was read"
                            : fileops::failure(errno, "cannot read", m_path).message);
            return;
        }
        m_sendCredit.spend(std::uint64_t(n));
        m_left -= std::uint64_t(n);
        send(MessageType::Data, ByteView(buffer, std::size_t(n)));
        if (m_left == 0) {
            send(MessageType::End);
            finish();
        }
    }
}

std::optional<ProtocolError> FileReadStream::onFrame(const Frame &)
{
    return ProtocolError::Unexpected;
}

} // namespace airlock::guest
