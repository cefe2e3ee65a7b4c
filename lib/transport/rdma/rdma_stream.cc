/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::rdma_stream: an rdma_cm dialer for link_stream; the connected-link semantics
// are connected_writer's.

#include "rdma_link.h"
#include "rdma_uri.h"
#include "transport/endpoint.h"
#include "transport/link/connected_writer.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/send_rdma.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {
std::unique_ptr<link::dialer> make_dialer(const stream_config& stream,
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
    return std::make_unique<rdma::dialer>(
        rdma::resolve_host(config.get_host(), "endpoint"),
        config.get_port(),
        local,
        stream.get_max_packet_size(),
        config.get_send_depth(),
        config.get_inline_bytes());
}
} // namespace

// The environment overrides no dial setting (with_environment()): the settings are
// the config's as given.
rdma_stream::rdma_stream(boost::asio::io_context& io,
                         const stream_config& config,
                         const rdma_config& rdma_config)
    : link_stream(
          io, config, make_dialer(config, rdma_config), link::settings_of(rdma_config))
{
}

} // namespace send
} // namespace spead
} // namespace gr
