/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The setters of listen_config_base, for recv::tcp_config and recv::rdma_config: each
// checks its value once, for both, and throws std::invalid_argument naming the
// parameter, the value and the fix.

#include "peer_filter.h"
#include "transport/config_checks.h"
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_tcp.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

template <typename Derived>
Derived& listen_config_base<Derived>::set_max_connections(std::size_t n)
{
    if (n < 1 || n > max_max_connections)
        throw std::invalid_argument(
            "max_connections: " + std::to_string(n) + " is out of range; use 1 to " +
            std::to_string(max_max_connections) +
            " (the number of senders that may be connected at once)");
    d_max_connections = n;
    return self();
}

template <typename Derived>
Derived& listen_config_base<Derived>::set_allowed_peers(const std::string& peers)
{
    peer_filter check(peers); // throws for a malformed list
    d_allowed_peers = peers;
    return self();
}

template <typename Derived>
Derived& listen_config_base<Derived>::set_max_packet_size(std::size_t bytes)
{
    if (bytes < min_max_packet_size || bytes > Derived::max_max_packet_size)
        throw std::invalid_argument("max_packet_size: " + std::to_string(bytes) +
                                    " bytes is out of range; use " +
                                    std::to_string(min_max_packet_size) + " to " +
                                    std::to_string(Derived::max_max_packet_size) +
                                    " (at least the senders' max_packet_size)");
    d_max_packet_size = bytes;
    return self();
}

template <typename Derived>
Derived& listen_config_base<Derived>::set_idle_timeout(std::chrono::milliseconds timeout)
{
    d_idle_timeout = transport::checked_duration("idle_timeout", timeout, true);
    return self();
}

template class listen_config_base<recv::tcp_config>;
template class listen_config_base<recv::rdma_config>;

} // namespace spead
} // namespace gr
