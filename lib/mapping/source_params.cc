/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/chunk_to_stream.h"
#include "mapping/source_params.h"
#include "transport/pcap/pcap_file.h"
#include "transport/split_endpoints.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! Default heap queue: a memory budget divided by max_heap_size, within limits.
 * Storage is taken from the pool only as heaps arrive, so a long queue of small heaps
 * costs little. A capture replay runs ahead of the flowgraph and gets more. */
std::size_t default_queue_heaps(bool pcap, std::size_t max_heap_size)
{
    const std::size_t budget = pcap ? std::size_t(1) << 30 : std::size_t(512) << 20;
    const std::size_t lo = pcap ? 64 : 32;
    const std::size_t hi = pcap ? 65536 : 4096;
    return std::clamp(budget / max_heap_size, lo, hi);
}

/*! An item id the block may use for data (not a protocol item, fits 56 bits). */
bool is_data_item_id(std::uint64_t id)
{
    return id > item_id::stream_ctrl && id < (1ull << 56);
}

void plan_mapping(const source_params& p, source_plan& plan)
{
    heap_to_stream_config& m = plan.mapping;
    m.type = item_type::parse(p.item_type);
    m.byte_order = parse_byte_order(p.byte_order, true);
    if (p.vlen < 1 || p.vlen > (1u << 24))
        throw std::invalid_argument("vlen: " + std::to_string(p.vlen) +
                                    " is out of range; use 1 (scalar items) up to 2^24");
    m.vlen = p.vlen;
    plan.item_size = m.type.size() * p.vlen;

    if (p.payload_item != 0 && !is_data_item_id(p.payload_item))
        throw std::invalid_argument(
            "payload_item: " + item_id_tag_name(p.payload_item) +
            " is a reserved or impossible item id; use 0 (every addressed item) or the "
            "id of the data item (0x07 and up, e.g. 0x1000)");
    m.payload_item = p.payload_item;
    m.len_tag_key = p.len_tag_key;

    if (p.max_heap_size < plan.item_size)
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(p.max_heap_size) +
            " bytes cannot hold one item of " + std::to_string(plan.item_size) +
            " bytes; give the largest heap you expect, in bytes (default 16 MiB)");
    plan.max_items = (p.max_heap_size + plan.item_size - 1) / plan.item_size;
    m.max_items = plan.max_items;
    if (plan.max_items > static_cast<std::size_t>(INT_MAX / 2))
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(p.max_heap_size) +
            " bytes is too large for a GNU Radio buffer of this item type (2^30 items "
            "at most); lower it or use a larger item type or vlen");

    if (p.timestamp_item != 0) {
        if (!is_data_item_id(p.timestamp_item))
            throw std::invalid_argument(
                "timestamp_item: " + item_id_tag_name(p.timestamp_item) +
                " is a reserved or impossible item id; use 0 (no rx_time) or the id of "
                "the sample counter item");
        // Continuous mode places heaps by the timestamp whatever the rate; rx_time
        // needs one (0: no rx_time tags).
        const bool rate_optional = plan.continuous && p.sample_rate == 0;
        if (!rate_optional && (!(p.sample_rate > 0) || !std::isfinite(p.sample_rate)))
            throw std::invalid_argument(
                "sample_rate: " + std::to_string(p.sample_rate) +
                " is not a rate; give the timestamp counter's samples per second (> 0) "
                "when timestamp_item is set (rx_time = timestamp / sample_rate + "
                "sync_time)");
    }
    if (!std::isfinite(p.sync_time) || p.sync_time < 0)
        throw std::invalid_argument(
            "sync_time: " + std::to_string(p.sync_time) +
            " is not a UNIX time; give the time of timestamp 0 in seconds (>= 0)");
    m.timestamp_item = p.timestamp_item;
    m.sample_rate = p.sample_rate;
    m.sync_time = p.sync_time;
}

/*! output_mode and what continuous mode adds; before plan_mapping, which it affects. */
void plan_mode(const source_params& p, source_plan& plan)
{
    if (p.output_mode != "heaps" && p.output_mode != "continuous")
        throw std::invalid_argument(
            "output_mode: '" + p.output_mode +
            "' is not a mode; use heaps (one heap after another, tagged with its "
            "length) or continuous (heaps placed by timestamp, gaps zero-filled)");
    plan.continuous = p.output_mode == "continuous";
    if (p.threads < 1 || p.threads > 64)
        throw std::invalid_argument("threads: " + std::to_string(p.threads) +
                                    " is out of range; use 1 to 64 receiver threads "
                                    "(each takes a share of the endpoints)");
    if (!plan.continuous) {
        if (p.substreams != 1)
            throw std::invalid_argument(
                "substreams: " + std::to_string(p.substreams) +
                " outputs need output_mode continuous; use 1 in heaps mode");
        if (p.first_substream != 0)
            throw std::invalid_argument(
                "first_substream: " + std::to_string(p.first_substream) +
                " needs output_mode continuous; use 0 in heaps mode");
        if (!p.substream_ids.empty())
            throw std::invalid_argument(
                "substream_ids: " + std::to_string(p.substream_ids.size()) +
                " ids need output_mode continuous; leave it empty in heaps mode");
        return;
    }
    if (p.payload_item != 0)
        throw std::invalid_argument(
            "payload_item: " + item_id_tag_name(p.payload_item) +
            " is not used in continuous mode, which outputs each data heap's whole "
            "payload; use 0");
    if (p.substreams < 1 || p.substreams > 1024)
        throw std::invalid_argument("substreams: " + std::to_string(p.substreams) +
                                    " is out of range; use 1 to 1024 outputs");
    continuous_layout layout; // what the sending side checks too
    layout.timestamp_item = p.timestamp_item;
    layout.substreams = p.substreams;
    layout.substream_item = p.substream_item;
    layout.validate_layout();
    if (p.substream_item != 0 && !is_data_item_id(p.substream_item))
        throw std::invalid_argument(
            "substream_item: " + item_id_tag_name(p.substream_item) +
            " is a reserved or impossible item id; use 0 (one substream) or the id of "
            "the immediate item naming the substream");
    plan.outputs = p.substreams;
}

