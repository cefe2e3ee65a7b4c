/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The setters of tcp_config_base, recv::tcp_config and send::tcp_config: each checks
// its value and throws std::invalid_argument naming the parameter, the value and the
// fix.

#include "streams/peer_filter.h"
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

milliseconds checked_duration(const char* parameter, milliseconds t, bool zero_ok)
{
    const milliseconds max(10 * 60 * 1000);
    if (t.count() < (zero_ok ? 0 : 1) || t > max)
        throw std::invalid_argument(std::string(parameter) + ": " +
                                    std::to_string(t.count()) +
                                    " ms is out of range; use " + (zero_ok ? "0" : "1") +
                                    " to 600000 ms (10 min)");
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

tcp_config& tcp_config::set_max_connections(std::size_t n)
{
    if (n < 1 || n > max_max_connections)
        throw std::invalid_argument(
            "max_connections: " + std::to_string(n) + " is out of range; use 1 to " +
            std::to_string(max_max_connections) +
            " (the number of senders that may be connected at once)");
    d_max_connections = n;
    return *this;
}

tcp_config& tcp_config::set_allowed_peers(const std::string& peers)
{
    peer_filter check(peers); // throws for a malformed list
    d_allowed_peers = peers;
    return *this;
}

tcp_config& tcp_config::set_max_packet_size(std::size_t bytes)
{
    if (bytes < min_max_packet_size || bytes > max_max_packet_size)
        throw std::invalid_argument("max_packet_size: " + std::to_string(bytes) +
                                    " bytes is out of range; use " +
                                    std::to_string(min_max_packet_size) + " to " +
                                    std::to_string(max_max_packet_size) +
                                    " (at least the senders' max_packet_size)");
    d_max_packet_size = bytes;
    return *this;
}

tcp_config& tcp_config::set_keep_listening(bool keep_listening)
{
    d_keep_listening = keep_listening;
    return *this;
}

tcp_config& tcp_config::set_idle_timeout(milliseconds timeout)
{
    d_idle_timeout = checked_duration("idle_timeout", timeout, true);
    return *this;
}

} // namespace recv

namespace send {

tcp_config& tcp_config::set_interface(const std::string& address_or_name)
{
    if (!address_or_name.empty())
        transport::resolve_interface(address_or_name, "interface"); // throws if unknown
    d_interface = address_or_name;
    return *this;
}

tcp_config& tcp_config::set_connect_timeout(milliseconds timeout)
{
    d_connect_timeout = checked_duration("connect_timeout", timeout, false);
    return *this;
}

tcp_config& tcp_config::set_reconnect(bool reconnect)
{
    d_reconnect = reconnect;
    return *this;
}

tcp_config& tcp_config::set_reconnect_backoff(milliseconds min, milliseconds max)
{
    checked_duration("reconnect_min", min, false);
    checked_duration("reconnect_max", max, false);
    if (min > max)
        throw std::invalid_argument("reconnect_min: " + std::to_string(min.count()) +
                                    " ms is above reconnect_max (" +
                                    std::to_string(max.count()) +
                                    " ms); the back-off grows from min up to max");
    d_reconnect_min = min;
    d_reconnect_max = max;
    return *this;
}

} // namespace send

} // namespace spead
} // namespace gr
