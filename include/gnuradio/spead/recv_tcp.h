/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_TCP_H
#define INCLUDED_SPEAD_RECV_TCP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/tcp_config_base.h>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Settings of a listening SPEAD-over-TCP reader (a connected link): the endpoint
 * to listen on, buffer and peer_timeout of tcp_config_base, and admission and framing
 * limits.
 */
class SPEAD_API tcp_config : public tcp_config_base<tcp_config>
{
public:
    /*! Largest SPEAD packet accepted on a connection, bytes (65536, as spead2). */
    static constexpr std::size_t default_max_packet_size = 65536;
    /*! Smallest and largest max_packet_size accepted, bytes. */
    static constexpr std::size_t min_max_packet_size = 64;
    static constexpr std::size_t max_max_packet_size = std::size_t(64) << 20;
    /*! Senders connected at once (1: one sender, as spead2's TCP reader). */
    static constexpr std::size_t default_max_connections = 1;
    /*! Largest max_connections accepted. */
    static constexpr std::size_t max_max_connections = 1024;

    /*! The endpoint is listened on. */
    static constexpr bool receives = true;

    tcp_config() = default;

    /*! Senders connected at once, 1 to 1024 (default 1). A connection beyond it is
     * accepted and closed at once, counted in connections_refused and logged. */
    tcp_config& set_max_connections(std::size_t n);
    std::size_t get_max_connections() const { return d_max_connections; }

    /*!
     * Peers allowed to connect: comma-separated addresses and networks,
     * `10.0.0.0/8,192.168.1.5,::1`. Empty (default): every peer. A peer not in the
     * list is closed at once, counted in connections_refused and logged once per
     * address. IPv4 peers arriving on an IPv6 socket (::ffff:a.b.c.d) match their
     * IPv4 entries.
     */
    tcp_config& set_allowed_peers(const std::string& peers);
    const std::string& get_allowed_peers() const { return d_allowed_peers; }

    /*! Largest SPEAD packet (header, item pointers and payload) on a connection, 64 B
     * to 64 MiB (default 65536, as spead2's max_size). A longer one ends that
     * connection (connections_frame_too_large). Each connection holds a buffer of
     * about twice this. */
    tcp_config& set_max_packet_size(std::size_t bytes);
    std::size_t get_max_packet_size() const { return d_max_packet_size; }

    /*! After a connection ends, keep accepting new ones (true), or end the stream once
     * no connection is left (false, default: as spead2, whose stream ends when its
     * sender disconnects). Either way the stream does not end before a first
     * connection has come and gone. */
    tcp_config& set_keep_listening(bool keep_listening);
    bool get_keep_listening() const { return d_keep_listening; }

    /*! Ends a connection that sends nothing for this long (connections_idle_timeout),
     * freeing its slot for another sender; 0 (default) = never. A live sender may be
     * idle between heaps: set it well above the longest gap. */
    tcp_config& set_idle_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_idle_timeout() const { return d_idle_timeout; }

private:
    std::size_t d_max_connections = default_max_connections;
    std::string d_allowed_peers;
    std::size_t d_max_packet_size = default_max_packet_size;
    bool d_keep_listening = false;
    std::chrono::milliseconds d_idle_timeout{ 0 };
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
class SPEAD_API tcp_reader : public reader
{
public:
    /*! Opens, binds and listens.
     * \throws std::invalid_argument when the config has no endpoint or a bad
     *         allowed_peers entry
     * \throws std::system_error when a socket call fails (e.g. the port is in use) */
    tcp_reader(stream& owner, const tcp_config& config);
    ~tcp_reader() override;

    recv_stats transport_stats() const override;

    /*! Address and port the reader listens on (the port the kernel picked for 0). */
    boost::asio::ip::tcp::endpoint get_bound_endpoint() const;
    /*! Connections open now. */
    std::size_t get_num_connections() const;

protected:
    void run() override;
    void wake() override;

private:
    struct impl;
    std::unique_ptr<impl> d_impl;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_TCP_H */
