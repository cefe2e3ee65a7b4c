/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "adopted_socket.h"
#include <fcntl.h>
#include <netinet/in.h>
#include <system_error>
#include <cerrno>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

int int_option(int fd, int option)
{
    int value = 0;
    socklen_t len = sizeof(value);
    return ::getsockopt(fd, SOL_SOCKET, option, &value, &len) == 0 ? value : -1;
}

/*! What each socket_role asks for, in the enum's order, for the message. */
const char* const wanted[] = { "a UDP socket (socket.SOCK_DGRAM)",
                               "a bound UDP socket (socket.SOCK_DGRAM, bind() called)",
                               "a listening TCP socket (bind() and listen() called)",
                               "a connected TCP socket (connect() done)" };

} // namespace

sockaddr_storage local_address(int fd, socklen_t& length)
{
    sockaddr_storage addr{};
    length = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0)
        throw std::system_error(errno, std::generic_category(), "getsockname");
    return addr;
}

file_descriptor adopt_socket(int socket, socket_role role, const std::string& parameter)
{
    const int type = int_option(socket, SO_TYPE);
    const int family = int_option(socket, SO_DOMAIN);
    bool fits = (family == AF_INET || family == AF_INET6) &&
                type == (role == socket_role::udp || role == socket_role::bound_udp
                             ? SOCK_DGRAM
                             : SOCK_STREAM);
    if (fits && role == socket_role::listening)
        fits = int_option(socket, SO_ACCEPTCONN) == 1;
    if (fits && role == socket_role::connected) {
        sockaddr_storage peer{};
        socklen_t len = sizeof(peer);
        fits = ::getpeername(socket, reinterpret_cast<sockaddr*>(&peer), &len) == 0;
    }
    if (fits && role == socket_role::bound_udp) {
        socklen_t len = 0;
        const sockaddr_storage addr = local_address(socket, len);
        fits = (family == AF_INET
                    ? reinterpret_cast<const sockaddr_in&>(addr).sin_port
                    : reinterpret_cast<const sockaddr_in6&>(addr).sin6_port) != 0;
    }
    if (!fits)
        throw std::invalid_argument(parameter + ": descriptor " + std::to_string(socket) +
                                    " is not " + wanted[int(role)] + "; give one");
    file_descriptor fd(::fcntl(socket, F_DUPFD_CLOEXEC, 0));
    if (!fd)
        throw std::system_error(
            errno, std::generic_category(), parameter + ": cannot duplicate the socket");
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0)
        throw std::system_error(errno, std::generic_category(), "fcntl O_NONBLOCK");
    return fd;
}

} // namespace transport
} // namespace spead
} // namespace gr
