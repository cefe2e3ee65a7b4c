/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::rdma_stream: a send stream over an rdma_cm dialer; the connected-link
// semantics are connected_writer's.

#include "rdma_link.h"
#include "rdma_uri.h"
#include "streams/connected_writer.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/send_rdma.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {
std::unique_ptr<link::connected_writer> make_writer(const stream_config& stream,
                                                    const rdma_config& given)
{
    const rdma_config config = with_environment(given);
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set the receiver's verbs://HOST:PORT");
    const auto local =
        config.get_interface().empty()
            ? boost::asio::ip::address_v4::any()
            : transport::resolve_interface(config.get_interface(), "interface").address;
    link::writer_settings s;
    s.connect_timeout = config.get_connect_timeout();
    s.reconnect = config.get_reconnect();
    s.reconnect_min = config.get_reconnect_min();
    s.reconnect_max = config.get_reconnect_max();
    return std::make_unique<link::connected_writer>(
        std::make_unique<rdma::dialer>(rdma::resolve_host(config.get_host(), "endpoint"),
                                       config.get_port(),
                                       local,
                                       stream.get_max_packet_size(),
                                       config.get_send_depth(),
                                       config.get_inline_bytes()),
        s);
}
} // namespace

rdma_stream::rdma_stream(boost::asio::io_context& io,
                         const stream_config& config,
                         const rdma_config& rdma_config)
    : stream(io, config, 1, make_writer(config, rdma_config))
{
    static_cast<link::connected_writer&>(writer()).connect_first();
}

rdma_stream::~rdma_stream() { static_cast<link::connected_writer&>(writer()).abort(); }

bool rdma_stream::is_connected() const
{
    return static_cast<const link::connected_writer&>(writer()).is_connected();
}

} // namespace send
} // namespace spead
} // namespace gr
