/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/shown_stats.h"
#include "sink_impl.h"
#include "transport/endpoint.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/send_pcap.h>
#include <boost/thread/thread.hpp>
#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {

namespace {

/*! The block's inputs: one per substream (plan_sink rejects a bad count later). */
int input_count(const sink_config& c)
{
    return static_cast<int>(
        std::clamp<std::size_t>(c.continuous.substreams, 1, sink_max_substreams));
}

/*! HOST:PORT of a tcp endpoint ([ADDRESS]:PORT for IPv6). */
std::string endpoint_text(const boost::asio::ip::tcp::endpoint& ep)
{
    std::ostringstream text;
    text << ep;
    return text.str();
}

} // namespace

sink::sptr sink::make(const sink_config& config)
{
    return gnuradio::make_block_sptr<sink_impl>(config);
}

sink_impl::sink_impl(const sink_config& config)
    : gr::block("spead_sink",
                gr::io_signature::make(input_count(config),
                                       input_count(config),
                                       static_cast<int>(config.items.get_item_size())),
                gr::io_signature::make(0, 0, 0)),
      d_plan(plan_sink(config, d_logger)), // a bad option: the exception says it
      d_mapping(make_sink_mapping(d_plan, d_logger)),
      d_stats_timer(d_plan.stats_interval),
      d_slots(sink_send_slots, d_logger),
      d_descriptors_port(pmt::mp("descriptors")),
      d_stats_port(pmt::mp("stats"))
{
    d_slots.set_on_wait([this] {
        publish_stats_if_due(false);
        boost::this_thread::interruption_point(); // tb.stop()
    });
    d_input.tags = [this](std::size_t input,
                          std::uint64_t from,
                          std::uint64_t to,
                          const pmt::pmt_t& key,
                          std::vector<gr::tag_t>& tags) {
        if (pmt::is_null(key))
            get_tags_in_range(tags, input, from, to);
        else
            get_tags_in_range(tags, input, from, to, key);
    };
    d_input.read_descriptors = [this] { drain_descriptor_messages(); };

    // Opened now so that a bad destination or an MTU too small for max_packet_size is
    // reported when the block is made. A tcp sink connects at start() instead: its
    // receiver (another flowgraph, maybe this one) need not listen yet, and a refusal
    // then ends the flowgraph with the cause.
    try {
        if (d_plan.transport.kind != transport_kind::tcp &&
            d_plan.transport.kind != transport_kind::rdma)
            open_stream();
    } catch (const std::invalid_argument&) {
        throw; // a bad option: the exception says it, once
    } catch (const std::exception& e) {
        d_logger->error("cannot send to {}: {}",
                        transport::to_string(d_plan.udp.get_endpoints()),
                        e.what());
        throw;
    }

    message_port_register_in(d_descriptors_port);
    message_port_register_out(d_stats_port);
    d_watch.expose(d_plan.metrics, [this] {
        return sink_samples(alias(), d_plan, d_slots, d_mapping->counters());
    });

    if (d_mapping->fixed_heap_items() > 0)
        // The scheduler then calls us with whole heaps and sizes the upstream buffer
        // for two of them.
        set_output_multiple(static_cast<int>(d_mapping->fixed_heap_items()));
}

sink_impl::~sink_impl()
{
    d_mapping->reset(); // a new run to the mapping: never a stop heap from a destructor
    close_stream();
}

