/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::tcp_reader: the TCP listener as a reader; the connected-link semantics are
// connected_reader's.

#include "streams/connected_reader.h"
#include "tcp_socket.h"
#include <gnuradio/spead/recv_tcp.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

struct tcp_reader::impl : link::packet_sink {
    impl(tcp_reader& owner,
         std::unique_ptr<transport::tcp_listener> l,
         const link::reader_limits& limits)
        : owner(owner), bound(l->bound_endpoint()), loop(std::move(l), limits)
    {
    }
    bool add_packets(const packet_view* packets, std::size_t n) override
    {
        return owner.add_packets(packets, n);
    }
    // Each connection is a SPEAD sender of its own: its own heap cnts and max_heaps.
    bool
    add_packets_from(std::size_t slot, const packet_view* packets, std::size_t n) override
    {
        return owner.add_packets(packets, n, first_source + slot);
    }
    void connection_ended(std::size_t slot) override
    {
        owner.end_source(first_source + slot);
    }
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout) override
    {
        return owner.wait_for_queue_space(timeout);
    }
    // Stopped, or ended (a stop heap in heaps mode): every connection goes.
    bool stopping() const override
    {
        return owner.stopping() || owner.get_stream().is_stopped();
    }

    tcp_reader& owner;
    std::size_t first_source = 0; //!< connection slot k is source first_source + k
    boost::asio::ip::tcp::endpoint bound;
    link::connected_reader loop;
};

namespace {
link::reader_limits limits_of(const tcp_config& config)
{
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set the address and port to listen on, e.g. :7148");
    link::reader_limits l;
    l.max_connections = config.get_max_connections();
    l.max_packet_size = config.get_max_packet_size();
    l.keep_listening = config.get_keep_listening();
    l.idle_timeout = config.get_idle_timeout();
    l.allowed_peers = config.get_allowed_peers();
    return l;
}
} // namespace

tcp_reader::tcp_reader(stream& owner, const tcp_config& config) : reader(owner)
{
    const link::reader_limits limits = limits_of(config);
    auto listener = std::make_unique<transport::tcp_listener>(
        config.get_endpoint(), config.get_buffer_size(), config.get_peer_timeout());
    d_impl = std::make_unique<impl>(*this, std::move(listener), limits);
    d_impl->first_source = reserve_sources(limits.max_connections);
}

tcp_reader::~tcp_reader() = default;

recv_stats tcp_reader::transport_stats() const { return d_impl->loop.stats(); }

boost::asio::ip::tcp::endpoint tcp_reader::get_bound_endpoint() const
{
    return d_impl->bound;
}

std::size_t tcp_reader::get_num_connections() const
{
    return d_impl->loop.num_connections();
}

void tcp_reader::run() { d_impl->loop.run(*d_impl); }

void tcp_reader::wake() { d_impl->loop.wake(); }

} // namespace recv
} // namespace spead
} // namespace gr
