/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/chunk_to_stream.h"
#include "mapping/source_plan.h"
#include "transport/pcap/pcap_file.h"
#include "transport/split_endpoints.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <sstream>
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

/*! output_mode and what continuous mode adds; before plan_mapping, which it affects. */
void plan_mode(const source_config& c, source_plan& plan)
{
    plan.continuous = c.is_continuous();
    const recv::continuous_config& layout = c.continuous;
    if (!plan.continuous) {
        if (layout.substreams != 1)
            throw std::invalid_argument(
                "substreams: " + std::to_string(layout.substreams) +
                " outputs need output_mode continuous; use 1 in heaps mode");
        if (layout.first_substream != 0)
            throw std::invalid_argument(
                "first_substream: " + std::to_string(layout.first_substream) +
                " needs output_mode continuous; use 0 in heaps mode");
        if (!layout.substream_ids.empty())
            throw std::invalid_argument(
                "substream_ids: " + std::to_string(layout.substream_ids.size()) +
                " ids need output_mode continuous; leave it empty in heaps mode");
        return;
    }
    if (c.items.get_payload_item() != 0)
        throw std::invalid_argument(
            "payload_item: " + item_id_tag_name(c.items.get_payload_item()) +
            " is not used in continuous mode, which outputs each data heap's whole "
            "payload; use 0");
    if (layout.substreams < 1 || layout.substreams > 1024)
        throw std::invalid_argument("substreams: " + std::to_string(layout.substreams) +
                                    " is out of range; use 1 to 1024 outputs");
    layout.validate_layout(); // what the sending side checks too
    plan.outputs = layout.substreams;
}

void plan_mapping(const source_config& c, source_plan& plan)
{
    const source_items& items = c.items;
    heap_to_stream_config& m = plan.mapping;
    map_items(items, m);
    plan.item_size = items.get_item_size();

    const std::size_t max_heap_size = c.stream.get_max_heap_size();
    if (max_heap_size < plan.item_size)
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(max_heap_size) +
            " bytes cannot hold one item of " + std::to_string(plan.item_size) +
            " bytes; give the largest heap you expect, in bytes (default 16 MiB)");
    plan.max_items = (max_heap_size + plan.item_size - 1) / plan.item_size;
    m.max_items = plan.max_items;
    if (plan.max_items > static_cast<std::size_t>(INT_MAX / 2))
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(max_heap_size) +
            " bytes is too large for a GNU Radio buffer of this item type (2^30 items "
            "at most); lower it or use a larger item type or vlen");

    // Continuous mode places heaps by the timestamp whatever the rate; rx_time needs
    // one (0: no rx_time tags).
    const double rate = items.get_sample_rate();
    if (items.get_timestamp_item() != 0 && !(plan.continuous && rate == 0) && !(rate > 0))
        throw std::invalid_argument(
            "sample_rate: " + std::to_string(rate) +
            " is not a rate; give the timestamp counter's samples per second (> 0) "
            "when timestamp_item is set (rx_time = timestamp / sample_rate + "
            "sync_time)");
    m.timestamp_item = items.get_timestamp_item();
    m.sample_rate = rate;
    m.sync_time = items.get_sync_time();
}

void plan_stream(const source_config& c, source_plan& plan)
{
    plan.stats_interval = std::chrono::duration<double>(c.get_stats_interval());
    plan.metrics = c.get_metrics();
    const bool pcap = plan.transport.kind == transport_kind::pcap;
    const std::size_t max_heap_size = c.stream.get_max_heap_size();
    plan.stream = c.stream;
    plan.stream.set_queue_heaps(c.get_queue_heaps() != 0
                                    ? c.get_queue_heaps()
                                    : default_queue_heaps(pcap, max_heap_size));
    if (!plan.continuous)
        return;
    recv::continuous_config layout = c.continuous;
    layout.item_bytes = plan.item_size;
    layout.queue_positions = c.get_queue_heaps();
    // A replay runs ahead of the flowgraph, as in heaps mode.
    layout.queue_bytes = pcap ? std::size_t(1) << 30 : std::size_t(256) << 20;
    plan.stream.set_continuous(layout); // window_heaps' range is checked there
}

