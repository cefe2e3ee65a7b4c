/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "sink_impl.h"
#include "transport/endpoint.h"
#include "transport/ibv/preflight.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/send_pcap.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/asio/error.hpp>
#include <boost/thread/thread.hpp>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! Heaps in flight at once: the send queue depth, and the payload copies kept. */
constexpr std::size_t send_slots = 8;

/*! How long a wait for a free slot lasts before checking for a stop request. */
constexpr std::chrono::milliseconds slot_wait(100);

int itemsize_or_one(const std::string& type, std::size_t vlen)
{
    try {
        const std::size_t size = item_type::parse(type).size() * vlen;
        return size > 0 && size < (1u << 30) ? static_cast<int>(size) : 1;
    } catch (const std::exception&) {
        return 1;
    }
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
                      int max_poll)
{
    return gnuradio::make_block_sptr<sink_impl>(transport,
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
                                                max_poll);
}

sink_impl::sink_impl(const std::string& transport,
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
    : gr::block("spead_sink",
                gr::io_signature::make(1, 1, itemsize_or_one(item_type, vlen)),
                gr::io_signature::make(0, 0, 0)),
      d_vlen(vlen),
      d_payload_item(payload_item),
      d_len_tag_key(len_tag_key.empty() ? pmt::PMT_NIL : pmt::mp(len_tag_key)),
      d_heap_items(heap_items),
      d_cnt_start(heap_cnt_start),
      d_cnt_step(heap_cnt_step),
      d_descriptor_interval(descriptor_interval),
      d_payload_name(payload_name),
      d_payload_description(payload_description),
      d_send_stop_heap(send_stop_heap),
      d_io_guard(boost::asio::make_work_guard(d_io)),
      d_slots(send_slots),
      d_heap_cnt_key(pmt::mp("heap_cnt")),
      d_descriptors_port(pmt::mp("descriptors")),
      d_stats_port(pmt::mp("stats"))
{
    try {
        d_item_type = item_type::parse(item_type);
        d_byte_order = parse_byte_order(byte_order, false);
        validate_and_configure(transport,
                               endpoints,
                               interface,
                               buffer_size,
                               max_packet_size,
                               vlen,
                               payload_item,
                               len_tag_key,
                               heap_items,
                               ttl,
                               rate_gbps,
                               flavour,
                               heap_cnt_start,
                               heap_cnt_step,
                               payload_name,
                               capture_file,
                               stats_interval,
                               comp_vector,
                               max_poll);
        // Opened now so that a bad destination or an MTU too small for max_packet_size
        // is reported when the block is made.
        try {
            open_stream();
        } catch (const std::exception& e) {
            if (!(d_auto && d_transport == transport_kind::ibverbs))
                throw;
            // Preflight passed but the stream still refused (e.g. a unicast
            // destination whose MAC is unknown): auto means "if it works".
            d_logger->warn("transport auto: ibverbs could not be set up on {} ({}); "
                           "using udp",
                           d_ibv_interface,
                           e.what());
            d_transport = transport_kind::udp;
            open_stream();
        }
    } catch (const std::invalid_argument& e) {
        d_logger->error("{}", e.what());
        throw;
    } catch (const std::exception& e) {
        d_logger->error("cannot send to {}: {}", endpoints, e.what());
        throw;
    }

    message_port_register_in(d_descriptors_port);
    message_port_register_out(d_stats_port);

    if (pmt::is_null(d_len_tag_key)) {
        // The scheduler then calls us with whole heaps and sizes the upstream buffer
        // for two of them.
        set_output_multiple(static_cast<int>(d_heap_items));
        d_needed = d_heap_items;
    }
    if (!d_payload_name.empty())
        d_name_to_id[d_payload_name] = d_payload_item;
}

sink_impl::~sink_impl()
{
    d_run_started = false; // never send a stop heap from a destructor
    close_stream();
}

void sink_impl::validate_and_configure(const std::string& transport,
                                       const std::string& endpoints,
                                       const std::string& interface,
                                       std::size_t buffer_size,
                                       std::size_t max_packet_size,
                                       std::size_t vlen,
                                       std::uint64_t payload_item,
                                       const std::string& len_tag_key,
                                       std::size_t heap_items,
                                       int ttl,
                                       double rate_gbps,
                                       const std::string& flavour,
                                       std::uint64_t heap_cnt_start,
                                       std::uint64_t heap_cnt_step,
                                       const std::string& payload_name,
                                       const std::string& capture_file,
                                       double stats_interval,
                                       int comp_vector,
                                       int max_poll)
{
    if (transport == "udp")
        d_transport = transport_kind::udp;
    else if (transport == "ibverbs")
        d_transport = transport_kind::ibverbs;
    else if (transport == "auto")
        d_transport = transport_kind::udp; // or ibverbs: settled below
    else if (transport == "pcap")
        d_transport = transport_kind::pcap;
    else
        throw std::invalid_argument(
            "transport: '" + transport +
            "' is unknown; use udp (kernel sockets), ibverbs (raw-packet verbs on the "
            "NIC that owns interface), auto (ibverbs when it can be used on interface, "
            "otherwise udp) or pcap (record into capture_file)");

    if (vlen < 1 || vlen > (1u << 24))
        throw std::invalid_argument("vlen: " + std::to_string(vlen) +
                                    " is out of range; use 1 (scalar items) up to 2^24");
    d_itemsize = d_item_type.size() * vlen;

    try {
        d_flavour = gr::spead::flavour::from_string(flavour);
    } catch (const std::invalid_argument&) {
        throw std::invalid_argument("flavour: '" + flavour +
                                    "' is not a SPEAD flavour; use 64-40 (spead2's "
                                    "default) or 64-48");
    }
    if (d_flavour.heap_address_bits() != 40 && d_flavour.heap_address_bits() != 48)
        throw std::invalid_argument("flavour: '" + flavour +
                                    "' is not supported by the sink; use 64-40 or 64-48");

    if (payload_item <= item_id::descriptor_dtype ||
        payload_item > d_flavour.max_item_id())
        throw std::invalid_argument("payload_item: " + item_id_tag_name(payload_item) +
                                    " is reserved or does not fit " + d_flavour.name() +
                                    "; use an id above 0x15 and up to " +
                                    item_id_tag_name(d_flavour.max_item_id()) +
                                    " (default 0x1000)");

    if (len_tag_key.empty()) {
        if (heap_items == 0 || heap_items > static_cast<std::size_t>(INT_MAX / 2))
            throw std::invalid_argument(
                "heap_items: " + std::to_string(heap_items) +
                " with no length tag key; give the items per heap (>= 1), or a "
                "len_tag_key (e.g. packet_len) to send one heap per tagged packet");
    }

    if (heap_cnt_start > d_flavour.max_address())
        throw std::invalid_argument("heap_cnt_start: " + std::to_string(heap_cnt_start) +
                                    " does not fit " + d_flavour.name() + "; use 0 to " +
                                    std::to_string(d_flavour.max_address()));
    if (heap_cnt_step == 0 || heap_cnt_step > d_flavour.max_address())
        throw std::invalid_argument("heap_cnt_step: must be at least 1 (heaps need "
                                    "distinct cnts); give e.g. 1, or "
                                    "the number of senders sharing a receiver");

    if (!std::isfinite(rate_gbps) || rate_gbps < 0)
        throw std::invalid_argument("rate_gbps: " + std::to_string(rate_gbps) +
                                    " is not a rate; give Gb/s >= 0 (0: as fast as "
                                    "possible)");
    if (!std::isfinite(stats_interval) || stats_interval < 0)
        throw std::invalid_argument(
            "stats_interval: " + std::to_string(stats_interval) +
            " is not a duration; give seconds between stats messages, >= 0 (0: none)");
    d_stats_interval = std::chrono::duration<double>(stats_interval);
    (void)payload_name;

    d_stream_config.set_max_packet_size(max_packet_size)
        .set_rate(rate_gbps * 1e9 / 8.0)
        .set_max_heaps(send_slots);

    if (d_transport != transport_kind::pcap) {
        if (endpoints.empty())
            throw std::invalid_argument(
                "endpoints: empty; give where to send, e.g. 127.0.0.1:7148, "
                "239.1.2.3:7148 or a range 239.1.2.3+3:7148");
        if (buffer_size > send::udp_config::max_buffer_size)
            throw std::invalid_argument("buffer_size: " + std::to_string(buffer_size) +
                                        " bytes is above 1 GiB; use 0 (512 KiB) or less");
        if (ttl < 0 || ttl > 255)
            throw std::invalid_argument("ttl: " + std::to_string(ttl) +
                                        " is out of range; use 0 to 255 (1: the local "
                                        "network)");
        // Checked whatever the transport, so errors do not depend on the machine.
        d_ibv_config.set_max_poll(max_poll).set_comp_vector(comp_vector);
        d_udp_config.set_endpoints(endpoints)
            .set_interface(interface)
            .set_ttl(ttl)
            .set_buffer_size(buffer_size);
        d_auto = transport == "auto";
        if (d_transport == transport_kind::ibverbs && interface.empty())
            throw std::invalid_argument(
                "interface: empty; transport ibverbs sends through the RDMA device that "
                "owns an interface: give its netdev name (e.g. ens1f0) or IPv4 address, "
                "or use transport udp");
        if (d_auto) {
            if (interface.empty()) {
                d_logger->warn("transport auto: no interface given, and ibverbs needs "
                               "the NIC's interface (netdev name or IPv4 address); "
                               "using udp");
            } else {
                const auto report = ibv::preflight(interface, buffer_size);
                if (report.usable()) {
                    d_logger->info("transport auto: {}; using ibverbs", report.summary());
                    d_transport = transport_kind::ibverbs;
                } else {
                    d_logger->warn("transport auto: {}; using udp", report.summary());
                }
            }
        }
        if (d_transport == transport_kind::ibverbs) {
            d_ibv_interface = interface;
            d_ibv_config.set_endpoints(endpoints)
                .set_interface(interface)
                .set_ttl(ttl)
                .set_buffer_size(buffer_size);
        }
    } else {
        if (capture_file.empty())
            throw std::invalid_argument(
                "capture_file: empty; the pcap transport records into a capture file, "
                "give its path");
        if (endpoints.empty())
            throw std::invalid_argument(
                "endpoints: empty; the pcap transport writes frames to these "
                "destinations, e.g. 127.0.0.1:7148");
        d_udp_config.set_endpoints(endpoints); // parsed here so errors name endpoints
        d_capture_file = capture_file;
    }
}

void sink_impl::open_stream()
{
    std::unique_ptr<send::stream> stream;
    if (d_transport == transport_kind::udp)
        stream = std::make_unique<send::udp_stream>(d_io, d_stream_config, d_udp_config);
    else if (d_transport == transport_kind::ibverbs) {
        stream =
            std::make_unique<send::udp_ibv_stream>(d_io, d_stream_config, d_ibv_config);
        d_logger->info("sending to {} over ibverbs on {}",
                       transport::to_string(d_ibv_config.get_endpoints()),
                       d_ibv_interface);
    } else {
        try {
            stream = std::make_unique<send::pcap_stream>(
                d_io, d_stream_config, d_capture_file, d_udp_config.get_endpoints());
        } catch (const std::invalid_argument&) {
            throw;
        } catch (const std::runtime_error& e) {
            throw std::invalid_argument(std::string("capture_file: ") + e.what() +
                                        "; give a path in a writable directory");
        }
    }
    d_num_substreams = stream->get_num_substreams();
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_stream = std::move(stream);
    d_next_cnt = d_cnt_start;
    d_next_control_cnt = d_flavour.max_address();
    d_run_started = false;
    d_descriptors_dirty = true;
    d_heaps_since_descriptors = 0;
    d_skip = 0;
    d_data_heaps = 0;
    d_control_heaps = 0;
    d_items_dropped_untagged = 0;
    d_packets_dropped_too_large = 0;
    d_heaps_rejected = 0;
    d_tags_too_wide = 0;
}

void sink_impl::close_stream()
{
    if (!d_stream)
        return;
    if (d_run_started && d_send_stop_heap)
        send_control_heap(false, false, true);
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
    d_next_stats = std::chrono::steady_clock::now();
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
    if (d_stats_interval.count() > 0)
        publish_stats_if_due(true);
    return true;
}

void sink_impl::warn_once(const std::string& what, const std::string& message)
{
    if (d_warned.insert(what).second)
        d_logger->warn("{}", message);
}

void sink_impl::learn_descriptor(const descriptor& d)
{
    if (d.id == d_payload_item)
        return; // the sink describes its own payload
    if (d.id <= item_id::stream_ctrl || d.id > d_flavour.max_item_id()) {
        warn_once("descriptor " + item_id_tag_name(d.id),
                  "descriptor for " + item_id_tag_name(d.id) + " (" + d.name +
                      ") ignored: the id is reserved or does not fit " +
                      d_flavour.name());
        return;
    }
    auto it = d_descriptors.find(d.id);
    if (it != d_descriptors.end()) {
        if (it->second == d)
            return;
        if (!it->second.name.empty())
            d_name_to_id.erase(it->second.name);
    }
    d_descriptors[d.id] = d;
    if (!d.name.empty() && d.name != d_payload_name)
        d_name_to_id[d.name] = d.id;
    d_descriptors_dirty = true;
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
            learn_descriptor(descriptor_from_pmt(msg));
        } catch (const std::invalid_argument& e) {
            warn_once("bad descriptor message", std::string(e.what()) + "; ignored");
        }
    }
}

