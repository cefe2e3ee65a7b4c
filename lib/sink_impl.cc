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
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/send_pcap.h>
#include <boost/asio/error.hpp>
#include <boost/thread/thread.hpp>
#include <algorithm>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! How long a wait for a free slot lasts before checking for a stop request. */
constexpr std::chrono::milliseconds slot_wait(100);

/*! The block's inputs: one per substream (plan_sink rejects a bad count later). */
int input_count(const sink_params& p)
{
    return static_cast<int>(
        std::clamp<std::size_t>(p.substreams, 1, sink_max_substreams));
}

} // namespace

sink::sptr sink::make(const std::string& transport,
                      const std::string& endpoints,
                      const std::string& interface,
                      std::size_t buffer_size,
                      std::size_t max_packet_size,
                      const std::string& item_type,
                      std::size_t vlen,
                      std::uint64_t payload_item,
                      const std::string& len_tag_key,
                      std::size_t heap_items,
                      int ttl,
                      double rate_gbps,
                      const std::string& flavour,
                      std::uint64_t heap_cnt_start,
                      std::uint64_t heap_cnt_step,
                      std::size_t descriptor_interval,
                      const std::string& payload_name,
                      const std::string& payload_description,
                      const std::string& byte_order,
                      bool send_stop_heap,
                      const std::string& capture_file,
                      double stats_interval,
                      int comp_vector,
                      int max_poll,
                      const std::string& input_mode,
                      std::uint64_t timestamp_item,
                      std::uint64_t timestamp_step,
                      std::uint64_t start_timestamp,
                      double sample_rate,
                      double sync_time,
                      std::size_t substreams,
                      std::uint64_t substream_item)
{
    return gnuradio::make_block_sptr<sink_impl>(sink_params{ transport,
                                                             endpoints,
                                                             interface,
                                                             buffer_size,
                                                             max_packet_size,
                                                             item_type,
                                                             vlen,
                                                             payload_item,
                                                             len_tag_key,
                                                             heap_items,
                                                             ttl,
                                                             rate_gbps,
                                                             flavour,
                                                             heap_cnt_start,
                                                             heap_cnt_step,
                                                             descriptor_interval,
                                                             payload_name,
                                                             payload_description,
                                                             byte_order,
                                                             send_stop_heap,
                                                             capture_file,
                                                             stats_interval,
                                                             comp_vector,
                                                             max_poll,
                                                             input_mode,
                                                             timestamp_item,
                                                             timestamp_step,
                                                             start_timestamp,
                                                             sample_rate,
                                                             sync_time,
                                                             substreams,
                                                             substream_item });
}

sink_impl::sink_impl(const sink_params& params)
    : gr::block("spead_sink",
                gr::io_signature::make(input_count(params),
                                       input_count(params),
                                       io_signature_size(params.item_type, params.vlen)),
                gr::io_signature::make(0, 0, 0)),
      d_plan(logged_on_error(d_logger, [&] { return plan_sink(params, d_logger); })),
      d_mapping(d_plan.mapping, d_logger),
      d_framer(d_plan.continuous_framing, d_logger),
      d_stats_timer(d_plan.stats_interval),
      d_io_guard(boost::asio::make_work_guard(d_io)),
      d_slots(sink_send_slots),
      d_descriptors_port(pmt::mp("descriptors")),
      d_stats_port(pmt::mp("stats")),
      d_rx_time_key(pmt::mp("rx_time"))
{
    if (d_plan.continuous)
        for (const descriptor& d : d_framer.descriptors())
            d_mapping.learn_descriptor(d);

    // Opened now so that a bad destination or an MTU too small for max_packet_size is
    // reported when the block is made.
    try {
        open_stream();
    } catch (const std::invalid_argument& e) {
        d_logger->error("{}", e.what());
        throw;
    } catch (const std::exception& e) {
        d_logger->error("cannot send to {}: {}", params.endpoints, e.what());
        throw;
    }

    message_port_register_in(d_descriptors_port);
    message_port_register_out(d_stats_port);

    if (d_plan.mapping.len_tag_key.empty())
        // The scheduler then calls us with whole heaps and sizes the upstream buffer
        // for two of them.
        set_output_multiple(static_cast<int>(d_plan.mapping.heap_items));
}

sink_impl::~sink_impl()
{
    d_mapping.reset(); // a new run to the mapping: never a stop heap from a destructor
    close_stream();
}

