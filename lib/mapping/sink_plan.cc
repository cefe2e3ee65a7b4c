/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/item_id_checks.h"
#include "mapping/sink_plan.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_rdma.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

void plan_mapping(const sink_config& c, sink_plan& plan)
{
    const sink_items& items = c.items;
    stream_to_heap_config& m = plan.heaps;
    map_items(items, m);
    m.flavour = flavour::from_string(items.get_flavour());
    check_sink_item_id("payload_item", items.get_payload_item(), m.flavour, "0x1000");

    const std::size_t heap_items = items.get_heap_items();
    if ((items.get_len_tag_key().empty() || c.is_continuous()) &&
        (heap_items == 0 || heap_items > static_cast<std::size_t>(INT_MAX / 2)))
        throw std::invalid_argument(
            "heap_items: " + std::to_string(heap_items) +
            (c.is_continuous()
                 ? " in continuous mode; give the items per heap per input, 1 to " +
                       std::to_string(INT_MAX / 2)
                 : " with no length tag key; give the items per heap (>= 1), or a "
                   "len_tag_key (e.g. packet_len) to send one heap per tagged packet"));
    m.heap_items = heap_items;

    if (items.get_heap_cnt_start() > m.flavour.max_address())
        throw std::invalid_argument(
            "heap_cnt_start: " + std::to_string(items.get_heap_cnt_start()) +
            " does not fit " + m.flavour.name() + "; use 0 to " +
            std::to_string(m.flavour.max_address()));
    if (items.get_heap_cnt_step() > m.flavour.max_address())
        throw std::invalid_argument(
            "heap_cnt_step: " + std::to_string(items.get_heap_cnt_step()) +
            " does not fit " + m.flavour.name() + "; use 1 to " +
            std::to_string(m.flavour.max_address()));
    m.cnt_start = items.get_heap_cnt_start();
    m.cnt_step = items.get_heap_cnt_step();
    m.descriptor_interval = items.get_descriptor_interval();
    m.payload_name = items.get_payload_name();
    m.payload_description = items.get_payload_description();
}

/*! An item id the sink sends beside the payload: not reserved, not the payload's. */
void check_data_item_id(const std::string& option,
                        std::uint64_t id,
                        const sink_plan& plan,
                        const std::string& default_id)
{
    check_sink_item_id(option, id, plan.heaps.flavour, default_id);
    if (id == plan.heaps.payload_item)
        throw std::invalid_argument(option + ": " + item_id_tag_name(id) +
                                    " is also payload_item; give each item its own id");
}

void plan_input_mode(const sink_config& c, sink_plan& plan, const gr::logger_ptr& logger)
{
    if (c.get_input_mode() == "tagged" && logger)
        logger->warn("input_mode: 'tagged' is the old name of 'heaps' (a heap per tagged "
                     "packet); it still works, but use heaps");
    const continuous_input& in = c.continuous;
    if (in.substreams < 1 || in.substreams > sink_max_substreams)
        throw std::invalid_argument("substreams: " + std::to_string(in.substreams) +
                                    " is out of range; give the number of inputs, 1 to " +
                                    std::to_string(sink_max_substreams));
    plan.continuous = c.is_continuous();
    if (!plan.continuous) {
        if (in.substreams != 1)
            throw std::invalid_argument("substreams: " + std::to_string(in.substreams) +
                                        " needs input_mode continuous; use 1 in heaps "
                                        "mode");
        return;
    }
    const flavour& f = plan.heaps.flavour;
    stream_to_chunk_config& chunks = plan.chunks;
    static_cast<sink_heap_config&>(chunks) = plan.heaps;
    static_cast<continuous_layout&>(chunks) = in;
    chunks.item_bytes = plan.heaps.type.size() * plan.heaps.vlen;
    chunks.validate_layout(); // what the receiving side checks too
    check_data_item_id("timestamp_item", in.timestamp_item, plan, "0x1600");
    if (in.substream_item != 0)
        check_data_item_id("substream_item", in.substream_item, plan, "e.g. 0x1601");
    if (in.timestamp_step > f.max_address())
        throw std::invalid_argument(
            "timestamp_step: " + std::to_string(in.timestamp_step) + " does not fit " +
            f.name() + "; use 0 (= heap_items) up to " + std::to_string(f.max_address()));
    if (in.start_timestamp > f.max_address())
        throw std::invalid_argument(
            "start_timestamp: " + std::to_string(in.start_timestamp) +
            " does not fit the " + std::to_string(f.heap_address_bits()) +
            "-bit immediate of " + f.name() + "; use 0 to " +
            std::to_string(f.max_address()) +
            (f.heap_address_bits() < 48 ? " or flavour 64-48"
                                        : " (timestamps counted from a later start)"));
    if (!std::isfinite(in.sample_rate) || in.sample_rate < 0)
        throw std::invalid_argument("sample_rate: " + std::to_string(in.sample_rate) +
                                    " is not a rate; give timestamps per second, > 0 "
                                    "(0: rx_time tags are ignored)");
    if (!std::isfinite(in.sync_time))
        throw std::invalid_argument("sync_time: not a time; give the UNIX time in "
                                    "seconds of timestamp 0 (default 0)");
    chunks.heap_items = plan.heaps.heap_items;
    chunks.timestamp_step =
        in.timestamp_step == 0 ? plan.heaps.heap_items : in.timestamp_step;
    chunks.start_timestamp = in.start_timestamp;
    chunks.sample_rate = in.sample_rate;
    chunks.sync_time = in.sync_time;
}

