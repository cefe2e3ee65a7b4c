/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_LISTEN_CONFIG_BASE_H
#define INCLUDED_SPEAD_LISTEN_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/config_setter.h>
#include <chrono>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief What every listening end of a connected link (recv::tcp_config,
 * recv::rdma_config) sets: admission (max_connections, allowed_peers), the largest
 * packet, and when connections and the stream end (keep_listening, idle_timeout);
 * each validated here once, in the same words for every transport (as
 * udp_ibv_config_base for ibverbs). \p Derived gives what differs between transports:
 * `default_max_packet_size` and `max_max_packet_size`. The setters return \p Derived,
 * so calls chain, and throw std::invalid_argument naming the parameter, the value and
 * the fix.
 */
template <typename Derived>
class SPEAD_API listen_config_base
{
public:
    /*! Senders connected at once (1: one sender, as spead2's TCP reader). */
    static constexpr std::size_t default_max_connections = 1;
    /*! Default idle_timeout: the bound on a connection without progress. */
    static constexpr std::chrono::milliseconds default_idle_timeout{ 10000 };
    /*! Largest max_connections accepted. */
    static constexpr std::size_t max_max_connections = 1024;
    /*! Smallest max_packet_size accepted, bytes. */
    static constexpr std::size_t min_max_packet_size = 64;

    /*! Senders connected at once, 1 to 1024 (default 1). A connection beyond it is
     * refused, counted in connections_refused and logged. */
    Derived& set_max_connections(std::size_t n);
    std::size_t get_max_connections() const { return d_max_connections; }

    /*!
     * Peers allowed to connect: comma-separated addresses and networks,
     * `10.0.0.0/8,192.168.1.5,::1`. Empty (default): every peer. A peer not in the
     * list is refused, counted in connections_refused and logged once per address.
     * IPv4 peers arriving on an IPv6 socket (::ffff:a.b.c.d) match their IPv4 entries.
     */
    Derived& set_allowed_peers(const std::string& peers);
    const std::string& get_allowed_peers() const { return d_allowed_peers; }

    /*! Largest SPEAD packet (header, item pointers and payload; rdma: one message) on
     * a connection, 64 B to Derived::max_max_packet_size (default
     * Derived::default_max_packet_size). A longer one ends that connection
     * (connections_frame_too_large). */
    Derived& set_max_packet_size(std::size_t bytes);
    std::size_t get_max_packet_size() const { return d_max_packet_size; }

    /*! After a connection ends, keep accepting new ones (true), or end the stream once
     * no connection is left (false, default: as spead2, whose stream ends when its
     * sender disconnects). Either way the stream does not end before a first
     * connection has come and gone. */
    Derived& set_keep_listening(bool keep_listening)
    {
        return detail::assign(self(), d_keep_listening, keep_listening);
    }
    bool get_keep_listening() const { return d_keep_listening; }

    /*! The longest a connection may hold its slot without progress (default 10 s, 0
     * to 10 min, 0 = no bound): from its accept to its first whole packet (else it
     * ends as connections_idle_timeout), and from the start of a packet to its end
     * (else connections_partial_frame), so that silent and trickling peers cannot
     * lock senders out. A sender idle between whole packets is not cut (peer_timeout
     * finds dead ones); time the receiver itself waited for its queue does not count.
     */
    Derived& set_idle_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_idle_timeout() const { return d_idle_timeout; }

protected:
    listen_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::size_t d_max_connections = default_max_connections;
    std::string d_allowed_peers;
    std::size_t d_max_packet_size = Derived::default_max_packet_size;
    bool d_keep_listening = false;
    std::chrono::milliseconds d_idle_timeout = default_idle_timeout;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_LISTEN_CONFIG_BASE_H */
