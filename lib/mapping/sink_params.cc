/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/sink_params.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_rdma.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! An id the sink may give an item: above the reserved ones, within the flavour. */
void check_item_id(const std::string& parameter,
                   std::uint64_t id,
                   const flavour& f,
                   const std::string& default_id)
{
    if (id <= item_id::descriptor_dtype || id > f.max_item_id())
        throw std::invalid_argument(
            parameter + ": " + item_id_tag_name(id) + " is reserved or does not fit " +
            f.name() + "; use an id above 0x15 and up to " +
            item_id_tag_name(f.max_item_id()) + " (default " + default_id + ")");
}

void plan_mapping(const sink_params& p, sink_plan& plan)
{
    stream_to_heap_config& m = plan.heaps;
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

    check_item_id("payload_item", p.payload_item, m.flavour, "0x1000");
    m.payload_item = p.payload_item;

    if ((p.len_tag_key.empty() || p.input_mode == "continuous") &&
        (p.heap_items == 0 || p.heap_items > static_cast<std::size_t>(INT_MAX / 2)))
        throw std::invalid_argument(
            "heap_items: " + std::to_string(p.heap_items) +
            (p.input_mode == "continuous"
                 ? " in continuous mode; give the items per heap per input, 1 to " +
                       std::to_string(INT_MAX / 2)
                 : " with no length tag key; give the items per heap (>= 1), or a "
                   "len_tag_key (e.g. packet_len) to send one heap per tagged packet"));
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

/*! An item id the sink sends beside the payload: not reserved, not the payload's. */
void check_data_item_id(const std::string& parameter,
                        std::uint64_t id,
                        const sink_plan& plan,
                        const std::string& default_id)
{
    check_item_id(parameter, id, plan.heaps.flavour, default_id);
    if (id == plan.heaps.payload_item)
        throw std::invalid_argument(parameter + ": " + item_id_tag_name(id) +
                                    " is also payload_item; give each item its own id");
}

void plan_input_mode(const sink_params& p, sink_plan& plan, const gr::logger_ptr& logger)
{
    if (p.input_mode == "tagged" && logger)
        logger->warn("input_mode: 'tagged' is the old name of 'heaps' (a heap per tagged "
                     "packet); it still works, but use heaps");
    if (p.input_mode != "heaps" && p.input_mode != "tagged" &&
        p.input_mode != "continuous")
        throw std::invalid_argument("input_mode: '" + p.input_mode +
                                    "' is not an input mode; use heaps (a heap per "
                                    "tagged packet) or continuous (a timestamped "
                                    "stream cut into heaps of heap_items)");
    if (p.substreams < 1 || p.substreams > sink_max_substreams)
        throw std::invalid_argument("substreams: " + std::to_string(p.substreams) +
                                    " is out of range; give the number of inputs, 1 to " +
                                    std::to_string(sink_max_substreams));
    plan.continuous = p.input_mode == "continuous";
    if (!plan.continuous) {
        if (p.substreams != 1)
            throw std::invalid_argument("substreams: " + std::to_string(p.substreams) +
                                        " needs input_mode continuous; use 1 in heaps "
                                        "mode");
        return;
    }
    const flavour& f = plan.heaps.flavour;
    stream_to_chunk_config& c = plan.chunks;
    static_cast<sink_heap_config&>(c) = plan.heaps;
    c.timestamp_item = p.timestamp_item;
    c.substreams = p.substreams;
    c.substream_item = p.substream_item;
    c.item_bytes = plan.heaps.type.size() * plan.heaps.vlen;
    c.validate_layout(); // what the receiving side checks too
    check_data_item_id("timestamp_item", p.timestamp_item, plan, "0x1600");
    if (p.substream_item != 0)
        check_data_item_id("substream_item", p.substream_item, plan, "e.g. 0x1601");
    if (p.timestamp_step > f.max_address())
        throw std::invalid_argument(
            "timestamp_step: " + std::to_string(p.timestamp_step) + " does not fit " +
            f.name() + "; use 0 (= heap_items) up to " + std::to_string(f.max_address()));
    if (p.start_timestamp > f.max_address())
        throw std::invalid_argument(
            "start_timestamp: " + std::to_string(p.start_timestamp) +
            " does not fit the " + std::to_string(f.heap_address_bits()) +
            "-bit immediate of " + f.name() + "; use 0 to " +
            std::to_string(f.max_address()) +
            (f.heap_address_bits() < 48 ? " or flavour 64-48"
                                        : " (timestamps counted from a later start)"));
    if (!std::isfinite(p.sample_rate) || p.sample_rate < 0)
        throw std::invalid_argument("sample_rate: " + std::to_string(p.sample_rate) +
                                    " is not a rate; give timestamps per second, > 0 "
                                    "(0: rx_time tags are ignored)");
    if (!std::isfinite(p.sync_time))
        throw std::invalid_argument("sync_time: not a time; give the UNIX time in "
                                    "seconds of timestamp 0 (default 0)");
    c.heap_items = p.heap_items;
    c.timestamp_step = p.timestamp_step == 0 ? p.heap_items : p.timestamp_step;
    c.start_timestamp = p.start_timestamp;
    c.sample_rate = p.sample_rate;
    c.sync_time = p.sync_time;
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
    if (plan.transport.kind == transport_kind::rdma)
        // RC needs no MTU-sized packets: the default (1472, for datagrams) becomes
        // rdma's (1 MiB + 4 KiB: a 1 MiB heap and its header in one message); the
        // device's max message size is checked at connection.
        plan.stream.set_max_message_size(p.max_packet_size ==
                                                 sink_params().max_packet_size
                                             ? recv::rdma_config::default_max_packet_size
                                             : p.max_packet_size);
    else
        plan.stream.set_max_packet_size(p.max_packet_size);
    plan.stream.set_rate(p.rate_gbps * 1e9 / 8.0).set_max_heaps(sink_send_slots);
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

/*! tcp: the one receiver to connect to, and how. */
void plan_connection(const sink_params& p, sink_plan& plan)
{
    if (p.endpoints.empty())
        throw std::invalid_argument(
            "endpoints: empty; give the listening receiver to connect to, e.g. "
            "127.0.0.1:7148 or recv-host:7148");
    if (!std::isfinite(p.connect_timeout) || !(p.connect_timeout > 0))
        throw std::invalid_argument(
            "connect_timeout: " + std::to_string(p.connect_timeout) +
            " is not a duration; give the seconds a connection attempt may take, > 0 "
            "(default 5)");
    // One connection per endpoint: endpoint i carries substream i (several to the same
    // receiver are several connections to it).
    std::size_t begin = 0;
    while (begin <= p.endpoints.size()) {
        const std::size_t comma =
            std::min(p.endpoints.find(',', begin), p.endpoints.size());
        send::tcp_config link;
        try {
            link.set_endpoint(p.endpoints.substr(begin, comma - begin));
        } catch (const std::invalid_argument& e) {
            // the config names its own parameter (endpoint); the block's is endpoints
            const std::string what = e.what();
            const auto colon = what.find(": ");
            throw std::invalid_argument("endpoints: " + (colon == std::string::npos
                                                             ? what
                                                             : what.substr(colon + 2)));
        }
        if (p.buffer_size != 0) // 0: the stream's default, as for udp
            link.set_buffer_size(p.buffer_size);
        if (!p.interface.empty())
            link.set_interface(p.interface);
        link.set_connect_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(p.connect_timeout)));
        link.set_reconnect(p.reconnect);
        plan.tcp.push_back(link);
        begin = comma + 1;
    }
}

