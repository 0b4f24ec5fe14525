#include "guest/agent/filewritestream.h"

#include "guest/agent/fileops.h"
#include "guest/agent/sysfile.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

FileWriteStream::FileWriteStream(Connection &connection, std::uint32_t id, std::uint64_t request)
    : Stream(connection, id, request)
{ }

FileWriteStream::~FileWriteStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void FileWriteStream::open(const WriteRequest &request)
{
    m_path = request.path;
    if (request.createParents) {
        const std::string parent = request.path.substr(0, request.path.rfind('/'));
        if (!parent.empty() && !makeDirectories(parent)) {
            const auto failure = fileops::failure(errno, "cannot create the folder of", m_path);
            failWith(failure.code, failure.message);
            return;
        }
    }
    struct stat st
    {
    };
    const bool existed = ::stat(m_path.c_str(), &st) == 0;
    if (existed && S_ISDIR(st.st_mode)) {
        failWith(ErrorCode::IsADirectory, m_path + " is a directory");
        return;
    }
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
    flags |= request.exclusive ? O_EXCL : request.append ? O_APPEND : O_TRUNC;
    m_fd = ::open(m_path.c_str(), flags, request.mode);
    if (m_fd < 0) {
        const auto failure = fileops::failure(errno, "cannot open", m_path);
        failWith(failure.code, failure.message);
        return;
    }
    if (!existed)
        ::fchmod(m_fd, request.mode); // the exact mode, whatever the umask
    grant(kWindow);
}

std::optional<ProtocolError> FileWriteStream::onFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::Data: {
        if (!m_receiveCredit.spend(frame.payload.size()))
            return ProtocolError::CreditExceeded;
        const std::uint8_t *at = frame.payload.data();
        std::size_t left = frame.payload.size();
        while (left > 0) {
            const ssize_t n = ::write(m_fd, at, left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const auto failure = fileops::failure(n < 0 ? errno : EIO, "cannot write", m_path);
                failWith(failure.code, failure.message);
                return std::nullopt;
            }
            at += n;
            left -= std::size_t(n);
        }
        m_ungranted += std::uint32_t(frame.payload.size());
        return std::nullopt;
    }
    case MessageType::End: {
        if (!frame.payload.empty())
            return ProtocolError::BadPayload;
        const int fd = m_fd;
        m_fd = -1;
        if (::close(fd) != 0) {
            const auto failure = fileops::failure(errno, "cannot write", m_path);
            failWith(failure.code, failure.message);
            return std::nullopt;
        }
        send(MessageType::Ok);
        finish();
        return std::nullopt;
    }
    default:
        return ProtocolError::Unexpected;
    }
}

void FileWriteStream::poke()
{
    if (!finished() && m_ungranted >= kWindow / 4) {
        grant(m_ungranted);
        m_ungranted = 0;
    }
}

} // namespace airlock::guest
