#include "guest/agent/archiveinstream.h"

#include "guest/agent/fileops.h"
#include "guest/agent/sysfile.h"
#include "guest/agent/userdb.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

ArchiveInStream::ArchiveInStream(Connection &connection, std::uint32_t id, std::uint64_t request)
    : Stream(connection, id, request)
{ }

ArchiveInStream::~ArchiveInStream()
{
    m_decoder.reset();
    m_extractor.reset();
    if (m_root >= 0)
        ::close(m_root);
}

void ArchiveInStream::open(const ArchiveInRequest &request, const std::string &passwdPath,
                           const std::string &groupPath)
{
    uid_t uid = uid_t(-1);
    gid_t gid = gid_t(-1);
    if (!request.user.empty()) {
        const auto user = lookupUser(request.user, passwdPath, groupPath);
        if (!user) {
            failWith(ErrorCode::NotFound, "no user '" + request.user + "' in /etc/passwd");
            return;
        }
        uid = user->uid;
        gid = user->gid;
    }
    struct stat existing
    {
    };
    const bool created = ::lstat(request.path.c_str(), &existing) != 0;
    if (!makeDirectories(request.path)) {
        const auto failure = fileops::failure(errno, "cannot create folder", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    m_root = ::open(request.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m_root < 0) {
        const auto failure = fileops::failure(errno, "cannot open folder", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    // A folder made for this archive belongs to its user, like what goes into it: `agent`
    // must be able to work in the project it was given.
    if (created && uid != uid_t(-1) && ::fchown(m_root, uid, gid) != 0) {
        const auto failure = fileops::failure(errno, "cannot hand over folder", request.path);
        failWith(failure.code, failure.message);
        return;
    }
    ArchivePolicy policy;
    policy.allowEscapingSymlinks = true;
    policy.allowHardlinks = true;
    policy.allowSetid = true;
    m_extractor = std::make_unique<ArchiveExtractor>(m_root, policy, uid, gid);
    m_decoder = std::make_unique<ArchiveDecoder>(*m_extractor);
    grant(kWindow);
}

std::optional<ProtocolError> ArchiveInStream::onFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::Data:
        if (!m_receiveCredit.spend(frame.payload.size()))
            return ProtocolError::CreditExceeded;
        m_ungranted += std::uint32_t(frame.payload.size());
        if (!m_decoder->feed(frame.payload)) {
            if (m_extractor->error())
                failWith(m_extractor->errorCode(), *m_extractor->error());
            else
                failWith(ErrorCode::Invalid,
                         "not an archive stream: " + m_decoder->error().value_or("stopped"));
        }
        return std::nullopt;
    case MessageType::End:
        if (!frame.payload.empty())
            return ProtocolError::BadPayload;
        if (!m_decoder->finished()) {
            failWith(ErrorCode::Invalid, "the archive stream ended before its end record");
            return std::nullopt;
        }
        sendResult();
        return std::nullopt;
    default:
        return ProtocolError::Unexpected;
    }
}

void ArchiveInStream::sendResult()
{
    ArchiveResult result;
    result.entries = m_extractor->entriesWritten();
    result.bytes = m_extractor->bytesWritten();
    result.refusedCount = std::uint32_t(m_extractor->refusals().size());
    for (const ArchiveRefusal &refusal : m_extractor->refusals()) {
        if (result.refusals.size() == 64)
            break;
        result.refusals.emplace_back(refusal.path, refusal.reason);
    }
    if (auto payload = result.encode()) {
        send(MessageType::ArchiveResult, *payload);
        finish();
        return;
    }
    // Long refused paths would not fit one frame: counted, not listed.
    result.refusals.clear();
    if (auto payload = result.encode())
        send(MessageType::ArchiveResult, *payload);
    finish();
}

void ArchiveInStream::poke()
{
    if (!finished() && m_ungranted >= kWindow / 4) {
        grant(m_ungranted);
        m_ungranted = 0;
    }
}

} // namespace airlock::guest