void sink_impl::open_stream()
{
    std::unique_ptr<send::stream> stream;
    open_with_fallback(d_plan.transport, d_logger, [&](transport_kind kind) {
        if (kind == transport_kind::udp) {
            stream = std::make_unique<send::udp_stream>(d_io, d_plan.stream, d_plan.udp);
        } else if (kind == transport_kind::ibverbs) {
            stream =
                std::make_unique<send::udp_ibv_stream>(d_io, d_plan.stream, d_plan.ibv);
            d_logger->info("sending to {} over ibverbs on {}",
                           transport::to_string(d_plan.ibv.get_endpoints()),
                           d_plan.transport.interface);
        } else {
            try {
                stream = std::make_unique<send::pcap_stream>(
                    d_io, d_plan.stream, d_plan.capture_file, d_plan.udp.get_endpoints());
            } catch (const std::invalid_argument&) {
                throw;
            } catch (const std::runtime_error& e) {
                throw std::invalid_argument(std::string("capture_file: ") + e.what() +
                                            "; give a path in a writable directory");
            }
        }
    });
    d_num_substreams = stream->get_num_substreams();
    d_mapping.reset();
    if (d_plan.continuous)
        d_framer.reset();
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_stream = std::move(stream);
}

void sink_impl::close_stream()
{
    if (!d_stream)
        return;
    if (d_mapping.run_started() && d_plan.send_stop_heap)
        send_control_heap(false, true);
    d_stream->flush();
    d_io.poll(); // completion handlers free the slots
    std::unique_ptr<send::stream> stream;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        d_last_stats = d_stream->get_stats();
        stream = std::move(d_stream);
    }
    stream.reset(); // joins the writer, closes the socket or the file
    d_io.poll();
    for (slot& s : d_slots) {
        s.busy = false;
        s.heap.reset();
    }
}

bool sink_impl::start()
{
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
            // start() runs in the block's thread: general_work() ends the flowgraph.
            d_logger->error("cannot start: {}", e.what());
        }
    }
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
            d_mapping.learn_descriptor(descriptor_from_pmt(msg));
        } catch (const std::invalid_argument& e) {
            d_mapping.warn_once("bad descriptor message",
                                std::string(e.what()) + "; ignored");
        }
    }
}

void sink_impl::send_control_heap(bool descriptors, bool stop)
{
    send::heap h(d_plan.mapping.flavour);
    d_mapping.build_control_heap(h, descriptors, stop);
    if (h.empty())
        return;
    for (std::size_t i = 0; i < d_num_substreams; i++) {
        const std::uint64_t cnt = d_mapping.next_control_cnt();
        try {
            d_stream->send_heap(h, static_cast<std::int64_t>(cnt), i);
            d_mapping.control_heap_sent();
        } catch (const std::exception& e) {
            d_logger->error("control heap {} not sent: {}", cnt, e.what());
        }
    }
}

std::size_t sink_impl::acquire_slot()
{
    for (;;) {
        d_io.poll();
        for (std::size_t i = 0; i < d_slots.size(); i++) {
            if (!d_slots[i].busy) {
                d_slots[i].busy = true;
                return i;
            }
        }
        // Backpressure: the network is slower than the flowgraph.
        publish_stats_if_due(false);
        d_io.run_one_for(slot_wait);
        boost::this_thread::interruption_point(); // tb.stop()
    }
}

std::size_t sink_impl::fill_slot(const std::uint8_t* data, std::size_t items)
{
    // Descriptors first: a name resolved by read_tags() may have come with a
    // descriptor just now, and it must go out before the heap that uses it.
    if (d_mapping.descriptors_due(items))
        send_control_heap(true, false);

    const std::size_t index = acquire_slot();
    slot& s = d_slots[index];
    s.payload.resize(items * d_mapping.item_size());
    d_mapping.copy_payload(s.payload.data(), data, items);
    s.heap.emplace(d_plan.mapping.flavour);
    return index;
}

void sink_impl::release_slot(std::size_t index)
{
    d_slots[index].heap.reset();
    d_slots[index].busy = false;
}

void sink_impl::send_slot(std::size_t index, std::uint64_t cnt, std::size_t substream)
{
    try {
        d_stream->async_send_heap(
            *d_slots[index].heap,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                release_slot(index);
                if (ec && ec != boost::asio::error::operation_aborted)
                    d_mapping.warn_once("send error " + ec.message(),
                                        "heap not (fully) sent: " + ec.message() +
                                            " (counted in heaps_failed)");
            },
            static_cast<std::int64_t>(cnt),
            substream);
    } catch (const std::invalid_argument& e) {
        d_mapping.heap_rejected(e.what());
        release_slot(index);
        return;
    }
    d_mapping.data_heap_sent();
}

void sink_impl::send_packet(const std::uint8_t* data, std::size_t items)
{
    const std::size_t index = fill_slot(data, items);
    slot& s = d_slots[index];
    std::uint64_t cnt = 0;
    if (!d_mapping.build_data_heap(*s.heap, s.payload.data(), items, cnt)) {
        release_slot(index);
        return;
    }
    send_slot(index, cnt, d_mapping.data_heaps() % d_num_substreams);
}

