/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_ADOPTED_SOCKET_H
#define INCLUDED_SPEAD_TRANSPORT_ADOPTED_SOCKET_H

// Readers and streams on a socket their caller made (spead2's socket forms): the
// caller's socket is duplicated, so the caller may close theirs at once.

#include "common/file_descriptor.h"
#include <gnuradio/spead/api.h>
#include <sys/socket.h>
#include <string>

namespace gr {
namespace spead {
namespace transport {

/*! What the adopted socket must be. */
enum class socket_role {
    udp,       //!< SOCK_DGRAM (a stream's)
    bound_udp, //!< SOCK_DGRAM, bound to a port (a reader's)
    listening, //!< SOCK_STREAM, listening (a tcp reader's acceptor)
    connected  //!< SOCK_STREAM, connected (a tcp stream's)
};

/*!
 * A duplicate of \p socket (close-on-exec, non-blocking; the non-blocking flag is the
 * open file's, so the caller's descriptor becomes non-blocking too, as with spead2).
 * \throws std::invalid_argument naming \p parameter when \p socket is not a socket
 * of \p role's kind \throws std::system_error when
 * duplicating fails
 */
SPEAD_API file_descriptor adopt_socket(int socket,
                                       socket_role role,
                                       const std::string& parameter);

/*! The local address of \p fd. \throws std::system_error */
SPEAD_API sockaddr_storage local_address(int fd, socklen_t& length);

} // namespace transport
} // namespace spead
} // namespace gr

#endif
