#include "core/agentwire/creditwindow.h"

#include "core/agentwire/wire.h"

namespace airlock::agentwire {

bool CreditWindow::grant(std::uint64_t bytes)
{
    if (bytes > kMaxCreditWindow || m_available + bytes > kMaxCreditWindow)
        return false;
    m_available += bytes;
    return true;
}

bool CreditWindow::spend(std::uint64_t bytes)
{
    if (bytes > m_available)
        return false;
    m_available -= bytes;
    return true;
}

} // namespace airlock::agentwire
