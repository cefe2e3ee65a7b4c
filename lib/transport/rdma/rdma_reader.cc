/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::rdma_reader: an rdma_cm listener for link_reader; the connected-link
// semantics are connected_reader's.

#include "rdma_link.h"
#include "rdma_uri.h"
#include "transport/endpoint.h"
#include "transport/link/connected_reader.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_rdma.h>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! The address to listen on: the endpoint's, else the interface's, else every one. */
boost::asio::ip::address_v4 listen_address(const rdma_config& config)
{
    if (!config.get_host().empty())
        return rdma::resolve_host(config.get_host(), "endpoint");
    if (!config.get_interface().empty())
        return transport::resolve_interface(config.get_interface(), "interface").address;
    return boost::asio::ip::address_v4::any();
}
} // namespace

rdma_reader::rdma_reader(stream& owner, const rdma_config& given) : link_reader(owner)
{
    const rdma_config config = with_environment(given);
    validate(config);
    rdma::listen_settings s;
    s.max_packet_size = config.get_max_packet_size();
    s.recv_depth = config.get_recv_depth();
    s.rdma_connections = config.get_rdma_connections();
    s.rdma_depth = config.get_rdma_depth();
    if (config.get_host().empty() && !config.get_interface().empty()) {
        s.address_parameter = "interface";
        s.address_shown = config.get_interface();
    } else {
        s.address_shown = config.get_host();
    }
    listen(std::make_unique<rdma::listener>(listen_address(config), config.get_port(), s),
           link::limits_of(config));
}

} // namespace recv
} // namespace spead
} // namespace gr
