/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::udp_ibv_config: the validating setters. What can only be checked against the
// device (buffer limits, overlapping regions, the MTU) is checked when the stream is
// built.

#include "transport/config_checks.h"
#include <gnuradio/spead/send_udp_ibv.h>
#include <arpa/inet.h>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace send {

using boost::asio::ip::udp;
using transport::endpoint_use;

udp_ibv_config& udp_ibv_config::set_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    d_endpoints = transport::checked_endpoints(endpoints, endpoint_use::send);
    return *this;
}

udp_ibv_config& udp_ibv_config::set_endpoints(const std::string& endpoints)
{
    d_endpoints = transport::parse_endpoints(endpoints, "endpoints", endpoint_use::send);
    return *this;
}

udp_ibv_config& udp_ibv_config::add_endpoint(const udp::endpoint& endpoint)
{
    transport::check_endpoint(endpoint, "endpoints", endpoint_use::send);
    d_endpoints.push_back(endpoint);
    return *this;
}

udp_ibv_config&
udp_ibv_config::set_interface_address(const boost::asio::ip::address& address)
{
    const std::string fix = "; give the IPv4 address of the interface whose NIC sends "
                            "(e.g. 192.168.1.10), or its netdev name with set_interface";
    if (!address.is_v4())
        throw std::invalid_argument("interface: " + address.to_string() +
                                    " is not IPv4 (ibverbs sends IPv4 only)" + fix);
    const auto v4 = address.to_v4();
    if (v4.is_unspecified() || v4.is_multicast())
        throw std::invalid_argument("interface: " + address.to_string() +
                                    " is not the address of an interface" + fix);
    d_interface_address = address;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_interface(const std::string& address_or_name)
{
    in_addr parsed{};
    if (inet_pton(AF_INET, address_or_name.c_str(), &parsed) == 1)
        // Whether a device owns it is the stream's question: it needs the device anyway.
        return set_interface_address(boost::asio::ip::address_v4(ntohl(parsed.s_addr)));
    return set_interface_address(
        transport::resolve_interface(address_or_name, "interface").address);
}

udp_ibv_config& udp_ibv_config::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = bytes == 0 ? default_buffer_size : bytes;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_ttl(int ttl)
{
    d_ttl = transport::checked_ttl(ttl);
    return *this;
}

udp_ibv_config& udp_ibv_config::set_comp_vector(int comp_vector)
{
    // Any value is meaningful: negative busy-polls, the rest is taken modulo the
    // device's number of vectors when the stream is built.
    d_comp_vector = comp_vector;
    return *this;
}

udp_ibv_config& udp_ibv_config::set_max_poll(int max_poll)
{
    d_max_poll = transport::checked_max_poll(max_poll, default_max_poll);
    return *this;
}

namespace {
void check_region(const void* ptr, std::size_t size, std::size_t index)
{
    const std::string which = "memory_regions: region " + std::to_string(index);
    if (ptr == nullptr)
        throw std::invalid_argument(which + " has a null pointer; give the start of "
                                            "memory that items will live in");
    if (size == 0)
        throw std::invalid_argument(which + " has size 0; give its length in bytes");
    if (reinterpret_cast<std::uintptr_t>(ptr) + size <
        reinterpret_cast<std::uintptr_t>(ptr))
        throw std::invalid_argument(which + " wraps around the address space; check "
                                            "its size");
}
} // namespace

udp_ibv_config&
udp_ibv_config::set_memory_regions(const std::vector<memory_region>& regions)
{
    for (std::size_t i = 0; i < regions.size(); i++)
        check_region(regions[i].first, regions[i].second, i);
    d_memory_regions = regions;
    return *this;
}

udp_ibv_config& udp_ibv_config::add_memory_region(const void* ptr, std::size_t size)
{
    check_region(ptr, size, d_memory_regions.size());
    d_memory_regions.emplace_back(ptr, size);
    return *this;
}

} // namespace send
} // namespace spead
} // namespace gr