void plan_stream(const sink_config& c, sink_plan& plan)
{
    plan.stats_interval = std::chrono::duration<double>(c.get_stats_interval());
    plan.metrics = c.get_metrics();
    plan.send_stop_heap = c.get_send_stop_heap();
    plan.stream = c.stream;
    const std::size_t size = c.stream.get_max_packet_size();
    if (plan.transport.kind == transport_kind::rdma)
        // RC needs no MTU-sized packets: the default (1472, for datagrams) becomes
        // rdma's (1 MiB + 4 KiB: a 1 MiB heap and its header in one message); the
        // device's max message size is checked at connection.
        plan.stream.set_max_message_size(
            size == send::stream_config().get_max_packet_size()
                ? recv::rdma_config::default_max_packet_size
                : size);
    else
        plan.stream.set_max_packet_size(size); // the UDP payload's limit
    // Inline: the writer frees slots itself, waking the block only when it waits
    // (send_slots).
    plan.stream.set_max_heaps(sink_send_slots).set_inline_completions(true);
}

void plan_transport(const sink_config& c, sink_plan& plan)
{
    const transport_kind kind = plan.transport.kind;
    // What the transport's config refused of the options given by name.
    c.check_refusal(transport_name(kind));
    if (kind == transport_kind::pcap) {
        if (c.get_capture_file().empty())
            throw std::invalid_argument("capture_file: empty; the pcap transport records "
                                        "into a capture file, give its path");
        plan.capture_file = c.get_capture_file();
        plan.udp = c.udp; // the destinations of the frames
    } else if (kind == transport_kind::tcp) {
        plan.tcp = c.tcp;
    } else if (kind == transport_kind::rdma) {
        plan.rdma = c.rdma;
    } else {
        plan.udp = c.udp;
        if (kind == transport_kind::ibverbs) {
            plan.ibv = c.ibverbs;
            plan.ibv.set_interface(plan.transport.interface)
                .set_comp_vector(plan.transport.comp_vector);
        }
    }
}

} // namespace

sink_plan plan_sink(const sink_config& c, const gr::logger_ptr& logger)
{
    sink_plan plan;
    plan.transport = choose_transport_of(c, logger);
    plan_mapping(c, plan);
    plan_input_mode(c, plan, logger);
    plan_stream(c, plan);
    plan_transport(c, plan);
    return plan;
}

std::unique_ptr<sink_mapping> make_sink_mapping(const sink_plan& plan,
                                                const gr::logger_ptr& logger)
{
    if (plan.continuous)
        return std::make_unique<stream_to_chunk>(plan.chunks, logger);
    return std::make_unique<stream_to_heap>(plan.heaps, logger);
}

} // namespace spead
} // namespace gr