/*! rdma: one connection per verbs://HOST:PORT endpoint (substream), and how. */
void plan_rdma_connection(const sink_params& p, sink_plan& plan)
{
    if (p.endpoints.empty())
        throw std::invalid_argument(
            "endpoints: empty; give the listening receiver to connect to, e.g. "
            "verbs://10.0.0.2:7150");
    if (!std::isfinite(p.connect_timeout) || !(p.connect_timeout > 0))
        throw std::invalid_argument(
            "connect_timeout: " + std::to_string(p.connect_timeout) +
            " is not a duration; give the seconds a connection attempt may take, > 0");
    std::size_t begin = 0;
    while (begin <= p.endpoints.size()) {
        const std::size_t comma =
            std::min(p.endpoints.find(',', begin), p.endpoints.size());
        send::rdma_config link;
        const std::string one = p.endpoints.substr(begin, comma - begin);
        try {
            link.set_endpoint(one);
        } catch (const std::invalid_argument& e) {
            // the config names its own parameter (endpoint); the block's is endpoints
            throw std::invalid_argument("endpoints" + std::string(e.what()).substr(8));
        }
        if (!p.interface.empty())
            link.set_interface(p.interface);
        link.set_connect_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(p.connect_timeout)));
        link.set_reconnect(p.reconnect);
        link.set_inline_bytes(p.inline_bytes);
        plan.rdma.push_back(link);
        begin = comma + 1;
    }
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
    plan_input_mode(p, plan, logger);
    plan_stream(p, plan);
    if (plan.transport.kind == transport_kind::pcap)
        plan_capture(p, plan);
    else if (plan.transport.kind == transport_kind::tcp)
        plan_connection(p, plan);
    else if (plan.transport.kind == transport_kind::rdma)
        plan_rdma_connection(p, plan);
    else
        plan_network(p, plan);
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
