/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::tcp_reader: a TCP listener for link_reader; the connected-link semantics are
// connected_reader's, the framing framed_incoming's.

#include "tcp_socket.h"
#include "transport/adopted_socket.h"
#include "transport/link/connected_reader.h"
#include <gnuradio/spead/recv_tcp.h>
#include <memory>
#include <stdexcept>
#include <utility>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! The listener on \p where (an endpoint, or a listening socket of the caller's), with
 * \p config's buffer, peer timeout, packet size and allowed peers. */
template <typename Where>
std::unique_ptr<transport::tcp_listener> listener_on(Where&& where,
                                                     const tcp_config& config)
{
    return std::make_unique<transport::tcp_listener>(
        std::forward<Where>(where),
        config.get_buffer_size(),
        config.get_peer_timeout(),
        config.get_max_packet_size(),
        peer_filter(config.get_allowed_peers()));
}
} // namespace

tcp_reader::tcp_reader(stream& owner, const tcp_config& config) : link_reader(owner)
{
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set the address and port to listen on, e.g. :7148");
    auto l = listener_on(config.get_endpoint(), config);
    d_bound = l->bound_endpoint();
    listen(std::move(l), link::limits_of(config));
}

tcp_reader::tcp_reader(stream& owner, int acceptor, const tcp_config& config)
    : link_reader(owner)
{
    auto l = listener_on(
        transport::adopt_socket(acceptor, transport::socket_role::listening, "acceptor"),
        config);
    d_bound = l->bound_endpoint();
    listen(std::move(l), link::limits_of(config));
}

} // namespace recv
} // namespace spead
} // namespace gr