void plan_stream(const source_params& p, source_plan& plan)
{
    if (p.incomplete_heaps != "drop" && p.incomplete_heaps != "deliver")
        throw std::invalid_argument("incomplete_heaps: '" + p.incomplete_heaps +
                                    "' is not a policy; use drop (count and free) or "
                                    "deliver (zero-filled, tagged heap_incomplete)");
    if (!std::isfinite(p.stats_interval) || p.stats_interval < 0)
        throw std::invalid_argument(
            "stats_interval: " + std::to_string(p.stats_interval) +
            " is not a duration; give seconds between stats messages, >= 0 (0: none)");
    plan.stream.set_full_queue_policy(
        recv::full_queue_policy_from_name(p.full_queue_policy));
    plan.stats_interval = std::chrono::duration<double>(p.stats_interval);
    const bool pcap = plan.transport.kind == transport_kind::pcap;
    plan.stream.set_max_heap_size(p.max_heap_size)
        .set_max_heaps(p.max_heaps)
        .set_incomplete_heaps(p.incomplete_heaps == "deliver"
                                  ? recv::incomplete_heaps::deliver
                                  : recv::incomplete_heaps::drop)
        .set_stop_on_stop_heap(p.stop_on_stop_heap)
        .set_queue_heaps(p.queue_heaps != 0 ? p.queue_heaps
                                            : default_queue_heaps(pcap, p.max_heap_size));
    if (!plan.continuous)
        return;
    recv::continuous_config c;
    c.timestamp_item = p.timestamp_item;
    c.timestamp_step = p.timestamp_step;
    c.item_bytes = plan.item_size;
    c.window_heaps = p.window_heaps;
    c.substreams = p.substreams;
    c.substream_item = p.substream_item;
    c.first_substream = p.first_substream;
    c.substream_ids = p.substream_ids;
    c.queue_positions = p.queue_heaps;
    // A replay runs ahead of the flowgraph, as in heaps mode.
    c.queue_bytes = pcap ? std::size_t(1) << 30 : std::size_t(256) << 20;
    plan.stream.set_continuous(c); // window_heaps' range is checked there
}


void plan_network(const source_params& p, source_plan& plan)
{
    if (p.endpoints.empty())
        throw std::invalid_argument(
            "endpoints: empty; give where to listen, e.g. :7148 (every local "
            "address), 239.1.2.3:7148 or a range 239.1.2.3+3:7148");
    as_block_parameter("max_packet_size", "max_size", [&] {
        plan.udp.set_max_size(p.max_packet_size);
        plan.ibv.set_max_size(p.max_packet_size);
    });
    // Checked whatever the transport, so a flowgraph's errors do not depend on the
    // machine it runs on.
    plan.ibv.set_max_poll(p.max_poll).set_comp_vector(plan.transport.comp_vector);
    if (plan.transport.kind == transport_kind::udp || plan.transport.automatic)
        // auto keeps the udp settings ready in case the device refuses at make().
        plan.udp.set_endpoints(p.endpoints)
            .set_interface(p.interface)
            .set_buffer_size(p.buffer_size);
    if (plan.transport.kind == transport_kind::ibverbs)
        plan.ibv.set_endpoints(p.endpoints)
            .set_interface(plan.transport.interface)
            .set_buffer_size(p.buffer_size);
    if (plan.transport.kind == transport_kind::udp || plan.transport.automatic)
        plan.udp_readers = transport::split_endpoints(plan.udp, p.threads, true);
    if (plan.transport.kind == transport_kind::ibverbs)
        plan.ibv_readers = transport::split_endpoints(plan.ibv, p.threads, false);
}

