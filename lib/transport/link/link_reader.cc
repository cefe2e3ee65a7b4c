/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::link_reader: a connected_reader run as a stream's reader, each connection a
// source of its own. tcp_reader and rdma_reader only make their listeners.

#include "connected_reader.h"
#include <gnuradio/spead/recv_link.h>
#include <gnuradio/spead/recv_stream.h>

namespace gr {
namespace spead {
namespace recv {

struct link_reader::impl : loop, link::packet_sink {
    impl(link_reader& owner,
         std::unique_ptr<link::listener> l,
         const link::reader_limits& limits)
        : owner(owner), connections(std::move(l), limits)
    {
    }

    // The reader's loop.
    void run() override { connections.run(*this); }
    void wake() override { connections.wake(); }
    recv_stats stats() const override { return connections.stats(); }

    // Where its packets go.
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

    link_reader& owner;
    std::size_t first_source = 0; //!< connection slot k is source first_source + k
    link::connected_reader connections;
};

void link_reader::listen(std::unique_ptr<link::listener> l,
                         const link::reader_limits& limits)
{
    auto i = std::make_unique<impl>(*this, std::move(l), limits);
    i->first_source = reserve_sources(limits.max_connections);
    set_loop(std::move(i));
}

std::size_t link_reader::get_num_connections() const
{
    return loop_as<impl>().connections.num_connections();
}

} // namespace recv
} // namespace spead
} // namespace gr
