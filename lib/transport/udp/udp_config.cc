/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transport/endpoint.h"
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_udp.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
using boost::asio::ip::udp;
using transport::endpoint_use;

/*! Largest UDP payload over IPv4 (65535 - 20 - 8). */
constexpr std::size_t max_udp_payload = 65507;

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
        transport::resolve_interface(address_or_name, "interface"); // throws if unknown
    return address_or_name;
}
} // namespace

namespace recv {

udp_config& udp_config::set_endpoints(const std::string& endpoints)
{
    d_endpoints =
        transport::parse_endpoints(endpoints, "endpoints", endpoint_use::receive);
    return *this;
}

udp_config& udp_config::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    for (const auto& ep : endpoints)
        transport::check_endpoint(ep, "endpoints", endpoint_use::receive);
    d_endpoints = endpoints;
    return *this;
}

udp_config& udp_config::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(endpoint, "endpoints", endpoint_use::receive);
    d_endpoints.push_back(endpoint);
    return *this;
}

udp_config& udp_config::set_interface(const std::string& address_or_name)
{
    d_interface = checked_interface(address_or_name);
    return *this;
}

udp_config& udp_config::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = checked_buffer_size(bytes, default_buffer_size, max_buffer_size);
    return *this;
}

udp_config& udp_config::set_max_size(std::size_t bytes)
{
    if (bytes < 64 || bytes > max_udp_payload)
        throw std::invalid_argument(
            "max_size: " + std::to_string(bytes) +
            " bytes is out of range; use 64 to 65507, at least the sender's packet size "
            "(default 9200 suits 9000-byte jumbo frames)");
    d_max_size = bytes;
    return *this;
}

} // namespace recv

namespace send {

udp_config& udp_config::set_endpoints(const std::string& endpoints)
{
    d_endpoints = transport::parse_endpoints(endpoints, "endpoints", endpoint_use::send);
    return *this;
}

udp_config& udp_config::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    for (const auto& ep : endpoints)
        transport::check_endpoint(ep, "endpoints", endpoint_use::send);
    d_endpoints = endpoints;
    return *this;
}

udp_config& udp_config::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(endpoint, "endpoints", endpoint_use::send);
    d_endpoints.push_back(endpoint);
    return *this;
}

udp_config& udp_config::set_ttl(int ttl)
{
    if (ttl < 0 || ttl > 255)
        throw std::invalid_argument("ttl: " + std::to_string(ttl) +
                                    " is out of range; use 0 to 255 (1 = the local "
                                    "network only, the default)");
    d_ttl = ttl;
    return *this;
}

udp_config& udp_config::set_interface(const std::string& address_or_name)
{
    d_interface = checked_interface(address_or_name);
    return *this;
}

udp_config& udp_config::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = checked_buffer_size(bytes, default_buffer_size, max_buffer_size);
    return *this;
}

} // namespace send

} // namespace spead
} // namespace gr
