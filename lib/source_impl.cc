/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/shown_stats.h"
#include "source_impl.h"
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/recv_pcap.h>
#include <boost/thread/thread.hpp>
#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! How long work() waits for a heap before checking for a stop request. */
constexpr std::chrono::milliseconds heap_wait(100);

/*! Each endpoint as text. */
template <typename Endpoints>
std::vector<std::string> endpoint_strings(const Endpoints& endpoints)
{
    std::vector<std::string> out;
    for (const auto& ep : endpoints) {
        std::ostringstream text;
        text << ep;
        out.push_back(text.str());
    }
    return out;
}

std::string joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const auto& part : parts)
        out += (out.empty() ? "" : ", ") + part;
    return out;
}

} // namespace

source::sptr source::make(const std::string& transport,
                          const std::string& endpoints,
                          const std::string& interface,
                          std::size_t buffer_size,
                          std::size_t max_packet_size,
                          const std::string& item_type,
                          std::size_t vlen,
                          std::uint64_t payload_item,
                          const std::string& len_tag_key,
                          std::size_t max_heap_size,
                          std::size_t max_heaps,
                          const std::string& incomplete_heaps,
                          std::uint64_t timestamp_item,
                          double sample_rate,
                          double sync_time,
                          const std::string& byte_order,
                          bool stop_on_stop_heap,
                          const std::string& capture_file,
                          std::size_t queue_heaps,
                          double stats_interval,
                          int comp_vector,
                          int max_poll,
                          const std::string& output_mode,
                          std::uint64_t timestamp_step,
                          std::size_t window_heaps,
                          std::size_t substreams,
                          std::uint64_t substream_item,
                          std::size_t threads)
{
    return gnuradio::make_block_sptr<source_impl>(
        source_params{ transport,         endpoints,     interface,      buffer_size,
                       max_packet_size,   item_type,     vlen,           payload_item,
                       len_tag_key,       max_heap_size, max_heaps,      incomplete_heaps,
                       timestamp_item,    sample_rate,   sync_time,      byte_order,
                       stop_on_stop_heap, capture_file,  queue_heaps,    stats_interval,
                       comp_vector,       max_poll,      output_mode,    timestamp_step,
                       window_heaps,      substreams,    substream_item, threads });
}

namespace {
/*! Outputs the block is made with: a bad value still makes a signature (of one
 * output); plan_source then refuses it naming the parameter. */
chunk_to_stream_config series_config(const source_plan& plan,
                                     const heap_to_stream& mapping)
{
    chunk_to_stream_config c;
    c.item_size = plan.item_size;
    c.outputs = plan.outputs;
    // Continuous mode has no payload descriptor to read the order from: auto keeps
    // the bytes as received (docs/continuous.md).
    if (plan.mapping.byte_order == byte_order_mode::swap)
        c.swap_unit = plan.mapping.type.component_size();
    if (plan.mapping.sample_rate > 0)
        c.rx_time = [&mapping](std::uint64_t t) { return mapping.rx_time(t); };
    return c;
}

int output_count(const source_params& p)
{
    if (p.output_mode != "continuous" || p.substreams < 1 || p.substreams > 1024)
        return 1;
    return static_cast<int>(p.substreams);
}
} // namespace

