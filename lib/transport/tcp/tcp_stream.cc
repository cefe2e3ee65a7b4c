/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::tcp_stream: a TCP dialer for link_stream; the connected-link semantics are
// connected_writer's.

#include "tcp_socket.h"
#include "transport/adopted_socket.h"
#include "transport/link/connected_writer.h"
#include <gnuradio/spead/send_tcp.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {
std::unique_ptr<link::dialer> make_dialer(const tcp_config& config)
{
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set the receiver's HOST:PORT, e.g. 10.0.0.2:7148");
    return std::make_unique<transport::tcp_dialer>(config.get_endpoint(),
                                                   config.get_interface(),
                                                   config.get_buffer_size(),
                                                   config.get_peer_timeout());
}
} // namespace

tcp_stream::tcp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       const tcp_config& tcp_config)
    : link_stream(io, config, make_dialer(tcp_config), link::settings_of(tcp_config))
{
}

tcp_stream::tcp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       int socket,
                       const tcp_config& tcp_config)
    : link_stream(io,
                  config,
                  std::make_unique<transport::tcp_connected_dialer>(
                      transport::adopt_socket(
                          socket, transport::socket_role::connected, "socket"),
                      tcp_config.get_peer_timeout()),
                  link::settings_of(tcp_config))
{
}

} // namespace send
} // namespace spead
} // namespace gr
