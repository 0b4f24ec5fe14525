#pragma once

#include "core/agentwire/archivewalker.h"
#include "guest/agent/stream.h"

namespace airlock::guest {

/// ArchiveOut: the folder as an archive stream (ArchiveWalker) in Data frames within the
/// host's credit, then End; a walk failure is an Error that ends the stream.
class ArchiveOutStream : public Stream
{
public:
    ArchiveOutStream(Connection &connection, std::uint32_t id, std::uint64_t request);

    void open(const agentwire::ArchiveOutRequest &request);
    bool canProduce() const override;
    void produce() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    std::unique_ptr<agentwire::ArchiveWalker> m_walker;
};

} // namespace airlock::guest
