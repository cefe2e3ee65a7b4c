/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TCP_CONFIG_BASE_H
#define INCLUDED_SPEAD_TCP_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief The settings that the two ends of a SPEAD-over-TCP link share: the endpoint,
 * the socket buffer and dead-peer detection, validated in the same words for both
 * (as udp_config_base for UDP). \p Derived (recv::tcp_config, send::tcp_config) adds
 * its own settings and gives `receives` (whether the endpoint is listened on or
 * connected to); the setters return it, so calls chain. Setters throw
 * std::invalid_argument naming the parameter, the value and the fix.
 */
template <typename Derived>
class SPEAD_API tcp_config_base
{
public:
    /*! Socket buffer, bytes (208 KiB, as spead2's TCP reader and TcpStream). */
    static constexpr std::size_t default_buffer_size = 208 * 1024;
    /*! Largest buffer_size accepted, bytes. */
    static constexpr std::size_t max_buffer_size = std::size_t(1) << 30;
    /*! A peer that stops answering (link down, host gone) is declared lost within
     * about this long (5 s); see set_peer_timeout(). */
    static constexpr std::chrono::milliseconds default_peer_timeout{ 5000 };

    /*!
     * The endpoint as text, ports 1 to 65535. To listen on: `10.0.0.2:7148` (that
     * local address only), `0.0.0.0:7148` or `:7148` (every local address) or
     * `hostname:7148`. To connect to: the receiver, `10.0.0.2:7148` or `hostname:7148`.
     * A name is resolved here, so a name that does not resolve is refused here.
     */
    Derived& set_endpoint(const std::string& endpoint);
    /*! As an object. To listen on, port 0 is accepted here only: the kernel picks a
     * free port, which tcp_reader::get_bound_endpoint() tells (for tests). */
    Derived& set_endpoint(const boost::asio::ip::tcp::endpoint& endpoint);
    const boost::asio::ip::tcp::endpoint& get_endpoint() const { return d_endpoint; }
    /*! An endpoint has been set (the reader or stream refuses a config without one). */
    bool has_endpoint() const { return d_has_endpoint; }

    /*! Socket buffer per connection, bytes (SO_RCVBUF or SO_SNDBUF); default 208 KiB
     * as spead2; 0 = the kernel's own (autotuned). */
    Derived& set_buffer_size(std::size_t bytes);
    std::size_t get_buffer_size() const { return d_buffer_size; }

    /*!
     * Dead-peer detection: a connection whose peer stops answering (link down, host
     * powered off: no FIN or RST ever arrives) fails within about this time, counted
     * in connections_lost and logged: data unacknowledged for this long
     * (TCP_USER_TIMEOUT), or keepalive probes unanswered while idle (SO_KEEPALIVE,
     * TCP_KEEPIDLE/INTVL/CNT). 1000 ms or more (keepalive counts whole seconds),
     * default 5000; 0 = off (the kernel's defaults: minutes to hours).
     */
    Derived& set_peer_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_peer_timeout() const { return d_peer_timeout; }

protected:
    tcp_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    boost::asio::ip::tcp::endpoint d_endpoint;
    bool d_has_endpoint = false;
    std::size_t d_buffer_size = default_buffer_size;
    std::chrono::milliseconds d_peer_timeout = default_peer_timeout;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_TCP_CONFIG_BASE_H */