std::uint64_t sink_impl::item_id_for_key(const pmt::pmt_t& key)
{
    if (!pmt::is_symbol(key))
        return 0;
    const std::string name = pmt::symbol_to_string(key);
    if (name == "rx_time" || name == "heap_incomplete")
        return 0; // derived on receive, not items
    std::uint64_t id = 0;
    if (auto parsed = parse_item_id_tag_name(name)) {
        id = *parsed;
    } else {
        auto it = d_name_to_id.find(name);
        if (it == d_name_to_id.end()) {
            drain_descriptor_messages();
            it = d_name_to_id.find(name);
        }
        if (it == d_name_to_id.end()) {
            warn_once("tag " + name,
                      "tag '" + name +
                          "' ignored: no descriptor names it (connect a spead.source's "
                          "descriptors port, or use an 0x... key)");
            return 0;
        }
        id = it->second;
    }
    if (id == d_payload_item)
        return 0;
    if (id <= item_id::stream_ctrl || id > d_flavour.max_item_id()) {
        warn_once("tag " + name,
                  "tag '" + name + "' ignored: item id " + item_id_tag_name(id) +
                      " is reserved or does not fit " + d_flavour.name());
        return 0;
    }
    return id;
}

void sink_impl::send_control_heap(bool descriptors, bool start, bool stop)
{
    send::heap h(d_flavour);
    if (start)
        h.add_start();
    if (descriptors) {
        if (!d_payload_name.empty()) {
            descriptor d;
            d.id = d_payload_item;
            d.name = d_payload_name;
            d.description = d_payload_description;
            const bool big =
                (d_byte_order == byte_order_mode::swap) != host_is_big_endian();
            d.numpy_header =
                make_numpy_header(d_item_type.numpy_descr(big),
                                  d_item_type.numpy_shape(d_described_items, d_vlen));
            h.add_descriptor(d);
        }
        for (const auto& kv : d_descriptors)
            h.add_descriptor(kv.second);
    }
    if (stop)
        h.add_end();
    if (h.empty())
        return;
    for (std::size_t i = 0; i < d_num_substreams; i++) {
        try {
            d_stream->send_heap(h, static_cast<std::int64_t>(d_next_control_cnt), i);
            d_control_heaps++;
        } catch (const std::exception& e) {
            d_logger->error("control heap {} not sent: {}", d_next_control_cnt, e.what());
        }
        d_next_control_cnt--;
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

void sink_impl::send_packet(const std::uint8_t* data,
                            std::size_t items,
                            std::size_t first_tag,
                            std::size_t end_tag)
{
    // Tags first: resolving a name may read a descriptor that arrived just now, and
    // that descriptor must go out before the heap that uses it.
    bool has_cnt = false;
    std::uint64_t cnt = 0;
    d_immediates.clear();
    for (std::size_t t = first_tag; t < end_tag; t++) {
        const gr::tag_t& tag = d_tags[t];
        if (pmt::eqv(tag.key, d_len_tag_key))
            continue;
        if (pmt::eqv(tag.key, d_heap_cnt_key)) {
            if (auto v = pmt_to_uint64(tag.value)) {
                cnt = *v;
                has_cnt = true;
            } else {
                warn_once("heap_cnt value",
                          "heap_cnt tag with a value that is not a "
                          "non-negative integer ignored");
            }
            continue;
        }
        const std::uint64_t id = item_id_for_key(tag.key);
        if (id == 0)
            continue;
        const auto value = pmt_to_uint64(tag.value);
        if (!value) {
            warn_once("value " + pmt::symbol_to_string(tag.key),
                      "tag '" + pmt::symbol_to_string(tag.key) +
                          "' ignored: its value is not a non-negative integer");
            continue;
        }
        if (*value > d_flavour.max_address()) {
            // An addressed item instead would become payload at a receiver that takes
            // every addressed item: drop the tag, count it, say how to avoid it.
            d_tags_too_wide++;
            warn_once("wide " + pmt::symbol_to_string(tag.key),
                      "tag '" + pmt::symbol_to_string(tag.key) + "' value " +
                          std::to_string(*value) + " does not fit a " + d_flavour.name() +
                          " immediate; not sent (counted in tags_too_wide). Use flavour "
                          "64-48 for values below 2^48");
            continue;
        }
        d_immediates.emplace_back(id, *value);
    }

    // Descriptors: at the start of the run, when they (or the payload's shape) change,
    // and every descriptor_interval heaps.
    if (!d_payload_name.empty() && items != d_described_items) {
        d_described_items = items;
        d_descriptors_dirty = true;
    }
    if (!d_run_started || d_descriptors_dirty ||
        (d_descriptor_interval > 0 &&
         d_heaps_since_descriptors >= d_descriptor_interval)) {
        send_control_heap(true, !d_run_started, false);
        d_run_started = true;
        d_descriptors_dirty = false;
        d_heaps_since_descriptors = 0;
    }

    const std::size_t index = acquire_slot();
    slot& s = d_slots[index];
    const std::size_t bytes = items * d_itemsize;
    s.payload.resize(bytes);
    if (d_byte_order == byte_order_mode::swap)
        copy_swapped(s.payload.data(), data, bytes, d_item_type.component_size());
    else
        std::memcpy(s.payload.data(), data, bytes);

    s.heap.emplace(d_flavour);
    send::heap& h = *s.heap;
    try {
        for (const auto& [id, value] : d_immediates)
            h.add_immediate(id, value);
        // Never an immediate, even when tiny: a receiver takes immediates as metadata.
        h.add_item(d_payload_item, s.payload.data(), bytes, false);
    } catch (const std::invalid_argument& e) {
        // The ids and values were checked above; this is a last line of defence.
        warn_once(std::string("item ") + e.what(),
                  std::string("heap not sent: ") + e.what() +
                      " (counted in heaps_rejected)");
        d_heaps_rejected++;
        s.heap.reset();
        s.busy = false;
        return;
    }

    if (!has_cnt) {
        cnt = d_next_cnt;
        d_next_cnt += d_cnt_step;
    }
    if (cnt > d_flavour.max_address()) {
        warn_once("cnt range",
                  "heap cnt " + std::to_string(cnt) + " does not fit " +
                      d_flavour.name() +
                      "; such heaps are not sent (counted in heaps_rejected)");
        d_heaps_rejected++;
        s.heap.reset();
        s.busy = false;
        return;
    }
    const std::size_t substream = d_data_heaps.load() % d_num_substreams;
    try {
        d_stream->async_send_heap(
            h,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                d_slots[index].busy = false;
                d_slots[index].heap.reset();
                if (ec && ec != boost::asio::error::operation_aborted)
                    warn_once("send error " + ec.message(),
                              "heap not (fully) sent: " + ec.message() +
                                  " (counted in heaps_failed)");
            },
            static_cast<std::int64_t>(cnt),
            substream);
    } catch (const std::invalid_argument& e) {
        warn_once(std::string("rejected ") + e.what(),
                  std::string("heap not sent: ") + e.what() +
                      " (counted in heaps_rejected)");
        d_heaps_rejected++;
        s.heap.reset();
        s.busy = false;
        return;
    }
    d_data_heaps++;
    d_heaps_since_descriptors++;
}

std::size_t sink_impl::max_input_items() const
{
    return static_cast<std::size_t>(detail()->input(0)->max_possible_items_available());
}

void sink_impl::forecast(int /*noutput_items*/, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = static_cast<int>(d_needed);
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
    const bool tagged = !pmt::is_null(d_len_tag_key);
    get_tags_in_range(d_tags, 0, base, base + avail);
    std::size_t tag = 0; // next tag not yet passed
    std::size_t consumed = 0;
    d_needed = tagged ? 1 : d_heap_items;

    while (consumed < avail) {
        const std::uint64_t at = base + consumed;
        while (tag < d_tags.size() && d_tags[tag].offset < at)
            tag++;
        if (d_skip > 0) {
            const std::size_t n = std::min<std::uint64_t>(d_skip, avail - consumed);
            consumed += n;
            d_skip -= n;
            continue;
        }

        std::size_t len = d_heap_items;
        if (tagged) {
            // The packet's length: the (last) length tag on this item.
            long tagged_len = -1;
            std::size_t next_len_tag = d_tags.size();
            for (std::size_t t = tag; t < d_tags.size(); t++) {
                if (!pmt::eqv(d_tags[t].key, d_len_tag_key))
                    continue;
                if (d_tags[t].offset == at) {
                    tagged_len = pmt::is_integer(d_tags[t].value)
                                     ? pmt::to_long(d_tags[t].value)
                                     : static_cast<long>(
                                           pmt_to_uint64(d_tags[t].value).value_or(0));
                } else {
                    next_len_tag = t;
                    break;
                }
            }
            if (tagged_len <= 0) {
                // Items outside any packet: drop up to the next length tag.
                const std::size_t until = next_len_tag < d_tags.size()
                                              ? d_tags[next_len_tag].offset - base
                                              : avail;
                d_items_dropped_untagged += until - consumed;
                warn_once("untagged",
                          "items without a '" + pmt::symbol_to_string(d_len_tag_key) +
                              "' length tag dropped (counted in items_dropped_untagged); "
                              "feed the sink a tagged stream, or set len_tag_key empty "
                              "and heap_items");
                consumed = until;
                continue;
            }
            len = static_cast<std::size_t>(tagged_len);
            if (len > max_input_items()) {
                d_logger->error(
                    "a packet of {} items is longer than the {} items the upstream "
                    "buffer can hold; dropped (packets_dropped_too_large). Set the "
                    "upstream block's minimum output buffer to at least {} items",
                    len,
                    max_input_items(),
                    2 * len);
                d_packets_dropped_too_large++;
                d_skip = len;
                continue;
            }
        }
        if (avail - consumed < len) {
            d_needed = len; // the scheduler calls again when the whole packet is there
            break;
        }
        std::size_t end_tag = tag;
        while (end_tag < d_tags.size() && d_tags[end_tag].offset < at + len)
            end_tag++;
        send_packet(in + consumed * d_itemsize, len, tag, end_tag);
        consumed += len;
        tag = end_tag;
        publish_stats_if_due(false);
    }
    consume_each(static_cast<int>(consumed));
    publish_stats_if_due(false);
    return 0;
}

std::uint64_t sink_impl::stat(send_stat s) const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_stream ? d_stream->get_stats()[s] : d_last_stats[s];
}

