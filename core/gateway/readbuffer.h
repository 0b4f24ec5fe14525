#pragma once

#include <QtGlobal>

#include <memory>

namespace airlock::gateway {

/// A scratch buffer of kSize bytes for one socket or TLS read, lent from a small pool of the
/// calling thread, so a read costs no allocation (issue 16: a fresh 64 KiB buffer per read was
/// 5% of the gateway's time in malloc) and idle connections hold no read buffer at all. The
/// bytes are only valid until the lease ends; a reader copies what it keeps. Leases nest (a
/// socket read whose bytes are decrypted into a second buffer, or a read inside the handling
/// of another read): each holds its own buffer, so a lease never sees its bytes overwritten.
/// The pool keeps at most kPooled free buffers per thread.
class ReadBufferLease final
{
public:
    static constexpr qsizetype kSize = 64 * 1024;
    static constexpr int kPooled = 4;

    ReadBufferLease();
    ~ReadBufferLease();
    ReadBufferLease(const ReadBufferLease &) = delete;
    ReadBufferLease &operator=(const ReadBufferLease &) = delete;

    char *data() const { return m_buffer.get(); }
    static constexpr qsizetype size() { return kSize; }

private:
    std::unique_ptr<char[]> m_buffer;
};

} // namespace airlock::gateway