source_impl::source_impl(const source_params& params)
    : gr::sync_block(
          "spead_source",
          gr::io_signature::make(0, 0, 0),
          gr::io_signature::make(output_count(params),
                                 output_count(params),
                                 io_signature_size(params.item_type, params.vlen))),
      d_plan(logged_on_error(d_logger, [&] { return plan_source(params, d_logger); })),
      d_mapping(d_plan.mapping, d_logger),
      d_series(series_config(d_plan, d_mapping)),
      d_stats_timer(d_plan.stats_interval),
      d_descriptors_port(pmt::mp("descriptors")),
      d_heaps_port(pmt::mp("heaps")),
      d_stats_port(pmt::mp("stats"))
{
    message_port_register_out(d_descriptors_port);
    message_port_register_out(d_heaps_port);
    message_port_register_out(d_stats_port);

    // The scheduler calls work() with at most half the output buffer, and only when at
    // least min_noutput_items fit: so any heap up to max_heap_size always fits, and
    // work() never has to return empty-handed for lack of space.
    // Continuous mode copies any number of items (a heap may be split), so it needs
    // neither for correctness; but with GNU Radio's default 32 KiB buffers every
    // work() (and the downstream block's) moves a few KiB, and the scheduler's
    // hand-offs cost more CPU than the data. 2 MiB per output (a chunk or two), less
    // with many outputs, at least 256 KiB.
    if (!d_plan.continuous) {
        set_min_output_buffer(static_cast<long>(2 * d_plan.max_items));
        set_min_noutput_items(static_cast<int>(d_plan.max_items));
    } else {
        constexpr std::size_t per_output = std::size_t(2) << 20;
        constexpr std::size_t all_outputs = std::size_t(32) << 20;
        constexpr std::size_t least = std::size_t(256) << 10;
        const std::size_t bytes = std::max(
            least,
            std::min(per_output, all_outputs / std::max<std::size_t>(1, d_plan.outputs)));
        set_min_output_buffer(
            static_cast<long>(std::max<std::size_t>(1, bytes / d_mapping.item_size())));
    }

    // Bind now: errors show when the block is made, and nothing sent after make() is
    // missed (a flowgraph's sink may start sending before this block starts). A capture
    // is replayed from its start at each start().
    if (d_plan.transport.kind == transport_kind::pcap)
        return;
    try {
        open_stream();
    } catch (const std::exception& e) {
        d_logger->error("cannot {} on {}: {}",
                        d_plan.transport.kind == transport_kind::ibverbs
                            ? "receive over ibverbs"
                            : "listen",
                        params.endpoints,
                        e.what());
        throw;
    }
}

source_impl::~source_impl() { close_stream(); }

void source_impl::open_stream()
{
    std::unique_ptr<recv::stream> stream;
    std::vector<std::string> bound;
    open_with_fallback(d_plan.transport, d_logger, [&](transport_kind kind) {
        stream = std::make_unique<recv::stream>(d_plan.stream);
        bound.clear();
        if (kind == transport_kind::udp) {
            // One reader, and thread, per share of the endpoints (threads).
            for (const auto& share : d_plan.udp_readers) {
                auto& reader = stream->emplace_reader<recv::udp_reader>(share);
                const auto mine = endpoint_strings(reader.get_bound_endpoints());
                bound.insert(bound.end(), mine.begin(), mine.end());
                d_logger->info("listening on {} (socket buffer {} bytes)",
                               joined(mine),
                               reader.get_granted_buffer_size());
            }
        } else if (kind == transport_kind::ibverbs) {
            for (const auto& share : d_plan.ibv_readers) {
                auto& reader = stream->emplace_reader<recv::udp_ibv_reader>(share);
                const auto mine = endpoint_strings(share.get_endpoints());
                bound.insert(bound.end(), mine.begin(), mine.end());
                const int vector = reader.get_comp_vector();
                d_logger->info("receiving {} over ibverbs on {} (ring {} bytes, {})",
                               joined(mine),
                               d_plan.transport.interface,
                               reader.get_buffer_size(),
                               vector < 0 ? std::string("busy polling")
                                          : "comp_vector " + std::to_string(vector));
            }
        } else {
            stream->emplace_reader<recv::pcap_reader>(d_plan.capture_file,
                                                      d_plan.capture_port);
            d_logger->info("replaying {}{}",
                           d_plan.capture_file,
                           d_plan.capture_port == 0
                               ? std::string()
                               : " (datagrams to port " +
                                     std::to_string(d_plan.capture_port) + " only)");
        }
    });
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_stream = std::move(stream);
    d_bound = std::move(bound);
    d_heaps_output = 0;
    d_bytes_output = 0;
    d_heaps_dropped_too_large_for_output = 0;
    d_mapping.reset_counters();
    d_series.reset();
}