std::map<std::string, std::uint64_t> sink_impl::collect_stats_locked() const
{
    const send_stats s = d_stream ? d_stream->get_stats() : d_last_stats;
    std::map<std::string, std::uint64_t> out;
    for (const auto& kv : s.items())
        out[kv.first] = kv.second;
    out["data_heaps"] = d_data_heaps.load();
    out["control_heaps"] = d_control_heaps.load();
    out["items_dropped_untagged"] = d_items_dropped_untagged.load();
    out["packets_dropped_too_large"] = d_packets_dropped_too_large.load();
    out["heaps_rejected"] = d_heaps_rejected.load();
    out["tags_too_wide"] = d_tags_too_wide.load();
    return out;
}

std::map<std::string, std::uint64_t> sink_impl::stats() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return collect_stats_locked();
}

std::uint64_t sink_impl::heaps() const { return stat(send_stat::heaps); }
std::uint64_t sink_impl::packets() const { return stat(send_stat::packets); }
std::uint64_t sink_impl::bytes() const { return stat(send_stat::bytes); }
std::uint64_t sink_impl::heaps_failed() const { return stat(send_stat::heaps_failed); }

std::string sink_impl::active_transport() const { return transport_name(d_transport); }

void sink_impl::publish_stats_if_due(bool force)
{
    if (d_stats_interval.count() <= 0)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now < d_next_stats)
        return;
    d_next_stats = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             d_stats_interval);
    message_port_pub(d_stats_port, stats_to_pmt(stats()));
}

} // namespace spead
} // namespace gr
