/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transport/config_checks.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_udp.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
using boost::asio::ip::udp;
using transport::endpoint_use;
using transport::ip_family;

std::size_t
checked_buffer_size(std::size_t bytes, std::size_t default_size, std::size_t max)
{
    if (bytes == 0)
        return default_size;
    if (bytes > max)
        throw std::invalid_argument(
            "buffer_size: " + std::to_string(bytes) +
            " bytes is more than the kernel accepts; use at most " + std::to_string(max) +
            " (0 = default " + std::to_string(default_size) + ")");
    return bytes;
}

std::string checked_interface(const std::string& address_or_name)
{
    if (!address_or_name.empty())
        // Any interface by name, index or address (IPv4 or IPv6): which one the
        // sockets need is known once the endpoints are (the reader, the stream).
        transport::interface_index(address_or_name, "interface"); // throws if unknown
    return address_or_name;
}
} // namespace

template <typename Derived>
endpoint_use udp_config_use()
{
    return Derived::receives ? endpoint_use::receive : endpoint_use::send;
}

template <typename Derived>
Derived& udp_config_base<Derived>::set_endpoints(const std::string& endpoints)
{
    d_endpoints = transport::parse_endpoints(
        endpoints, "endpoints", udp_config_use<Derived>(), ip_family::ipv4_or_ipv6);
    return self();
}

template <typename Derived>
Derived&
udp_config_base<Derived>::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    d_endpoints = transport::checked_endpoints(
        endpoints, udp_config_use<Derived>(), ip_family::ipv4_or_ipv6);
    return self();
}

template <typename Derived>
Derived& udp_config_base<Derived>::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(
        endpoint, "endpoints", udp_config_use<Derived>(), ip_family::ipv4_or_ipv6);
    d_endpoints.push_back(endpoint);
    return self();
}

template <typename Derived>
Derived& udp_config_base<Derived>::set_interface(const std::string& address_or_name)
{
    d_interface = checked_interface(address_or_name);
    return self();
}

template <typename Derived>
Derived& udp_config_base<Derived>::set_buffer_size(std::size_t bytes)
{
    d_buffer_size =
        checked_buffer_size(bytes, Derived::default_buffer_size, max_buffer_size);
    return self();
}

template class udp_config_base<recv::udp_config>;
template class udp_config_base<send::udp_config>;

namespace recv {

udp_config& udp_config::set_max_size(std::size_t bytes)
{
    d_max_size = transport::checked_max_size(bytes);
    return *this;
}

} // namespace recv

namespace send {

udp_config& udp_config::set_ttl(int ttl)
{
    d_ttl = transport::checked_ttl(ttl);
    return *this;
}

} // namespace send

} // namespace spead
} // namespace gr