void source_impl::close_stream()
{
    std::unique_ptr<recv::stream> stream;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        if (!d_stream)
            return;
        d_stream->stop(); // joins the reader threads
        d_last_stats = d_stream->get_stats();
        stream = std::move(d_stream);
        d_bound.clear();
    }
    d_pending = recv::heap();
    d_series.reset();
    stream.reset(); // closes the sockets
}

bool source_impl::start()
{
    d_pending = recv::heap();
    d_heaps_port_connected = !pmt::is_null(message_subscribers(d_heaps_port));
    d_stats_timer.reset();
    bool have_stream;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        have_stream = bool(d_stream);
    }
    if (!have_stream) {
        try {
            open_stream();
        } catch (const std::exception& e) {
            // start() runs in the block's thread: an exception would only be logged
            // there and leave the flowgraph waiting. work() ends it instead.
            d_logger->error("cannot start: {}", e.what());
        }
    }
    return true;
}

bool source_impl::stop()
{
    // GNU Radio 3.10 records the allocated size as this block's max output buffer,
    // which on the next start() would override (and undo) our min output buffer.
    if (max_output_buffer(0) >= static_cast<long>(2 * d_plan.max_items))
        set_max_output_buffer(-1);
    publish_stats_if_due(true);
    close_stream();
    // What the run did, as the stats message shows it: every flowgraph ends saying so.
    d_logger->info(
        "stopped: {}",
        stats_line(shown_stats(stats(), d_plan.transport.kind, d_plan.continuous)));
    std::uint64_t filtered = 0, heaps_seen = 0;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        filtered = d_last_stats[recv_stat::frames_filtered];
        heaps_seen = d_last_stats[recv_stat::heaps] + d_last_stats[recv_stat::stop_heaps];
    }
    if (d_plan.transport.kind == transport_kind::pcap && filtered > 0 && heaps_seen == 0)
        d_logger->warn("every datagram in {} was for another port than {}; set "
                       "endpoints empty to replay them all",
                       d_plan.capture_file,
                       d_plan.capture_port);
    return true;
}

bool source_impl::take_heap()
{
    d_new_descriptors.clear();
    const auto verdict = d_mapping.take(d_pending, d_new_descriptors);
    for (const auto& d : d_new_descriptors)
        message_port_pub(d_descriptors_port, d);
    if (d_heaps_port_connected)
        message_port_pub(d_heaps_port, d_mapping.pdu(d_pending));
    return verdict == heap_to_stream::verdict::output;
}

std::map<std::string, std::uint64_t> source_impl::stats() const
{
    std::map<std::string, std::uint64_t> out;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        const recv_stats s = d_stream ? d_stream->get_stats() : d_last_stats;
        for (const auto& kv : s.items())
            out[kv.first] = kv.second;
    }
    // The block's own counters (the stream's list names them too, at zero).
    out["heaps_without_payload"] = d_mapping.heaps_without_payload();
    out["heaps_dropped_partial_item"] = d_mapping.heaps_dropped_partial_item();
    out["heaps_dropped_too_large_for_output"] =
        d_heaps_dropped_too_large_for_output.load();
    out["heaps_output"] = d_heaps_output.load();
    out["bytes_output"] = d_bytes_output.load();
    if (d_plan.continuous)
        out["items_zero_filled"] = out["bytes_zero_filled"] / d_mapping.item_size();
    return out;
}

std::vector<std::string> source_impl::bound_endpoints() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_bound;
}

std::string source_impl::active_transport() const
{
    return transport_name(d_plan.transport.kind);
}

void source_impl::publish_stats_if_due(bool force)
{
    if (d_stats_timer.due(force))
        message_port_pub(
            d_stats_port,
            stats_to_pmt(shown_stats(stats(), d_plan.transport.kind, d_plan.continuous)));
}

void source_impl::take_control_heaps()
{
    // Descriptors and stream control: their messages go out, they give no items.
    while (d_stream->try_pop(d_pending)) {
        take_heap();
        d_pending = recv::heap();
    }
}

