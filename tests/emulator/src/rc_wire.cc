/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Timers, sockets and blocking I/O of the RC wire.
#include "rc_wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace spead_emu {
namespace rc_wire {
namespace {

// Milliseconds poll() may wait until \p deadline (-1: none).
int poll_timeout(clock::time_point deadline)
{
    if (deadline == clock::time_point::max())
        return -1;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    return static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 1000));
}

} // namespace

bool wait_until_ready(int fd, short events, int stop_fd, clock::time_point deadline)
{
    while (true) {
        pollfd fds[2] = { { fd, events, 0 }, { stop_fd, POLLIN, 0 } };
        const int ready = poll(fds, 2, poll_timeout(deadline));
        if (ready < 0 && errno != EINTR)
            return false;
        if (fds[1].revents != 0)
            return false;
        if (fds[0].revents != 0)
            return true;
        if (clock::now() >= deadline)
            return false;
    }
}

clock::duration ack_timeout(uint8_t timeout)
{
    if (timeout == 0)
        return clock::duration::max();
    return std::chrono::nanoseconds(4096) *
           (uint64_t{ 1 } << std::min<uint8_t>(timeout, 31));
}

clock::duration rnr_delay(uint8_t min_rnr_timer)
{
    // IB spec table 45, in units of 10 us.
    static const uint32_t tens_of_us[32] = { 65536, 1,     2,     3,    4,    6,    8,
                                             12,    16,    24,    32,   48,   64,   96,
                                             128,   192,   256,   384,  512,  768,  1024,
                                             1536,  2048,  3072,  4096, 6144, 8192, 12288,
                                             16384, 24576, 32768, 49152 };
    return std::chrono::microseconds(10) * tens_of_us[min_rnr_timer & 31];
}

int listen_on_ephemeral_port(uint16_t& port)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t length = sizeof(address);
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd, 16) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        const int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    port = ntohs(address.sin_port);
    return fd;
}

int start_connect(in_addr address, uint16_t port)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in peer{};
    peer.sin_family = AF_INET;
    peer.sin_addr = address;
    peer.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)) != 0 &&
        errno != EINPROGRESS) {
        const int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

bool read_all(
    int fd, void* buffer, size_t length, int stop_fd, clock::time_point deadline)
{
    auto* bytes = static_cast<uint8_t*>(buffer);
    size_t done = 0;
    while (done < length) {
        const ssize_t got = recv(fd, bytes + done, length - done, MSG_DONTWAIT);
        if (got > 0) {
            done += static_cast<size_t>(got);
        } else if (got == 0) {
            return false; // the peer closed
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_until_ready(fd, POLLIN, stop_fd, deadline))
                return false;
        } else if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

bool write_all(
    int fd, const void* buffer, size_t length, int stop_fd, clock::time_point deadline)
{
    const auto* bytes = static_cast<const uint8_t*>(buffer);
    size_t done = 0;
    while (done < length) {
        const ssize_t put =
            send(fd, bytes + done, length - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (put >= 0) {
            done += static_cast<size_t>(put);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_until_ready(fd, POLLOUT, stop_fd, deadline))
                return false;
        } else if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

} // namespace rc_wire
} // namespace spead_emu