void sink_impl::open_stream()
{
    std::unique_ptr<send::stream> stream;
    std::vector<std::unique_ptr<send::stream>> links; // tcp: one per substream
    boost::asio::io_context& io = d_slots.io();
    open_with_fallback(d_plan.transport, d_logger, [&](transport_kind kind) {
        if (kind == transport_kind::udp) {
            stream = std::make_unique<send::udp_stream>(io, d_plan.stream, d_plan.udp);
        } else if (kind == transport_kind::tcp || kind == transport_kind::rdma) {
            links = open_links();
        } else if (kind == transport_kind::ibverbs) {
            stream =
                std::make_unique<send::udp_ibv_stream>(io, d_plan.stream, d_plan.ibv);
            d_logger->info("sending to {} over ibverbs on {}",
                           transport::to_string(d_plan.ibv.get_endpoints()),
                           d_plan.transport.interface);
        } else {
            try {
                stream = std::make_unique<send::pcap_stream>(
                    io, d_plan.stream, d_plan.capture_file, d_plan.udp.get_endpoints());
            } catch (const std::invalid_argument&) {
                throw;
            } catch (const std::runtime_error& e) {
                throw std::invalid_argument(std::string("capture_file: ") + e.what() +
                                            "; give a path in a writable directory");
            }
        }
    });
    d_mapping->reset();
    if (links.empty())
        d_slots.open(std::move(stream));
    else
        d_slots.open(std::move(links)); // one connection per substream
}

void sink_impl::close_stream()
{
    if (!d_slots.is_open())
        return;
    // A link that is down (lost, or still connecting with reconnect) would hold the
    // stop heap and the flush until it is up again: close without them instead.
    const bool down = link_down();
    d_links.clear();
    // A transport that failed for good would only fail the stop heap too.
    if (d_plan.send_stop_heap && !down && !d_slots.has_failed())
        d_mapping->send_stop_heap(d_slots);
    d_slots.close(!down);
}

bool sink_impl::start()
{
    d_stats_timer.reset();
    d_watch.start(); // its alias is settled: scrapes may read it
    if (!d_slots.is_open())
        open_at_start(d_logger, [this] { open_stream(); }); // general_work() then ends
    return true;
}

bool sink_impl::stop()
{
    try {
        close_stream();
    } catch (const std::exception& e) {
        d_logger->error("stopping: {}", e.what());
    }
    publish_stats_if_due(true);
    // What the run did, as the stats message shows it: every flowgraph ends saying so.
    d_logger->info("stopped: {}",
                   stats_line(shown_stats(stats(), d_plan.transport.kind, true)));
    return true;
}

void sink_impl::drain_descriptor_messages()
{
    // No message handler: the messages are read here, just before the items they
    // describe, so a name is known by the time its first tag arrives (spead.source
    // publishes a descriptor before it outputs the heaps that use it).
    for (;;) {
        pmt::pmt_t msg = delete_head_nowait(d_descriptors_port);
        if (!msg)
            return;
        try {
            d_mapping->learn_descriptor(descriptor_from_pmt(msg));
        } catch (const std::invalid_argument& e) {
            d_mapping->warn_once("bad descriptor message",
                                 std::string(e.what()) + "; ignored");
        }
    }
}

void sink_impl::forecast(int /*noutput_items*/, gr_vector_int& ninput_items_required)
{
    // Holding items sent in place: called whatever is there, general_work() waits
    // for their sends and consumes them.
    const std::size_t needed = d_mapping->holds_input() ? 1 : d_mapping->items_needed();
    for (int& required : ninput_items_required)
        required = static_cast<int>(needed);
}

std::string sink_impl::lost_peer_name() const
{
    if (d_plan.tcp.size() == 1)
        return endpoint_text(d_plan.tcp.front().get_endpoint());
    if (d_plan.rdma.size() == 1)
        return "verbs://" + d_plan.rdma.front().get_host() + ":" +
               std::to_string(d_plan.rdma.front().get_port());
    return "a receiver";
}