/*! tcp: one listening address; the connection limits. */
void plan_listener(const source_params& p, source_plan& plan)
{
    if (p.endpoints.empty())
        throw std::invalid_argument(
            "endpoints: empty; give the address to listen on for TCP connections, "
            "e.g. :7148 (every local address) or 10.0.0.2:7148");
    if (!p.interface.empty())
        throw std::invalid_argument(
            "interface: '" + p.interface +
            "' is not used by tcp, which listens on the address in endpoints; give "
            "that address there (e.g. 10.0.0.2:7148) and leave interface empty");
    if (p.threads != 1)
        throw std::invalid_argument(
            "threads: " + std::to_string(p.threads) +
            "; one thread serves every connection of a tcp source; use 1");
    as_block_parameter(
        "endpoints", "endpoint", [&] { plan.tcp.set_endpoint(p.endpoints); });
    plan.tcp.set_max_packet_size(p.max_packet_size);
    if (p.buffer_size != 0) // 0: the reader's default, as for udp
        plan.tcp.set_buffer_size(p.buffer_size);
    plan.tcp.set_max_connections(p.max_connections);
    plan.tcp.set_allowed_peers(p.allowed_peers);
    plan.tcp.set_keep_listening(p.keep_listening);
}

/*! rdma: one listening verbs:// URI; the connection limits and the two paths
 * (GR_SPEAD_RDMA_* override them). max_packet_size left at its default (9200, for
 * datagrams) becomes the rdma default, 1 MiB + 4 KiB: RC needs no MTU-sized packets. */
void plan_rdma_listener(const source_params& p, source_plan& plan)
{
    if (p.threads != 1)
        throw std::invalid_argument(
            "threads: " + std::to_string(p.threads) +
            "; one thread serves every connection of an rdma source; use 1");
    as_block_parameter(
        "endpoints", "endpoint", [&] { plan.rdma.set_endpoint(p.endpoints); });
    if (!p.interface.empty())
        plan.rdma.set_interface(p.interface);
    if (p.max_packet_size != source_params().max_packet_size)
        plan.rdma.set_max_packet_size(p.max_packet_size);
    plan.rdma.set_max_connections(p.max_connections);
    plan.rdma.set_allowed_peers(p.allowed_peers);
    plan.rdma.set_keep_listening(p.keep_listening);
    plan.rdma.set_rdma_connections(p.rdma_connections);
    plan.rdma.set_rdma_depth(p.rdma_depth);
    recv::validate(recv::with_environment(plan.rdma));
}

void plan_capture(const source_params& p, source_plan& plan)
{
    if (p.capture_file.empty())
        throw std::invalid_argument(
            "capture_file: empty; the pcap transport replays a capture file (pcap "
            "or pcapng), give its path");
    try {
        // Opening reads the file header: a file that is not a capture, or of a link
        // type that cannot be replayed, is refused now rather than when it starts.
        pcap_file_reader probe(p.capture_file);
    } catch (const std::runtime_error& e) {
        throw std::invalid_argument("capture_file: " + std::string(e.what()) +
                                    "; give the path of a pcap or pcapng file");
    }
    if (p.threads != 1)
        throw std::invalid_argument(
            "threads: " + std::to_string(p.threads) +
            "; a capture is replayed by one thread (it is read in order); use 1");
    plan.capture_file = p.capture_file;
    if (p.endpoints.empty())
        return;
    recv::udp_config ports;
    ports.set_endpoints(p.endpoints);
    plan.capture_port = ports.get_endpoints().front().port();
    for (const auto& ep : ports.get_endpoints())
        if (ep.port() != plan.capture_port)
            throw std::invalid_argument(
                "endpoints: a capture is replayed for one UDP port at most; give :PORT, "
                "or nothing to replay every datagram");
}

} // namespace

source_plan plan_source(const source_params& p, const gr::logger_ptr& logger)
{
    source_plan plan;
    plan_mode(p, plan);
    plan_mapping(p, plan);
    plan.transport = choose_transport(p.transport,
                                      p.interface,
                                      p.buffer_size,
                                      p.comp_vector,
                                      transport_direction::receive,
                                      logger);
    plan_stream(p, plan);
    if (plan.transport.kind == transport_kind::pcap)
        plan_capture(p, plan);
    else if (plan.transport.kind == transport_kind::tcp)
        plan_listener(p, plan);
    else if (plan.transport.kind == transport_kind::rdma)
        plan_rdma_listener(p, plan);
    else
        plan_network(p, plan);
    return plan;
}

std::unique_ptr<source_mapping> make_source_mapping(const source_plan& plan,
                                                    const gr::logger_ptr& logger)
{
    auto heaps = std::make_unique<heap_to_stream>(plan.mapping, logger);
    if (!plan.continuous)
        return heaps;
    chunk_to_stream_config c;
    c.item_size = plan.item_size;
    c.outputs = plan.outputs;
    // Continuous mode has no payload descriptor to read the order from: auto keeps
    // the bytes as received (docs/continuous.md).
    if (plan.mapping.byte_order == byte_order_mode::swap)
        c.swap_unit = plan.mapping.type.component_size();
    const double rate = plan.mapping.sample_rate, sync = plan.mapping.sync_time;
    if (rate > 0)
        c.rx_time = [rate, sync](std::uint64_t t) { return rx_time_of(t, rate, sync); };
    return std::make_unique<chunk_to_stream>(c, std::move(heaps));
}

} // namespace spead
} // namespace gr
