#include "core/gateway/readbuffer.h"

#include <vector>

namespace airlock::gateway {

namespace {

thread_local std::vector<std::unique_ptr<char[]>> t_free;

} // namespace

ReadBufferLease::ReadBufferLease()
{
    if (t_free.empty()) {
        m_buffer = std::make_unique_for_overwrite<char[]>(size_t(kSize));
        return;
    }
    m_buffer = std::move(t_free.back());
    t_free.pop_back();
}

ReadBufferLease::~ReadBufferLease()
{
    if (t_free.size() < size_t(kPooled))
        t_free.push_back(std::move(m_buffer));
}

} // namespace airlock::gateway
