#pragma once

#include <cstdint>

namespace airlock::agentwire {

/// The credit of one direction of one stream (docs/agent-protocol.md, "Flow control"): how
/// many data bytes the sender may still send. The receiver grants, the sender spends; both ends
/// keep one and apply the same rules, so that each can check the other:
/// - the sender sends a data frame only when spend() of its payload length succeeds;
/// - the receiver calls spend() for each data frame it gets: false is CreditExceeded;
/// - grant() of a Credit frame that takes the window past kMaxCreditWindow fails
///   (CreditOverflow), so a window never grows without bound.
/// A stream starts with no credit: nothing flows before the first grant.
class CreditWindow
{
public:
    /// Adds `bytes`; false (nothing added) when the window would pass kMaxCreditWindow.
    bool grant(std::uint64_t bytes);
    /// Takes `bytes`; false (nothing taken) when fewer are available.
    bool spend(std::uint64_t bytes);
    std::uint64_t available() const { return m_available; }

private:
    std::uint64_t m_available = 0;
};

} // namespace airlock::agentwire
