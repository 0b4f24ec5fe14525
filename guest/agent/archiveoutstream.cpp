#include "guest/agent/archiveoutstream.h"

namespace airlock::guest {

using namespace agentwire;

ArchiveOutStream::ArchiveOutStream(Connection &connection, std::uint32_t id, std::uint64_t request)
    : Stream(connection, id, request)
{ }

void ArchiveOutStream::open(const ArchiveOutRequest &request)
{
    auto walker = ArchiveWalker::open(request.path);
    if (!walker) {
        failWith(walker.error().code, walker.error().message);
        return;
    }
    m_walker = std::move(*walker);
}

bool ArchiveOutStream::canProduce() const
{
    return !finished() && m_walker && sendable() > 0;
}

void ArchiveOutStream::produce()
{
    Bytes chunk;
    chunk.reserve(kMaxPayloadBytes);
    while (canProduce()) {
        chunk.clear();
        auto more = m_walker->produce(chunk, sendable());
        if (!more) {
            failWith(more.error().code, more.error().message);
            return;
        }
        if (!chunk.empty()) {
            m_sendCredit.spend(chunk.size());
            send(MessageType::Data, chunk);
        }
        if (!*more) {
            send(MessageType::End);
            finish();
        }
    }
}

std::optional<ProtocolError> ArchiveOutStream::onFrame(const Frame &)
{
    return ProtocolError::Unexpected;
}

} // namespace airlock::guest