/*! One thread serves every connection of a link, and replays a capture in order. */
void check_one_thread(const source_config& c, const char* why)
{
    if (c.get_threads() != 1)
        throw std::invalid_argument("threads: " + std::to_string(c.get_threads()) + "; " +
                                    why + "; use 1");
}

void plan_capture(const source_config& c, source_plan& plan)
{
    if (c.get_capture_file().empty())
        throw std::invalid_argument(
            "capture_file: empty; the pcap transport replays a capture file (pcap "
            "or pcapng), give its path");
    try {
        // Opening reads the file header: a file that is not a capture, or of a link
        // type that cannot be replayed, is refused now rather than when it starts.
        pcap_file_reader probe(c.get_capture_file());
    } catch (const std::runtime_error& e) {
        throw std::invalid_argument("capture_file: " + std::string(e.what()) +
                                    "; give the path of a pcap or pcapng file");
    }
    check_one_thread(c, "a capture is replayed by one thread (it is read in order)");
    plan.capture_file = c.get_capture_file();
    plan.capture_port = c.get_capture_port();
}

/*! Each endpoint as text, joined by commas. */
template <typename Endpoints>
std::string joined(const Endpoints& endpoints)
{
    std::ostringstream text;
    for (const auto& ep : endpoints)
        text << (text.tellp() > 0 ? "," : "") << ep;
    return text.str();
}

void plan_transport(const source_config& c, source_plan& plan)
{
    const transport_kind kind = plan.transport.kind;
    // What the transport's config refused of the options given by name.
    c.check_refusal(transport_name(kind));
    if (kind == transport_kind::tcp) {
        check_one_thread(c, "one thread serves every connection of a tcp source");
        plan.tcp = c.tcp;
        plan.where = joined(std::vector{ c.tcp.get_endpoint() });
    } else if (kind == transport_kind::rdma) {
        check_one_thread(c, "one thread serves every connection of an rdma source");
        plan.rdma = c.rdma;
        recv::validate(recv::with_environment(plan.rdma)); // GR_SPEAD_RDMA_*
        plan.where = "verbs://" + plan.rdma.get_host() + ":" +
                     std::to_string(plan.rdma.get_port());
    } else if (kind == transport_kind::pcap) {
        plan_capture(c, plan);
        plan.where = plan.capture_file;
    } else {
        // auto keeps the udp settings ready in case the device refuses at make().
        if (kind == transport_kind::udp || plan.transport.automatic) {
            plan.udp = c.udp;
            plan.udp_readers =
                transport::split_endpoints(plan.udp, c.get_threads(), true);
            plan.where = joined(plan.udp.get_endpoints());
        }
        if (kind == transport_kind::ibverbs) {
            plan.ibv = c.ibverbs;
            if (c.get_transport() == "udp") // GR_SPEAD_IBV_INTERFACE: udp's settings
                plan.ibv.set_endpoints(c.udp.get_endpoints())
                    .set_max_size(c.udp.get_max_size());
            plan.ibv.set_interface(plan.transport.interface)
                .set_comp_vector(plan.transport.comp_vector);
            plan.ibv_readers =
                transport::split_endpoints(plan.ibv, c.get_threads(), false);
            plan.where = joined(plan.ibv.get_endpoints());
        }
    }
}

} // namespace

source_plan plan_source(const source_config& c, const gr::logger_ptr& logger)
{
    source_plan plan;
    plan_mode(c, plan);
    plan_mapping(c, plan);
    plan.transport = choose_transport_of(c, logger);
    plan_stream(c, plan);
    plan_transport(c, plan);
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
