/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_TCP_H
#define INCLUDED_SPEAD_RECV_TCP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/listen_config_base.h>
#include <gnuradio/spead/recv_link.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/tcp_config_base.h>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Settings of a listening SPEAD-over-TCP reader (a connected link): the endpoint
 * to listen on, buffer and peer_timeout of tcp_config_base, and admission, the
 * largest packet and endings of listen_config_base.
 */
class SPEAD_API tcp_config : public tcp_config_base<tcp_config>,
                             public listen_config_base<tcp_config>
{
public:
    /*! Largest SPEAD packet accepted on a connection, bytes (65536, as spead2's
     * max_size). Each connection holds a buffer of about twice max_packet_size. */
    static constexpr std::size_t default_max_packet_size = 65536;
    /*! Largest max_packet_size accepted, bytes (64 MiB). */
    static constexpr std::size_t max_max_packet_size = std::size_t(64) << 20;

    /*! The endpoint is listened on. */
    static constexpr bool receives = true;

    /*! Defined out of line: without members of its own, a class defaulted here would
     * be an aggregate, and `tcp_config config = {}` would not compile. */
    tcp_config();
};

/*!
 * \brief Listens for SPEAD over TCP and feeds every connection's packets to a stream.
 *
 * Framing is spead2's: a connection carries SPEAD packets back to back, each one's
 * length found from its header (8 + 8 × items + PAYLOAD_LENGTH). Up to max_connections
 * senders at once (fan-in), each read in order and assembled as the SPEAD sender it
 * is: its own heap cnts (senders may use the same ones) and its own max_heaps window,
 * its heaps delivered in order. A connection's end flushes its partial heaps.
 *
 * Back-pressure, not loss: when the stream's heap queue is full the reader stops
 * reading, the socket fills and TCP slows the sender (counted in receive_waits).
 *
 * Every connection accepted ends in exactly one of connections_closed,
 * connections_lost, connections_framing_errors, connections_frame_too_large,
 * connections_partial_frame, connections_idle_timeout or connections_stopped; refused
 * ones in connections_refused. Create it with stream::emplace_reader<tcp_reader>(config),
 * which starts it; the stream's stop() ends it within a few milliseconds.
 */
class SPEAD_API tcp_reader : public link_reader
{
public:
    /*! Opens, binds and listens.
     * \throws std::invalid_argument when the config has no endpoint or a bad
     *         allowed_peers entry
     * \throws std::system_error when a socket call fails (e.g. the port is in use) */
    tcp_reader(stream& owner, const tcp_config& config);
    /*! Accepts on a duplicate of \p acceptor, a listening TCP socket its caller made
     * (spead2's add_tcp_reader(acceptor); the caller may close theirs at once): the
     * config's endpoint is not used, the rest applies.
     * \throws std::invalid_argument when \p acceptor is not a listening TCP socket */
    tcp_reader(stream& owner, int acceptor, const tcp_config& config);

    /*! Address and port the reader listens on (the port the kernel picked for 0). */
    boost::asio::ip::tcp::endpoint get_bound_endpoint() const { return d_bound; }

private:
    boost::asio::ip::tcp::endpoint d_bound;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_TCP_H */
