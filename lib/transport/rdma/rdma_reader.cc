/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::rdma_reader: the rdma_cm listener as a reader; the connected-link semantics
// are connected_reader's.

#include "rdma_link.h"
#include "rdma_uri.h"
#include "streams/connected_reader.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_rdma.h>

namespace gr {
namespace spead {
namespace recv {

struct rdma_reader::impl : link::packet_sink {
    impl(rdma_reader& owner,
         std::unique_ptr<rdma::listener> l,
         const link::reader_limits& limits)
        : owner(owner), loop(std::move(l), limits)
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

    rdma_reader& owner;
    std::size_t first_source = 0; //!< connection slot k is source first_source + k
    link::connected_reader loop;
};

namespace {
/*! The address to listen on: the endpoint's, else the interface's, else every one. */
boost::asio::ip::address_v4 listen_address(const rdma_config& config)
{
    if (!config.get_host().empty())
        return rdma::resolve_host(config.get_host(), "endpoint");
    if (!config.get_interface().empty())
        return transport::resolve_interface(config.get_interface(), "interface").address;
    return boost::asio::ip::address_v4::any();
}
} // namespace

rdma_reader::rdma_reader(stream& owner, const rdma_config& given) : reader(owner)
{
    const rdma_config config = with_environment(given);
    validate(config);
    link::reader_limits limits;
    limits.max_connections = config.get_max_connections();
    limits.max_packet_size = config.get_max_packet_size();
    limits.keep_listening = config.get_keep_listening();
    limits.idle_timeout = config.get_idle_timeout();
    limits.allowed_peers = config.get_allowed_peers();
    rdma::listen_settings s;
    s.max_packet_size = config.get_max_packet_size();
    s.recv_depth = config.get_recv_depth();
    s.rdma_connections = config.get_rdma_connections();
    s.rdma_depth = config.get_rdma_depth();
    if (config.get_host().empty() && !config.get_interface().empty()) {
        s.address_parameter = "interface";
        s.address_shown = config.get_interface();
    } else {
        s.address_shown = config.get_host();
    }
    auto l =
        std::make_unique<rdma::listener>(listen_address(config), config.get_port(), s);
    d_impl = std::make_unique<impl>(*this, std::move(l), limits);
    d_impl->first_source = reserve_sources(limits.max_connections);
}

rdma_reader::~rdma_reader() = default;

recv_stats rdma_reader::transport_stats() const { return d_impl->loop.stats(); }

std::size_t rdma_reader::get_num_connections() const
{
    return d_impl->loop.num_connections();
}

void rdma_reader::run() { d_impl->loop.run(*d_impl); }

void rdma_reader::wake() { d_impl->loop.wake(); }

} // namespace recv
} // namespace spead
} // namespace gr
