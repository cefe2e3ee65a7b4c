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
#include <gnuradio/spead/tcp_config_base.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a SPEAD-over-TCP sender (a connected link): the receiver to
 * connect to, buffer and peer_timeout of tcp_config_base, and the local interface,
 * connection timeout and reconnection.
 */
class SPEAD_API tcp_config : public tcp_config_base<tcp_config>
{
public:
    /*! How long a connection attempt may take (5 s). */
    static constexpr std::chrono::milliseconds default_connect_timeout{ 5000 };
    /*! First and largest wait between reconnection attempts (0.1 s doubling to 5 s). */
    static constexpr std::chrono::milliseconds default_reconnect_min{ 100 };
    static constexpr std::chrono::milliseconds default_reconnect_max{ 5000 };

    /*! The endpoint is connected to. */
    static constexpr bool receives = false;

    tcp_config() = default;

    /*! Local interface to connect from (spead2's interface_address): its IP address
     * or netdev name. Empty (default): the kernel's route. */
    tcp_config& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

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
     * construction does not wait for the first connection. Either way the heaps written
     * but not yet acknowledged by the receiver's TCP when a connection fails are counted
     * in heaps_failed and heaps_lost_in_flight (a heap is sent once acknowledged; see
     * docs/links.md).
     */
    tcp_config& set_reconnect(bool reconnect);
    bool get_reconnect() const { return d_reconnect; }

    /*! Back-off between reconnection attempts: first wait \p min, doubling up to
     * \p max (1 ms <= min <= max <= 10 min). */
    tcp_config& set_reconnect_backoff(std::chrono::milliseconds min,
                                      std::chrono::milliseconds max);
    std::chrono::milliseconds get_reconnect_min() const { return d_reconnect_min; }
    std::chrono::milliseconds get_reconnect_max() const { return d_reconnect_max; }

private:
    std::string d_interface;
    std::chrono::milliseconds d_connect_timeout = default_connect_timeout;
    bool d_reconnect = false;
    std::chrono::milliseconds d_reconnect_min = default_reconnect_min;
    std::chrono::milliseconds d_reconnect_max = default_reconnect_max;
};

/*!
 * \brief Sends heaps as SPEAD over TCP to one receiver (one substream), framed as
 * spead2 frames it: packets back to back.
 *
 * Connects in the constructor, as spead2's TcpStream. A full socket (a slow receiver)
 * makes the writer wait, not fail: counted in send_waits and send_wait_us, and
 * send_heap() waits with it. A heap counts as sent once the receiver's TCP acknowledged
 * all its bytes. A lost connection (reset, peer_timeout) fails the heaps not yet
 * acknowledged (heaps_failed, heaps_lost_in_flight), is counted in connections_lost
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
