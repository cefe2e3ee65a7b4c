/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_TCP_H
#define INCLUDED_SPEAD_SEND_TCP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a SPEAD-over-TCP sender (a connected link).
 * Setters validate and throw std::invalid_argument naming the parameter, the value and
 * the fix.
 */
class SPEAD_API tcp_config
{
public:
    /*! Socket send buffer, bytes (208 KiB, as spead2's TcpStream). */
    static constexpr std::size_t default_buffer_size = 208 * 1024;
    /*! Largest buffer_size accepted, bytes. */
    static constexpr std::size_t max_buffer_size = std::size_t(1) << 30;
    /*! How long a connection attempt may take (5 s). */
    static constexpr std::chrono::milliseconds default_connect_timeout{ 5000 };
    /*! First and largest wait between reconnection attempts (0.1 s doubling to 5 s). */
    static constexpr std::chrono::milliseconds default_reconnect_min{ 100 };
    static constexpr std::chrono::milliseconds default_reconnect_max{ 5000 };
    /*! A receiver that stops acknowledging is declared lost within about this (5 s). */
    static constexpr std::chrono::milliseconds default_peer_timeout{ 5000 };

    tcp_config() = default;

    /*! The receiver to connect to: `10.0.0.2:7148` or `hostname:7148` (ports 1 to
     * 65535; a name is resolved here, so a name that does not resolve is refused
     * here). */
    tcp_config& set_endpoint(const std::string& endpoint);
    tcp_config& set_endpoint(const boost::asio::ip::tcp::endpoint& endpoint);
    const boost::asio::ip::tcp::endpoint& get_endpoint() const { return d_endpoint; }
    /*! An endpoint has been set (the stream refuses a config without one). */
    bool has_endpoint() const { return d_has_endpoint; }

    /*! Local interface to connect from (spead2's interface_address): its IP address
     * or netdev name. Empty (default): the kernel's route. */
    tcp_config& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

    /*! Send buffer, bytes (SO_SNDBUF); default 208 KiB as spead2; 0 = the kernel's own
     * (autotuned). */
    tcp_config& set_buffer_size(std::size_t bytes);
    std::size_t get_buffer_size() const { return d_buffer_size; }

    /*! How long one connection attempt may take before it fails (a peer that never
     * accepts, a black-holed route): 1 ms to 10 min, default 5 s. */
    tcp_config& set_connect_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_connect_timeout() const { return d_connect_timeout; }

    /*!
     * What happens when the connection cannot be made or is lost. false (default, as
     * spead2): construction throws when the first connection fails, and once a
     * connection is lost every later heap fails (the stream is finished). true: the
     * stream keeps trying, waiting reconnect_min, then twice that, ... up to
     * reconnect_max between attempts; heaps wait meanwhile (back-pressure) and
     * construction does not wait for the first connection. Either way the heap being
     * written when a connection fails is counted in heaps_lost_in_flight.
     */
    tcp_config& set_reconnect(bool reconnect);
    bool get_reconnect() const { return d_reconnect; }

    /*! Back-off between reconnection attempts: first wait \p min, doubling up to
     * \p max (1 ms <= min <= max <= 10 min). */
    tcp_config& set_reconnect_backoff(std::chrono::milliseconds min,
                                      std::chrono::milliseconds max);
    std::chrono::milliseconds get_reconnect_min() const { return d_reconnect_min; }
    std::chrono::milliseconds get_reconnect_max() const { return d_reconnect_max; }

    /*!
     * Dead-peer detection: data unacknowledged for this long (TCP_USER_TIMEOUT), or
     * keepalive probes unanswered while idle (SO_KEEPALIVE), fail the connection
     * (connections_lost). 1000 ms or more, default 5000; 0 = off (the kernel's
     * defaults: many minutes).
     */
    tcp_config& set_peer_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_peer_timeout() const { return d_peer_timeout; }

private:
    boost::asio::ip::tcp::endpoint d_endpoint;
    bool d_has_endpoint = false;
    std::string d_interface;
    std::size_t d_buffer_size = default_buffer_size;
    std::chrono::milliseconds d_connect_timeout = default_connect_timeout;
    bool d_reconnect = false;
    std::chrono::milliseconds d_reconnect_min = default_reconnect_min;
    std::chrono::milliseconds d_reconnect_max = default_reconnect_max;
    std::chrono::milliseconds d_peer_timeout = default_peer_timeout;
};

/*!
 * \brief Sends heaps as SPEAD over TCP to one receiver (one substream), framed as
 * spead2 frames it: packets back to back.
 *
 * Connects in the constructor, as spead2's TcpStream. A full socket (a slow receiver)
 * makes the writer wait, not fail: counted in send_waits and send_wait_us, and
 * send_heap() waits with it. A lost connection (reset, peer_timeout) fails the heap
 * being written (heaps_failed, heaps_lost_in_flight), is counted in connections_lost
 * and logged with its cause; then see tcp_config::set_reconnect(). Destroying the
 * stream during a connection attempt or a back-off ends it at once.
 */
class SPEAD_API tcp_stream : public stream
{
public:
    /*! \throws std::invalid_argument for a config without an endpoint
     *  \throws std::system_error when the connection fails (refused, timed out,
     *          unreachable) and reconnect is off; the message names the endpoint,
     *          the cause and the fix */
    tcp_stream(boost::asio::io_context& io,
               const stream_config& config,
               const tcp_config& tcp_config);
    ~tcp_stream() override;

    /*! A connection is up now. */
    bool is_connected() const;
    /*! Send buffer the kernel granted the current connection, bytes (0 if none). */
    std::size_t get_granted_buffer_size() const;

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_TCP_H */
