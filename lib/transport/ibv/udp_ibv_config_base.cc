/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// udp_ibv_config_base: the setters that ibverbs receive and send share, written once
// (instantiated below for both), and recv::udp_ibv_config's one setting of its own.
// What the device can actually give is settled by the reader or stream, which
// reports it.

#include "transport/config_checks.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gnuradio/spead/udp_ibv_config_base.h>
#include <type_traits>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {

using boost::asio::ip::udp;
using transport::endpoint_use;

template <typename Derived>
constexpr endpoint_use use_of =
    std::is_same_v<Derived, recv::udp_ibv_config> ? endpoint_use::receive
                                                  : endpoint_use::send;

const char* const interface_fix =
    "give the IPv4 address of the NIC's interface (e.g. 10.0.0.2), or its netdev name "
    "with set_interface";

/*! What an IPv6 endpoint is told: ibverbs frames are IPv4 here, as in spead2. */
const std::string ipv4_only_fix =
    "the ibverbs transport is IPv4 only, as spead2's. For IPv6 use the kernel UDP "
    "transport (transport udp; recv.Stream.add_udp_reader, send.UdpStream)";

} // namespace

template <typename Derived>
Derived&
udp_ibv_config_base<Derived>::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    d_endpoints = transport::checked_endpoints(
        endpoints, use_of<Derived>, transport::ip_family::ipv4, ipv4_only_fix);
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::set_endpoints(const std::string& endpoints)
{
    d_endpoints = transport::parse_endpoints(endpoints,
                                             "endpoints",
                                             use_of<Derived>,
                                             transport::ip_family::ipv4,
                                             ipv4_only_fix);
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(endpoint,
                              "endpoints",
                              use_of<Derived>,
                              transport::ip_family::ipv4,
                              ipv4_only_fix);
    d_endpoints.push_back(endpoint);
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::set_interface_address(
    const boost::asio::ip::address& address)
{
    if (!address.is_v4())
        throw std::invalid_argument(
            "interface_address: " + address.to_string() +
            " is not IPv4; the ibverbs transport is IPv4 only: " + interface_fix);
    if (address.is_unspecified() || address.is_multicast())
        throw std::invalid_argument("interface_address: " + address.to_string() +
                                    " names no interface; " + interface_fix);
    d_interface_address = address;
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::set_interface(const std::string& address_or_name)
{
    // Throws invalid_argument naming "interface" and listing the interfaces there are.
    d_interface_address =
        transport::resolve_interface(address_or_name, "interface").address;
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = bytes == 0 ? Derived::default_buffer_size : bytes;
    return self();
}

template <typename Derived>
Derived& udp_ibv_config_base<Derived>::set_max_poll(int max_poll)
{
    d_max_poll = transport::checked_max_poll(max_poll, Derived::default_max_poll);
    return self();
}

template <typename Derived>
void udp_ibv_config_base<Derived>::check_complete() const
{
    if (d_endpoints.empty())
        throw std::invalid_argument("endpoints: none given; give at least one, e.g. "
                                    "239.1.2.3:7148 or 239.1.2.3+3:7148");
    if (!d_interface_address.is_v4() || d_interface_address.is_unspecified())
        throw std::invalid_argument(std::string("interface_address: none given; ") +
                                    interface_fix);
}

template class udp_ibv_config_base<recv::udp_ibv_config>;
template class udp_ibv_config_base<send::udp_ibv_config>;

namespace recv {

udp_ibv_config& udp_ibv_config::set_max_size(std::size_t bytes)
{
    d_max_size = transport::checked_max_size(bytes);
    return *this;
}

} // namespace recv

} // namespace spead
} // namespace gr
