/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_TCP_H
#define INCLUDED_SPEAD_SEND_TCP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/dial_config_base.h>
#include <gnuradio/spead/send_link.h>
#include <gnuradio/spead/tcp_config_base.h>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a SPEAD-over-TCP sender (a connected link): the receiver to
 * connect to, buffer and peer_timeout of tcp_config_base, the connection timeout and
 * reconnection of dial_config_base, and the local interface.
 */
class SPEAD_API tcp_config : public tcp_config_base<tcp_config>,
                             public dial_config_base<tcp_config>
{
public:
    /*! The endpoint is connected to. */
    static constexpr bool receives = false;

    tcp_config() = default;

    /*! Local interface to connect from (spead2's interface_address): its IP address
     * or netdev name. Empty (default): the kernel's route. */
    tcp_config& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

private:
    std::string d_interface;
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
 * and logged with its cause; then see dial_config_base::set_reconnect(). Destroying the
 * stream during a connection attempt or a back-off ends it at once.
 */
class SPEAD_API tcp_stream : public link_stream
{
public:
    /*! \throws std::invalid_argument for a config without an endpoint
     *  \throws std::system_error when the connection fails (refused, timed out,
     *          unreachable) and reconnect is off; the message names the endpoint,
     *          the cause and the fix */
    tcp_stream(boost::asio::io_context& io,
               const stream_config& config,
               const tcp_config& tcp_config);
    /*! Sends over a duplicate of \p socket, a TCP socket its caller connected
     * (spead2's TcpStream(thread_pool, socket); the caller may close theirs at once):
     * the config's endpoint and interface are not used; a lost connection cannot be
     * made again (reconnect fails with ENOTCONN).
     * \throws std::invalid_argument when \p socket is not a connected TCP socket */
    tcp_stream(boost::asio::io_context& io,
               const stream_config& config,
               int socket,
               const tcp_config& tcp_config);

    /*! Send buffer the kernel granted the current connection, bytes (0 if none). */
    std::size_t get_granted_buffer_size() const { return granted_buffer(); }
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_TCP_H */
