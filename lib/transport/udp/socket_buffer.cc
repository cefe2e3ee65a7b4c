/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "socket_buffer.h"
#include <sys/socket.h>
#include <system_error>
#include <cerrno>
#include <climits>

namespace gr {
namespace spead {
namespace transport {

std::size_t
request_socket_buffer(int fd, buffer_direction direction, std::size_t requested)
{
    const int option = direction == buffer_direction::receive ? SO_RCVBUF : SO_SNDBUF;
    const int value = requested > INT_MAX / 2 ? INT_MAX / 2 : static_cast<int>(requested);
    if (setsockopt(fd, SOL_SOCKET, option, &value, sizeof(value)) != 0)
        throw std::system_error(errno,
                                std::generic_category(),
                                direction == buffer_direction::receive
                                    ? "setsockopt SO_RCVBUF"
                                    : "setsockopt SO_SNDBUF");
    int granted = 0;
    socklen_t len = sizeof(granted);
    if (getsockopt(fd, SOL_SOCKET, option, &granted, &len) != 0)
        throw std::system_error(
            errno, std::generic_category(), "getsockopt socket buffer");
    // Linux doubles the value to leave room for its bookkeeping.
    return static_cast<std::size_t>(granted) / 2;
}

std::string buffer_capped_advice(buffer_direction direction,
                                 std::size_t requested,
                                 std::size_t granted)
{
    const bool receive = direction == buffer_direction::receive;
    const char* sysctl = receive ? "net.core.rmem_max" : "net.core.wmem_max";
    return std::string("buffer_size: asked for ") + std::to_string(requested) +
           " bytes of socket " + (receive ? "receive" : "send") +
           " buffer but the kernel granted " + std::to_string(granted) + " (capped by " +
           sysctl + ")" +
           (receive ? "; bursts at high rates will overflow it and drop packets"
                    : "; the writer will wait on the socket more often") +
           ". Raise the cap: sudo sysctl -w " + sysctl + "=" + std::to_string(requested);
}

} // namespace transport
} // namespace spead
} // namespace gr