int source_impl::work_continuous(int noutput_items, gr_vector_void_star& output_items)
{
    int produced = 0;
    for (;;) {
        if (!d_series.has_chunk()) {
            take_control_heaps();
            recv::chunk_entry entry;
            if (produced > 0) {
                if (!d_stream->try_pop_chunk(entry))
                    break;
            } else {
                const auto result = d_stream->pop_chunk(entry, heap_wait);
                if (result == recv::stream::pop_result::timeout) {
                    publish_stats_if_due(false);
                    boost::this_thread::interruption_point(); // tb.stop()
                    continue;
                }
                if (result == recv::stream::pop_result::stopped) {
                    take_control_heaps();
                    publish_stats_if_due(true);
                    return WORK_DONE;
                }
            }
            d_series.take(std::move(entry), d_stream->get_heap_bytes());
        }
        d_series_tags.clear();
        const std::size_t n = d_series.write(output_items,
                                             std::size_t(produced),
                                             std::size_t(noutput_items - produced),
                                             nitems_written(0) + std::uint64_t(produced),
                                             d_series_tags);
        for (const auto& t : d_series_tags)
            add_item_tag(t.port, t.tag);
        produced += static_cast<int>(n);
        d_bytes_output += n * d_mapping.item_size() * d_plan.outputs;
        if (d_series.chunk_done())
            d_stream->return_chunk(d_series.give_back());
        if (produced == noutput_items)
            break;
    }
    publish_stats_if_due(false);
    return produced;
}

int source_impl::work(int noutput_items,
                      gr_vector_const_void_star& /*input_items*/,
                      gr_vector_void_star& output_items)
{
    if (!d_stream)
        return WORK_DONE; // start() could not open the stream (logged)
    if (d_plan.continuous)
        return work_continuous(noutput_items, output_items);
    auto* out = static_cast<std::uint8_t*>(output_items[0]);
    const std::size_t item_size = d_mapping.item_size();
    int produced = 0;
    for (;;) {
        if (!d_pending) {
            if (produced > 0) {
                // Fill the rest of this call with what is already there, no waiting.
                if (!d_stream->try_pop(d_pending))
                    break;
            } else {
                // Wait for a heap: returning 0 would park the block for 250 ms.
                const auto result = d_stream->pop(d_pending, heap_wait);
                if (result == recv::stream::pop_result::timeout) {
                    publish_stats_if_due(false);
                    boost::this_thread::interruption_point(); // tb.stop()
                    continue;
                }
                if (result == recv::stream::pop_result::stopped) {
                    // A stop heap, the end of a capture or a reader failure (logged
                    // and counted by the stream), with every queued heap output.
                    publish_stats_if_due(true);
                    return WORK_DONE;
                }
            }
            if (!take_heap()) {
                d_pending = recv::heap();
                continue;
            }
        }
        const auto items = static_cast<int>(d_mapping.items());
        if (items > noutput_items - produced) {
            if (produced == 0) {
                // Only when the scheduler caps noutput_items (max_noutput_items):
                // min_noutput_items otherwise guarantees room for the largest heap.
                d_heaps_dropped_too_large_for_output++;
                d_logger->warn("heap {}: {} items do not fit the {} the scheduler "
                               "offers; dropped (do not cap max_noutput_items below {})",
                               d_pending.cnt(),
                               items,
                               noutput_items,
                               d_plan.max_items);
                d_pending = recv::heap();
                continue;
            }
            break; // next call: a heap is never split
        }
        const std::uint64_t first =
            nitems_written(0) + static_cast<std::uint64_t>(produced);
        d_tags.clear();
        d_mapping.write(d_pending,
                        out + static_cast<std::size_t>(produced) * item_size,
                        first,
                        d_tags);
        for (const auto& tag : d_tags)
            add_item_tag(0, tag);
        produced += items;
        d_heaps_output++;
        d_bytes_output += static_cast<std::uint64_t>(items) * item_size;
        d_pending = recv::heap();
    }
    publish_stats_if_due(false);
    return produced;
}

} // namespace spead
} // namespace gr
