/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::tcp_stream: a send stream over a TCP dialer; the connected-link semantics are
// connected_writer's.

#include "streams/connected_writer.h"
#include "tcp_socket.h"
#include <gnuradio/spead/send_tcp.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {
std::unique_ptr<link::connected_writer> make_writer(const tcp_config& config)
{
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set the receiver's HOST:PORT, e.g. 10.0.0.2:7148");
    link::writer_settings s;
    s.connect_timeout = config.get_connect_timeout();
    s.reconnect = config.get_reconnect();
    s.reconnect_min = config.get_reconnect_min();
    s.reconnect_max = config.get_reconnect_max();
    return std::make_unique<link::connected_writer>(
        std::make_unique<transport::tcp_dialer>(config.get_endpoint(),
                                                config.get_interface(),
                                                config.get_buffer_size(),
                                                config.get_peer_timeout()),
        s);
}
} // namespace

tcp_stream::tcp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       const tcp_config& tcp_config)
    : stream(io, config, 1, make_writer(tcp_config))
{
    // Here rather than in the writer's constructor: the stream now counts.
    static_cast<link::connected_writer&>(writer()).connect_first();
}

tcp_stream::~tcp_stream()
{
    // Before ~stream flushes the queue: no reconnecting, no endless wait for room.
    static_cast<link::connected_writer&>(writer()).abort();
}

bool tcp_stream::is_connected() const
{
    return static_cast<const link::connected_writer&>(writer()).is_connected();
}

std::size_t tcp_stream::get_granted_buffer_size() const
{
    return static_cast<const link::connected_writer&>(writer()).granted_buffer();
}

} // namespace send
} // namespace spead
} // namespace gr
