/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The setters of tcp_config_base and send::tcp_config (the listening and connecting
// settings are listen_config_base's and dial_config_base's): each checks its value and
// throws std::invalid_argument naming the parameter, the value and the fix.

#include "transport/config_checks.h"
#include "transport/endpoint.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/send_tcp.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
using boost::asio::ip::tcp;
using std::chrono::milliseconds;
using transport::endpoint_use;

/*! One HOST:PORT, parsed as the UDP transports parse theirs. */
tcp::endpoint parse_one(const std::string& text, endpoint_use use)
{
    const auto eps = transport::parse_endpoints(
        text, "endpoint", use, transport::ip_family::ipv4_or_ipv6);
    if (eps.size() != 1)
        throw std::invalid_argument("endpoint: \"" + text + "\" names " +
                                    std::to_string(eps.size()) +
                                    " addresses; a connected link has one HOST:PORT");
    return tcp::endpoint(eps[0].address(), eps[0].port());
}

std::size_t checked_buffer_size(std::size_t bytes, std::size_t max)
{
    if (bytes > max)
        throw std::invalid_argument(
            "buffer_size: " + std::to_string(bytes) +
            " bytes is more than the kernel accepts; use at most " + std::to_string(max) +
            " (0 = the kernel's own, autotuned)");
    return bytes;
}

milliseconds checked_peer_timeout(milliseconds t)
{
    if (t.count() != 0 && t.count() < 1000)
        throw std::invalid_argument(
            "peer_timeout: " + std::to_string(t.count()) +
            " ms is below what TCP keepalive can measure (whole seconds); use 1000 ms "
            "or more, or 0 for the kernel's defaults");
    if (t.count() < 0 || t > milliseconds(24 * 3600 * 1000))
        throw std::invalid_argument("peer_timeout: " + std::to_string(t.count()) +
                                    " ms is out of range; use 1000 ms to one day, or 0");
    return t;
}

} // namespace

template <typename Derived>
Derived& tcp_config_base<Derived>::set_endpoint(const std::string& endpoint)
{
    d_endpoint = parse_one(
        endpoint, Derived::receives ? endpoint_use::receive : endpoint_use::send);
    d_has_endpoint = true;
    return self();
}

template <typename Derived>
Derived& tcp_config_base<Derived>::set_endpoint(const tcp::endpoint& endpoint)
{
    // A listener takes any address, and port 0 (the kernel picks one); a sender needs
    // a destination.
    if (!Derived::receives &&
        (endpoint.port() == 0 || endpoint.address().is_unspecified()))
        throw std::invalid_argument(
            "endpoint: \"" + endpoint.address().to_string() + ":" +
            std::to_string(endpoint.port()) +
            "\" is not a destination; give the receiver's address and a port 1-65535");
    d_endpoint = endpoint;
    d_has_endpoint = true;
    return self();
}

template <typename Derived>
Derived& tcp_config_base<Derived>::set_buffer_size(std::size_t bytes)
{
    d_buffer_size = checked_buffer_size(bytes, max_buffer_size);
    return self();
}

template <typename Derived>
Derived& tcp_config_base<Derived>::set_peer_timeout(milliseconds timeout)
{
    d_peer_timeout = checked_peer_timeout(timeout);
    return self();
}

template class tcp_config_base<recv::tcp_config>;
template class tcp_config_base<send::tcp_config>;

namespace recv {

tcp_config::tcp_config() = default;

} // namespace recv

namespace send {

tcp_config& tcp_config::set_interface(const std::string& address_or_name)
{
    d_interface = transport::checked_interface(address_or_name);
    return *this;
}

} // namespace send

} // namespace spead
} // namespace gr
