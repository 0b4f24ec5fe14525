#pragma once

#include "core/agentwire/archiveextractor.h"
#include "guest/agent/stream.h"

#include <memory>

namespace airlock::guest {

/// ArchiveIn: the folder is created when missing; the archive the host streams (Data within
/// kWindow of credit, re-granted as it is written, then End) is extracted into it by an
/// ArchiveExtractor that allows symlinks, hard links within the folder and setuid bits (the
/// host is not hostile to the guest) but still writes nothing outside the folder. Answered
/// with ArchiveResult (entries, bytes, refusals), or an Error.
class ArchiveInStream : public Stream
{
public:
    static constexpr std::uint32_t kWindow = 256 * 1024;

    ArchiveInStream(Connection &connection, std::uint32_t id, std::uint64_t request);
    ~ArchiveInStream() override;

    /// `passwdPath`/`groupPath`: where request.user is looked up.
    void open(const agentwire::ArchiveInRequest &request, const std::string &passwdPath,
              const std::string &groupPath);
    void poke() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    void sendResult();

    int m_root = -1;
    std::unique_ptr<agentwire::ArchiveExtractor> m_extractor;
    std::unique_ptr<agentwire::ArchiveDecoder> m_decoder;
    std::uint32_t m_ungranted = 0;
};

} // namespace airlock::guest
