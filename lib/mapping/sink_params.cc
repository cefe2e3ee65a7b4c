/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/sink_params.h"
#include <gnuradio/spead/item_ids.h>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

void plan_mapping(const sink_params& p, sink_plan& plan)
{
    stream_to_heap_config& m = plan.mapping;
    m.type = item_type::parse(p.item_type);
    m.byte_order = parse_byte_order(p.byte_order, false);
    if (p.vlen < 1 || p.vlen > (1u << 24))
        throw std::invalid_argument("vlen: " + std::to_string(p.vlen) +
                                    " is out of range; use 1 (scalar items) up to 2^24");
    m.vlen = p.vlen;

    try {
        m.flavour = flavour::from_string(p.flavour);
    } catch (const std::invalid_argument&) {
        throw std::invalid_argument("flavour: '" + p.flavour +
                                    "' is not a SPEAD flavour; use 64-40 (spead2's "
                                    "default) or 64-48");
    }
    if (m.flavour.heap_address_bits() != 40 && m.flavour.heap_address_bits() != 48)
        throw std::invalid_argument("flavour: '" + p.flavour +
                                    "' is not supported by the sink; use 64-40 or 64-48");

    if (p.payload_item <= item_id::descriptor_dtype ||
        p.payload_item > m.flavour.max_item_id())
        throw std::invalid_argument("payload_item: " + item_id_tag_name(p.payload_item) +
                                    " is reserved or does not fit " + m.flavour.name() +
                                    "; use an id above 0x15 and up to " +
                                    item_id_tag_name(m.flavour.max_item_id()) +
                                    " (default 0x1000)");
    m.payload_item = p.payload_item;

    if (p.len_tag_key.empty() &&
        (p.heap_items == 0 || p.heap_items > static_cast<std::size_t>(INT_MAX / 2)))
        throw std::invalid_argument(
            "heap_items: " + std::to_string(p.heap_items) +
            " with no length tag key; give the items per heap (>= 1), or a len_tag_key "
            "(e.g. packet_len) to send one heap per tagged packet");
    m.len_tag_key = p.len_tag_key;
    m.heap_items = p.heap_items;

    if (p.heap_cnt_start > m.flavour.max_address())
        throw std::invalid_argument(
            "heap_cnt_start: " + std::to_string(p.heap_cnt_start) + " does not fit " +
            m.flavour.name() + "; use 0 to " + std::to_string(m.flavour.max_address()));
    if (p.heap_cnt_step == 0 || p.heap_cnt_step > m.flavour.max_address())
        throw std::invalid_argument("heap_cnt_step: must be at least 1 (heaps need "
                                    "distinct cnts); give e.g. 1, or the number of "
                                    "senders sharing a receiver");
    m.cnt_start = p.heap_cnt_start;
    m.cnt_step = p.heap_cnt_step;
    m.descriptor_interval = p.descriptor_interval;
    m.payload_name = p.payload_name;
    m.payload_description = p.payload_description;
}

void plan_stream(const sink_params& p, sink_plan& plan)
{
    if (!std::isfinite(p.rate_gbps) || p.rate_gbps < 0)
        throw std::invalid_argument("rate_gbps: " + std::to_string(p.rate_gbps) +
                                    " is not a rate; give Gb/s >= 0 (0: as fast as "
                                    "possible)");
    if (!std::isfinite(p.stats_interval) || p.stats_interval < 0)
        throw std::invalid_argument(
            "stats_interval: " + std::to_string(p.stats_interval) +
            " is not a duration; give seconds between stats messages, >= 0 (0: none)");
    plan.stats_interval = std::chrono::duration<double>(p.stats_interval);
    plan.send_stop_heap = p.send_stop_heap;
    plan.stream.set_max_packet_size(p.max_packet_size)
        .set_rate(p.rate_gbps * 1e9 / 8.0)
        .set_max_heaps(sink_send_slots);
}

void plan_network(const sink_params& p, sink_plan& plan)
{
    if (p.endpoints.empty())
        throw std::invalid_argument("endpoints: empty; give where to send, e.g. "
                                    "127.0.0.1:7148, 239.1.2.3:7148 or a range "
                                    "239.1.2.3+3:7148");
    // Checked whatever the transport, so errors do not depend on the machine.
    plan.ibv.set_max_poll(p.max_poll).set_comp_vector(plan.transport.comp_vector);
    plan.udp.set_endpoints(p.endpoints)
        .set_interface(p.interface)
        .set_ttl(p.ttl)
        .set_buffer_size(p.buffer_size);
    if (plan.transport.kind == transport_kind::ibverbs)
        plan.ibv.set_endpoints(p.endpoints)
            .set_interface(plan.transport.interface)
            .set_ttl(p.ttl)
            .set_buffer_size(p.buffer_size);
}

void plan_capture(const sink_params& p, sink_plan& plan)
{
    if (p.capture_file.empty())
        throw std::invalid_argument("capture_file: empty; the pcap transport records "
                                    "into a capture file, give its path");
    if (p.endpoints.empty())
        throw std::invalid_argument("endpoints: empty; the pcap transport writes "
                                    "frames to these destinations, e.g. 127.0.0.1:7148");
    plan.udp.set_endpoints(p.endpoints); // parsed here so errors name endpoints
    plan.capture_file = p.capture_file;
}

} // namespace

sink_plan plan_sink(const sink_params& p, const gr::logger_ptr& logger)
{
    sink_plan plan;
    plan.transport = choose_transport(p.transport,
                                      p.interface,
                                      p.buffer_size,
                                      p.comp_vector,
                                      transport_direction::send,
                                      logger);
    plan_mapping(p, plan);
    plan_stream(p, plan);
    if (plan.transport.kind == transport_kind::pcap)
        plan_capture(p, plan);
    else
        plan_network(p, plan);
    return plan;
}

} // namespace spead
} // namespace gr
