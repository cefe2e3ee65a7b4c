/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "sink_impl.h"
#include "transport/endpoint.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/send_pcap.h>
#include <boost/asio/error.hpp>
#include <boost/thread/thread.hpp>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! How long a wait for a free slot lasts before checking for a stop request. */
constexpr std::chrono::milliseconds slot_wait(100);

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
                      int max_poll)
{
    return gnuradio::make_block_sptr<sink_impl>(sink_params{
        transport,       endpoints,           interface,     buffer_size,
        max_packet_size, item_type,           vlen,          payload_item,
        len_tag_key,     heap_items,          ttl,           rate_gbps,
        flavour,         heap_cnt_start,      heap_cnt_step, descriptor_interval,
        payload_name,    payload_description, byte_order,    send_stop_heap,
        capture_file,    stats_interval,      comp_vector,   max_poll });
}

sink_impl::sink_impl(const sink_params& params)
    : gr::block(
          "spead_sink",
          gr::io_signature::make(1, 1, io_signature_size(params.item_type, params.vlen)),
          gr::io_signature::make(0, 0, 0)),
      d_plan(logged_on_error(d_logger, [&] { return plan_sink(params, d_logger); })),
      d_mapping(d_plan.mapping, d_logger),
      d_stats_timer(d_plan.stats_interval),
      d_io_guard(boost::asio::make_work_guard(d_io)),
      d_slots(sink_send_slots),
      d_descriptors_port(pmt::mp("descriptors")),
      d_stats_port(pmt::mp("stats"))
{
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

void sink_impl::send_packet(const std::uint8_t* data, std::size_t items)
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
    std::uint64_t cnt = 0;
    if (!d_mapping.build_data_heap(*s.heap, s.payload.data(), items, cnt)) {
        s.heap.reset();
        s.busy = false;
        return;
    }
    const std::size_t substream = d_mapping.data_heaps() % d_num_substreams;
    try {
        d_stream->async_send_heap(
            *s.heap,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                d_slots[index].busy = false;
                d_slots[index].heap.reset();
                if (ec && ec != boost::asio::error::operation_aborted)
                    d_mapping.warn_once("send error " + ec.message(),
                                        "heap not (fully) sent: " + ec.message() +
                                            " (counted in heaps_failed)");
            },
            static_cast<std::int64_t>(cnt),
            substream);
    } catch (const std::invalid_argument& e) {
        d_mapping.heap_rejected(e.what());
        s.heap.reset();
        s.busy = false;
        return;
    }
    d_mapping.data_heap_sent();
}

std::size_t sink_impl::max_input_items() const
{
    return static_cast<std::size_t>(detail()->input(0)->max_possible_items_available());
}

void sink_impl::forecast(int /*noutput_items*/, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = static_cast<int>(d_mapping.items_needed());
}

int sink_impl::general_work(int /*noutput_items*/,
                            gr_vector_int& ninput_items,
                            gr_vector_const_void_star& input_items,
                            gr_vector_void_star& /*output_items*/)
{
    if (!d_stream)
        return WORK_DONE; // start() could not open the stream (logged)
    drain_descriptor_messages();

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
    return out;
}

std::string sink_impl::active_transport() const
{
    return transport_name(d_plan.transport.kind);
}

void sink_impl::publish_stats_if_due(bool force)
{
    if (d_stats_timer.due(force))
        message_port_pub(d_stats_port, stats_to_pmt(stats()));
}

} // namespace spead
} // namespace gr
