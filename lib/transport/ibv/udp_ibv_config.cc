/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::udp_ibv_config: validation only. What the device can actually give (slots,
// comp vector) is settled by the reader, which reports it.

#include "transport/config_checks.h"
#include "transport/raw_packet.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

namespace {
using boost::asio::ip::udp;
using transport::endpoint_use;
} // namespace

udp_ibv_config& udp_ibv_config::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    d_endpoints = transport::checked_endpoints(endpoints, endpoint_use::receive);
    return *this;
}

udp_ibv_config& udp_ibv_config::set_endpoints(const std::string& endpoints)
{
    d_endpoints =
        transport::parse_endpoints(endpoints, "endpoints", endpoint_use::receive);
    return *this;
}

udp_ibv_config& udp_ibv_config::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(endpoint, "endpoints", endpoint_use::receive);
    d_endpoints.push_back(endpoint);
    return *this;
}

udp_ibv_config&
udp_ibv_config::set_interface_address(const boost::asio::ip::address& address)
{
    if (!address.is_v4())
        throw std::invalid_argument(
            "interface_address: " + address.to_string() +
            " is not IPv4; the ibverbs transport receives IPv4 only: give the IPv4 "
            "address of the NIC's interface (or its name with set_interface)");
    if (address.is_unspecified() || address.is_multicast())
        throw std::invalid_argument(
            "interface_address: " + address.to_string() +
            " names no interface; give the IPv4 address of the NIC's interface, e.g. "
            "10.0.0.2 (or its name with set_interface)");
    d_interface_address = address;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_interface(const std::string& address_or_name)
{
    // Throws invalid_argument naming "interface" and listing the interfaces there are.
    d_interface_address =
        transport::resolve_interface(address_or_name, "interface").address;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = bytes == 0 ? default_buffer_size : bytes;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_max_size(std::size_t bytes)
{
    d_max_size = transport::checked_max_size(bytes);
    return *this;
}

udp_ibv_config& udp_ibv_config::set_comp_vector(int comp_vector)
{
    // Every value is meaningful: negative busy-polls, the rest wrap around the
    // device's vectors when the reader is built.
    d_comp_vector = comp_vector;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_max_poll(int max_poll)
{
    d_max_poll = transport::checked_max_poll(max_poll, default_max_poll);
    return *this;
}

} // namespace recv
} // namespace spead
} // namespace gr