int sink_impl::general_work(int /*noutput_items*/,
                            gr_vector_int& ninput_items,
                            gr_vector_const_void_star& input_items,
                            gr_vector_void_star& /*output_items*/)
{
    if (!d_slots.is_open())
        return WORK_DONE; // start() could not open the stream (logged)
    if (link_lost()) {
        d_logger->error("a connection to {} was lost (counted in "
                        "connections_lost; heaps cut short in heaps_lost_in_flight); "
                        "the flowgraph ends. Set reconnect to connect again instead",
                        lost_peer_name());
        return WORK_DONE;
    }
    if (d_slots.has_failed()) {
        // The send stream logged the cause and the fix, and counted it.
        d_logger->error("the {} transport failed for good (see above; counted in "
                        "writer_errors): the flowgraph ends",
                        transport_name(d_plan.transport.kind));
        return WORK_DONE;
    }
    // Reconnecting: wait here, where tb.stop() can interrupt, rather than inside a
    // send that holds on until the link is back (back-pressure either way).
    while (link_down()) {
        publish_stats_if_due(false);
        boost::this_thread::interruption_point(); // tb.stop()
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    drain_descriptor_messages();
    d_input.items = &input_items;
    d_input.available = &ninput_items;
    d_input.first = nitems_read(0); // every input has consumed as much
    read_input_buffers();
    consume_each(static_cast<int>(d_mapping->send(d_input, d_slots)));
    publish_stats_if_due(false);
    return 0;
}

void sink_impl::read_input_buffers()
{
    d_input.capacity = ~std::size_t(0);
    d_input.items_stay_put = true;
    for (int i = 0; i < detail()->ninputs(); i++) {
        const gr::buffer_reader_sptr& reader = detail()->input(i);
        d_input.capacity =
            std::min(d_input.capacity,
                     static_cast<std::size_t>(reader->max_possible_items_available()));
        // A single-mapped (custom) buffer may move unread items when its reader is
        // blocked: heaps cannot point into it.
        if (!dynamic_cast<const gr::buffer_double_mapped*>(reader->buffer().get()))
            d_input.items_stay_put = false;
    }
}

std::vector<std::unique_ptr<send::stream>> sink_impl::open_links()
{
    std::vector<std::unique_ptr<send::stream>> links; // one per substream
    d_links.clear();
    const auto open = [&](auto link, const std::string& where, const char* over) {
        d_links.push_back(link.get());
        d_logger->info("{} {} over {}",
                       link->is_connected() ? "connected to" : "connecting to",
                       where,
                       over);
        links.push_back(std::move(link));
    };
    boost::asio::io_context& io = d_slots.io();
    for (const auto& c : d_plan.tcp)
        open(std::make_unique<send::tcp_stream>(io, d_plan.stream, c),
             endpoint_text(c.get_endpoint()),
             "TCP");
    for (const auto& c : d_plan.rdma)
        open(std::make_unique<send::rdma_stream>(io, d_plan.stream, c),
             "verbs://" + c.get_host() + ":" + std::to_string(c.get_port()),
             "RDMA");
    return links;
}

bool sink_impl::link_down() const
{
    for (const send::link_stream* link : d_links)
        if (!link->is_connected())
            return true;
    return false;
}

bool sink_impl::link_lost() const
{
    const bool reconnect =
        d_plan.transport.kind == transport_kind::rdma
            ? d_plan.rdma.front().get_reconnect()
            : !d_plan.tcp.empty() && d_plan.tcp.front().get_reconnect();
    return !d_links.empty() && !reconnect && link_down();
}

std::map<std::string, std::uint64_t> sink_impl::stats() const
{
    std::map<std::string, std::uint64_t> out;
    for (const auto& kv : d_slots.stats().items())
        out[kv.first] = kv.second;
    for (const auto& kv : d_mapping->counters())
        out[kv.first] = kv.second;
    return out;
}

std::string sink_impl::active_transport() const
{
    return transport_name(d_plan.transport.kind);
}

void sink_impl::setup_rpc()
{
    d_watch.register_knobs(alias(), metrics::direction::send, [this] {
        return countable_stats(stats(), d_plan.transport.kind, true);
    });
}

void sink_impl::publish_stats_if_due(bool force)
{
    if (d_stats_timer.due(force))
        message_port_pub(d_stats_port,
                         stats_to_pmt(shown_stats(stats(), d_plan.transport.kind, true)));
}

} // namespace spead
} // namespace gr