void sink_impl::send_continuous_heap(std::size_t input, const std::uint8_t* data)
{
    const std::size_t index = fill_slot(data, d_plan.continuous_framing.heap_items);
    slot& s = d_slots[index];
    const std::uint64_t cnt = d_framer.build_heap(*s.heap, input, s.payload.data());
    send_slot(index, cnt, input % d_num_substreams);
}

std::size_t sink_impl::max_input_items() const
{
    return static_cast<std::size_t>(detail()->input(0)->max_possible_items_available());
}

void sink_impl::forecast(int /*noutput_items*/, gr_vector_int& ninput_items_required)
{
    for (int& required : ninput_items_required)
        required = static_cast<int>(d_mapping.items_needed());
}

int sink_impl::continuous_work(const gr_vector_int& ninput_items,
                               const gr_vector_const_void_star& input_items)
{
    const std::size_t heap_items = d_plan.continuous_framing.heap_items;
    const std::size_t heap_bytes = heap_items * d_mapping.item_size();
    std::size_t rounds = static_cast<std::size_t>(ninput_items[0]) / heap_items;
    for (int n : ninput_items)
        rounds = std::min(rounds, static_cast<std::size_t>(n) / heap_items);
    // Every input has consumed as much as input 0: one offset for all.
    const std::uint64_t base = nitems_read(0);
    for (std::size_t r = 0; r < rounds; r++) {
        const std::uint64_t start = base + r * heap_items;
        for (std::size_t i = 0; i < input_items.size(); i++) {
            get_tags_in_range(d_tags, i, start, start + heap_items, d_rx_time_key);
            for (const gr::tag_t& t : d_tags)
                d_framer.rx_time_tag(t.offset - start, t.value);
        }
        for (std::size_t i = 0; i < input_items.size(); i++)
            send_continuous_heap(
                i, static_cast<const std::uint8_t*>(input_items[i]) + r * heap_bytes);
        d_framer.next_round();
        publish_stats_if_due(false);
    }
    consume_each(static_cast<int>(rounds * heap_items));
    return 0;
}

int sink_impl::general_work(int /*noutput_items*/,
                            gr_vector_int& ninput_items,
                            gr_vector_const_void_star& input_items,
                            gr_vector_void_star& /*output_items*/)
{
    if (!d_stream)
        return WORK_DONE; // start() could not open the stream (logged)
    drain_descriptor_messages();
    if (d_plan.continuous)
        return continuous_work(ninput_items, input_items);

    const auto* in = static_cast<const std::uint8_t*>(input_items[0]);
    const std::size_t avail = static_cast<std::size_t>(ninput_items[0]);
    const std::uint64_t base = nitems_read(0);
    get_tags_in_range(d_tags, 0, base, base + avail);
    const std::size_t capacity = max_input_items();
    std::size_t tag = 0; // first tag at or after the next item
    std::size_t consumed = 0;
    while (consumed < avail) {
        const std::uint64_t at = base + consumed;
        while (tag < d_tags.size() && d_tags[tag].offset < at)
            tag++;
        const auto next = d_mapping.frame(d_tags, tag, at, avail - consumed, capacity);
        if (next.what == stream_to_heap::action::wait)
            break;
        if (next.what == stream_to_heap::action::send) {
            d_mapping.read_tags(
                d_tags, tag, next.end_tag, [this] { drain_descriptor_messages(); });
            send_packet(in + consumed * d_mapping.item_size(), next.items);
            tag = next.end_tag;
            publish_stats_if_due(false);
        }
        consumed += next.items;
    }
    consume_each(static_cast<int>(consumed));
    publish_stats_if_due(false);
    return 0;
}

std::map<std::string, std::uint64_t> sink_impl::stats() const
{
    std::map<std::string, std::uint64_t> out;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        const send_stats s = d_stream ? d_stream->get_stats() : d_last_stats;
        for (const auto& kv : s.items())
            out[kv.first] = kv.second;
    }
    for (const auto& kv : d_mapping.counters())
        out[kv.first] = kv.second;
    if (d_plan.continuous)
        for (const auto& kv : d_framer.counters())
            out[kv.first] = kv.second;
    return out;
}

std::string sink_impl::active_transport() const
{
    return transport_name(d_plan.transport.kind);
}

void sink_impl::publish_stats_if_due(bool force)
{
    if (d_stats_timer.due(force))
        message_port_pub(d_stats_port,
                         stats_to_pmt(shown_stats(stats(), d_plan.transport.kind, true)));
}

} // namespace spead
} // namespace gr
