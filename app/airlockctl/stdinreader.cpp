#include "app/airlockctl/stdinreader.h"

#include <QSocketNotifier>

#include <cerrno>
#include <unistd.h>

namespace airlock::ctl {

StdinReader::StdinReader(int fd, QObject *parent) : QObject(parent), m_fd(fd) { }

StdinReader::~StdinReader() = default;

void StdinReader::start()
{
    if (m_notifier)
        return;
    m_notifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &StdinReader::onReadable);
}

void StdinReader::stop()
{
    delete m_notifier;
    m_notifier = nullptr;
}

void StdinReader::onReadable()
{
    char buffer[16384];
    const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
    if (n > 0) {
        Q_EMIT bytesRead(QByteArray(buffer, n));
        return;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    stop();
    Q_EMIT endOfInput();
}

bool writeAll(int fd, const QByteArray &bytes)
{
    const char *data = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, size_t(left));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += n;
        left -= n;
    }
    return true;
}

} // namespace airlock::ctl
