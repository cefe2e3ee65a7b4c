/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_UDP_SOCKET_BUFFER_H
#define INCLUDED_SPEAD_TRANSPORT_UDP_SOCKET_BUFFER_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {
namespace transport {

enum class buffer_direction { receive, send };

/*!
 * Asks the kernel for a socket buffer of \p requested bytes (SO_RCVBUF / SO_SNDBUF) and
 * reads back what it granted. Linux caps the request at net.core.rmem_max (wmem_max)
 * and reports double the value for its bookkeeping; the result is in the caller's
 * units. \throws std::system_error
 */
SPEAD_API std::size_t
request_socket_buffer(int fd, buffer_direction direction, std::size_t requested);

/*! The warning for a capped buffer: what was asked, what was granted, and the sysctl
 * command that lifts the cap. */
SPEAD_API std::string buffer_capped_advice(buffer_direction direction,
                                           std::size_t requested,
                                           std::size_t granted);

} // namespace transport
} // namespace spead
} // namespace gr

#endif
