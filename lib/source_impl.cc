/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/shown_stats.h"
#include "source_impl.h"
#include "transport/endpoint.h"
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

source::sptr source::make(const source_config& config)
{
    return gnuradio::make_block_sptr<source_impl>(config);
}

namespace {
/*! Outputs the block is made with: a bad value still makes a signature (of one
 * output); plan_source then refuses it naming the option. */
int output_count(const source_config& c)
{
    const std::size_t n = c.continuous.substreams;
    return c.is_continuous() && n >= 1 && n <= 1024 ? static_cast<int>(n) : 1;
}
} // namespace

source_impl::source_impl(const source_config& config)
    : gr::sync_block(
          "spead_source",
          gr::io_signature::make(0, 0, 0),
          gr::io_signature::make(output_count(config),
                                 output_count(config),
                                 static_cast<int>(config.items.get_item_size()))),
      d_plan(plan_source(config, d_logger)), // a bad option: the exception says it
      d_mapping(make_source_mapping(d_plan, d_logger)),
      d_stats_timer(d_plan.stats_interval),
      d_descriptors_port(pmt::mp("descriptors")),
      d_heaps_port(pmt::mp("heaps")),
      d_stats_port(pmt::mp("stats"))
{
    message_port_register_out(d_descriptors_port);
    message_port_register_out(d_heaps_port);
    message_port_register_out(d_stats_port);
    // The scheduler calls work() with at most half the output buffer, and only when
    // at least min_noutput_items fit: heaps mode then never has to return
    // empty-handed for lack of space (see the mappings).
    set_min_output_buffer(static_cast<long>(d_mapping->min_output_items()));
    if (d_mapping->min_noutput_items() > 0)
        set_min_noutput_items(static_cast<int>(d_mapping->min_noutput_items()));

    // Bind now: errors show when the block is made, and nothing sent after make() is
    // missed (a flowgraph's sink may start sending before this block starts). A capture
    // is replayed from its start at each start().
    try {
        if (d_plan.transport.kind != transport_kind::pcap)
            open_stream();
    } catch (const std::exception& e) {
        d_logger->error("cannot {} on {}: {}",
                        d_plan.transport.kind == transport_kind::ibverbs
                            ? "receive over ibverbs"
                            : "listen",
                        d_plan.where,
                        e.what());
        throw;
    }
    // Served once the transport is settled (auto's fallback changes the plan).
    d_watch.expose(d_plan.metrics, [this] {
        std::optional<std::size_t> queued;
        {
            std::lock_guard<std::mutex> lock(d_stream_mutex);
            if (d_stream)
                queued = d_stream->get_queued_heaps();
        }
        return std::vector<metrics::stream_sample>{ source_sample(
            alias(), d_plan, stats(), queued) };
    });
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
                const std::string groups = transport::joined_groups_text(
                    share.get_endpoints(), share.get_interface());
                d_logger->info("listening on {}{} (socket buffer {} bytes)",
                               joined(mine),
                               groups.empty() ? groups : ", " + groups,
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
        } else if (kind == transport_kind::tcp) {
            auto& reader = stream->emplace_reader<recv::tcp_reader>(d_plan.tcp);
            std::ostringstream text;
            text << reader.get_bound_endpoint();
            bound.push_back(text.str());
            d_logger->info("listening for TCP connections on {} (at most {} at once{})",
                           bound.back(),
                           d_plan.tcp.get_max_connections(),
                           d_plan.tcp.get_allowed_peers().empty()
                               ? std::string()
                               : ", from " + d_plan.tcp.get_allowed_peers());
        } else if (kind == transport_kind::rdma) {
            stream->emplace_reader<recv::rdma_reader>(d_plan.rdma);
            bound.push_back("verbs://" + d_plan.rdma.get_host() + ":" +
                            std::to_string(d_plan.rdma.get_port()));
            d_logger->info("listening for RDMA connections on {} (at most {} at once)",
                           bound.back(),
                           d_plan.rdma.get_max_connections());
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
    d_mapping->reset();
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
    d_mapping->release();
    stream.reset(); // closes the sockets
}

bool source_impl::start()
{
    d_mapping->release();
    d_output.want_heaps = !pmt::is_null(message_subscribers(d_heaps_port));
    d_stats_timer.reset();
    d_watch.start(); // its alias is settled: scrapes may read it
    bool have_stream;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        have_stream = bool(d_stream);
    }
    if (!have_stream)
        open_at_start(d_logger, [this] { open_stream(); }); // work() then ends
    return true;
}

bool source_impl::stop()
{
    // GNU Radio 3.10 records the allocated size as this block's max output buffer,
    // which on the next start() would override (and undo) our min output buffer.
    if (max_output_buffer(0) >= static_cast<long>(d_mapping->min_output_items()))
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
    d_mapping->add_counters(out);
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

void source_impl::setup_rpc()
{
    d_watch.register_knobs(alias(), metrics::direction::receive, [this] {
        return countable_stats(stats(), d_plan.transport.kind, d_plan.continuous);
    });
}

void source_impl::publish_stats_if_due(bool force)
{
    if (d_stats_timer.due(force))
        message_port_pub(
            d_stats_port,
            stats_to_pmt(shown_stats(stats(), d_plan.transport.kind, d_plan.continuous)));
}

void source_impl::publish(const source_output& out)
{
    for (const auto& d : out.descriptors)
        message_port_pub(d_descriptors_port, d);
    for (const auto& pdu : out.heaps)
        message_port_pub(d_heaps_port, pdu);
    for (const auto& t : out.tags)
        add_item_tag(t.port, t.tag);
}

int source_impl::work(int noutput_items,
                      gr_vector_const_void_star& /*input_items*/,
                      gr_vector_void_star& output_items)
{
    if (!d_stream)
        return WORK_DONE; // start() could not open the stream (logged)
    const output_room room{ &output_items,
                            static_cast<std::size_t>(noutput_items),
                            nitems_written(0),
                            heap_wait };
    for (;;) {
        d_output.clear();
        const auto filled = d_mapping->fill(*d_stream, room, d_output);
        publish(d_output);
        if (filled.what == source_mapping::status::stopped) {
            publish_stats_if_due(true);
            return WORK_DONE;
        }
        publish_stats_if_due(false);
        if (filled.what == source_mapping::status::filled)
            return static_cast<int>(filled.items);
        // Nothing yet: wait again (returning 0 would park the block for 250 ms).
        boost::this_thread::interruption_point(); // tb.stop()
    }
}

} // namespace spead
} // namespace gr
