/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "source_impl.h"
#include "transport/ibv/preflight.h"
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_pcap.h>
#include <boost/thread/thread.hpp>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! Item ids remembered (names, byte order); bounds memory under hostile input. */
constexpr std::size_t max_known_items = 4096;

/*! How long work() waits for a heap before checking for a stop request. */
constexpr std::chrono::milliseconds heap_wait(100);

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

/*! Item size for the io signature; 1 when the parameters are bad (the constructor body
 * then reports them). */
int itemsize_or_one(const std::string& type, std::size_t vlen)
{
    try {
        const std::size_t size = item_type::parse(type).size() * vlen;
        return size > 0 && size < (1u << 30) ? static_cast<int>(size) : 1;
    } catch (const std::exception&) {
        return 1;
    }
}

/*! In auto mode: how the bytes of an item described by \p d are swapped to host order
 * (0: not at all). */
std::size_t auto_swap_unit(const descriptor& d, bool& little_endian)
{
    little_endian = false;
    if (!d.numpy_header.empty()) {
        const auto dtype = parse_numpy_header(d.numpy_header);
        if (!dtype)
            return 0;
        little_endian = dtype->byte_order == '<';
        if (!dtype->needs_byteswap())
            return 0;
        const std::size_t unit =
            dtype->kind == 'c' ? dtype->itemsize / 2 : dtype->itemsize;
        return unit == 2 || unit == 4 || unit == 8 ? unit : 0;
    }
    // SPEAD format fields are big-endian. Swap only a uniform list of 16/32/64-bit
    // fields; anything else is left as it is.
    if (d.format.empty() || host_is_big_endian())
        return 0;
    const std::int64_t bits = d.format.front().second;
    for (const auto& field : d.format)
        if (field.second != bits || field.first == 'c' || field.first == 'b')
            return 0;
    return bits == 16 || bits == 32 || bits == 64 ? static_cast<std::size_t>(bits / 8)
                                                  : 0;
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
                          int max_poll)
{
    return gnuradio::make_block_sptr<source_impl>(transport,
                                                  endpoints,
                                                  interface,
                                                  buffer_size,
                                                  max_packet_size,
                                                  item_type,
                                                  vlen,
                                                  payload_item,
                                                  len_tag_key,
                                                  max_heap_size,
                                                  max_heaps,
                                                  incomplete_heaps,
                                                  timestamp_item,
                                                  sample_rate,
                                                  sync_time,
                                                  byte_order,
                                                  stop_on_stop_heap,
                                                  capture_file,
                                                  queue_heaps,
                                                  stats_interval,
                                                  comp_vector,
                                                  max_poll);
}

source_impl::source_impl(const std::string& transport,
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
                         int max_poll)
    : gr::sync_block("spead_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, itemsize_or_one(item_type, vlen))),
      d_vlen(vlen),
      d_itemsize(0),
      d_max_items(0),
      d_payload_item(payload_item),
      d_len_tag_key(len_tag_key.empty() ? pmt::PMT_NIL : pmt::mp(len_tag_key)),
      d_timestamp_item(timestamp_item),
      d_sample_rate(sample_rate),
      d_sync_time(sync_time),
      d_byte_order(byte_order_mode::as_is),
      d_heap_cnt_key(pmt::mp("heap_cnt")),
      d_incomplete_key(pmt::mp("heap_incomplete")),
      d_rx_time_key(pmt::mp("rx_time")),
      d_descriptors_port(pmt::mp("descriptors")),
      d_heaps_port(pmt::mp("heaps")),
      d_stats_port(pmt::mp("stats"))
{
    try {
        d_item_type = item_type::parse(item_type);
        d_byte_order = parse_byte_order(byte_order, true);
        validate_and_configure(transport,
                               endpoints,
                               interface,
                               buffer_size,
                               max_packet_size,
                               vlen,
                               payload_item,
                               max_heap_size,
                               max_heaps,
                               incomplete_heaps,
                               timestamp_item,
                               sample_rate,
                               sync_time,
                               stop_on_stop_heap,
                               capture_file,
                               queue_heaps,
                               stats_interval,
                               comp_vector,
                               max_poll);
    } catch (const std::invalid_argument& e) {
        d_logger->error("{}", e.what());
        throw;
    }

    message_port_register_out(d_descriptors_port);
    message_port_register_out(d_heaps_port);
    message_port_register_out(d_stats_port);

    // The scheduler calls work() with at most half the output buffer, and only when at
    // least min_noutput_items fit: so any heap up to max_heap_size always fits, and
    // work() never has to return empty-handed for lack of space.
    set_min_output_buffer(static_cast<long>(2 * d_max_items));
    set_min_noutput_items(static_cast<int>(d_max_items));

    if (d_transport != transport_kind::pcap) {
        // Bind now: errors show when the block is made, and nothing sent after make()
        // is missed (a flowgraph's sink may start sending before this block starts).
        try {
            open_stream();
        } catch (const std::exception& e) {
            if (!(d_auto && d_transport == transport_kind::ibverbs)) {
                d_logger->error("cannot {} on {}: {}",
                                d_transport == transport_kind::ibverbs
                                    ? "receive over ibverbs"
                                    : "listen",
                                endpoints,
                                e.what());
                throw;
            }
            // Preflight passed but the device still refused: auto means "if it works".
            d_logger->warn("transport auto: ibverbs could not be set up on {} ({}); "
                           "using udp",
                           d_ibv_interface,
                           e.what());
            d_transport = transport_kind::udp;
            try {
                open_stream();
            } catch (const std::exception& e2) {
                d_logger->error("cannot listen on {}: {}", endpoints, e2.what());
                throw;
            }
        }
    }
}

source_impl::~source_impl() { close_stream(); }

void source_impl::validate_and_configure(const std::string& transport,
                                         const std::string& endpoints,
                                         const std::string& interface,
                                         std::size_t buffer_size,
                                         std::size_t max_packet_size,
                                         std::size_t vlen,
                                         std::uint64_t payload_item,
                                         std::size_t max_heap_size,
                                         std::size_t max_heaps,
                                         const std::string& incomplete_heaps,
                                         std::uint64_t timestamp_item,
                                         double sample_rate,
                                         double sync_time,
                                         bool stop_on_stop_heap,
                                         const std::string& capture_file,
                                         std::size_t queue_heaps,
                                         double stats_interval,
                                         int comp_vector,
                                         int max_poll)
{
    if (transport == "udp" || transport == "ibverbs" || transport == "auto")
        d_transport = transport_kind::udp; // udp or ibverbs: settled below
    else if (transport == "pcap")
        d_transport = transport_kind::pcap;
    else
        throw std::invalid_argument(
            "transport: '" + transport +
            "' is unknown; use udp (kernel sockets), ibverbs (raw-packet verbs on the "
            "NIC that owns interface), auto (ibverbs when it can be used on interface, "
            "otherwise udp) or pcap (replay capture_file)");

    if (vlen < 1 || vlen > (1u << 24))
        throw std::invalid_argument("vlen: " + std::to_string(vlen) +
                                    " is out of range; use 1 (scalar items) up to 2^24");
    d_itemsize = d_item_type.size() * vlen;

    if (payload_item != 0 &&
        (payload_item <= item_id::stream_ctrl || payload_item >= (1ull << 56)))
        throw std::invalid_argument(
            "payload_item: " + item_id_tag_name(payload_item) +
            " is a reserved or impossible item id; use 0 (every addressed item) or the "
            "id of the data item (0x07 and up, e.g. 0x1000)");

    if (max_heap_size < d_itemsize)
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(max_heap_size) +
            " bytes cannot hold one item of " + std::to_string(d_itemsize) +
            " bytes; give the largest heap you expect, in bytes (default 16 MiB)");
    d_max_items = (max_heap_size + d_itemsize - 1) / d_itemsize;
    if (d_max_items > static_cast<std::size_t>(INT_MAX / 2))
        throw std::invalid_argument(
            "max_heap_size: " + std::to_string(max_heap_size) +
            " bytes is too large for a GNU Radio buffer of this item type (2^30 items "
            "at most); lower it or use a larger item type or vlen");

    if (incomplete_heaps != "drop" && incomplete_heaps != "deliver")
        throw std::invalid_argument("incomplete_heaps: '" + incomplete_heaps +
                                    "' is not a policy; use drop (count and free) or "
                                    "deliver (zero-filled, tagged heap_incomplete)");

    if (timestamp_item != 0) {
        if (timestamp_item <= item_id::stream_ctrl || timestamp_item >= (1ull << 56))
            throw std::invalid_argument(
                "timestamp_item: " + item_id_tag_name(timestamp_item) +
                " is a reserved or impossible item id; use 0 (no rx_time) or the id of "
                "the sample counter item");
        if (!(sample_rate > 0) || !std::isfinite(sample_rate))
            throw std::invalid_argument(
                "sample_rate: " + std::to_string(sample_rate) +
                " is not a rate; give the timestamp counter's samples per second (> 0) "
                "when timestamp_item is set (rx_time = timestamp / sample_rate + "
                "sync_time)");
    }
    if (!std::isfinite(sync_time) || sync_time < 0)
        throw std::invalid_argument(
            "sync_time: " + std::to_string(sync_time) +
            " is not a UNIX time; give the time of timestamp 0 in seconds (>= 0)");
    if (!std::isfinite(stats_interval) || stats_interval < 0)
        throw std::invalid_argument(
            "stats_interval: " + std::to_string(stats_interval) +
            " is not a duration; give seconds between stats messages, >= 0 (0: none)");
    d_stats_interval = std::chrono::duration<double>(stats_interval);

    d_stream_config.set_max_heap_size(max_heap_size)
        .set_max_heaps(max_heaps)
        .set_incomplete_heaps(incomplete_heaps == "deliver"
                                  ? recv::incomplete_heaps::deliver
                                  : recv::incomplete_heaps::drop)
        .set_stop_on_stop_heap(stop_on_stop_heap)
        .set_queue_heaps(queue_heaps != 0
                             ? queue_heaps
                             : default_queue_heaps(d_transport == transport_kind::pcap,
                                                   max_heap_size));

    if (d_transport != transport_kind::pcap) {
        if (endpoints.empty())
            throw std::invalid_argument(
                "endpoints: empty; give where to listen, e.g. :7148 (every local "
                "address), 239.1.2.3:7148 or a range 239.1.2.3+3:7148");
        if (max_packet_size < 64 || max_packet_size > 65507)
            throw std::invalid_argument(
                "max_packet_size: " + std::to_string(max_packet_size) +
                " bytes is out of range; use 64 to 65507, at least the sender's packet "
                "size (default 9200 suits 9000-byte jumbo frames)");
        // Checked whatever the transport, so a flowgraph's errors do not depend on
        // the machine it runs on.
        d_ibv_config.set_max_poll(max_poll);
        d_auto = transport == "auto";
        choose_network_transport(transport, interface, buffer_size, comp_vector);
        if (d_transport == transport_kind::udp || d_auto) {
            // auto keeps the udp settings ready in case the device refuses at make().
            if (buffer_size > recv::udp_config::max_buffer_size)
                throw std::invalid_argument(
                    "buffer_size: " + std::to_string(buffer_size) +
                    " bytes is above 1 GiB; use 0 (8 MiB) or a size the kernel allows "
                    "(net.core.rmem_max)");
            d_udp_config.set_endpoints(endpoints)
                .set_interface(interface)
                .set_buffer_size(buffer_size)
                .set_max_size(max_packet_size);
        }
        if (d_transport == transport_kind::ibverbs)
            d_ibv_config.set_endpoints(endpoints)
                .set_interface(d_ibv_interface)
                .set_buffer_size(buffer_size)
                .set_max_size(max_packet_size);
    } else {
        if (capture_file.empty())
            throw std::invalid_argument(
                "capture_file: empty; the pcap transport replays a capture file (pcap "
                "or pcapng), give its path");
        std::ifstream probe(capture_file, std::ios::binary);
        if (!probe)
            throw std::invalid_argument("capture_file: cannot read '" + capture_file +
                                        "'; give the path of a pcap or pcapng file");
        d_capture_file = capture_file;
        if (!endpoints.empty()) {
            recv::udp_config ports;
            ports.set_endpoints(endpoints);
            d_capture_port = ports.get_endpoints().front().port();
            for (const auto& ep : ports.get_endpoints())
                if (ep.port() != d_capture_port)
                    throw std::invalid_argument(
                        "endpoints: a capture is replayed for one UDP port at most; "
                        "give :PORT, or nothing to replay every datagram");
        }
    }
}

void source_impl::choose_network_transport(const std::string& transport,
                                           std::string interface,
                                           std::size_t buffer_size,
                                           int comp_vector)
{
    std::string wanted = transport;
    bool interface_from_environment = false;
    const char* env_interface = std::getenv("GR_SPEAD_IBV_INTERFACE");
    if (env_interface && *env_interface) {
        if (transport == "udp") {
            wanted = "ibverbs";
            const bool given = !interface.empty();
            if (!given)
                interface = env_interface;
            interface_from_environment = true;
            d_logger->info("GR_SPEAD_IBV_INTERFACE={}: transport udp becomes ibverbs on "
                           "{}{}",
                           env_interface,
                           interface,
                           given ? " (the interface given to the block wins)" : "");
        } else if (interface.empty()) {
            interface = env_interface;
            interface_from_environment = true;
            d_logger->info("GR_SPEAD_IBV_INTERFACE={}: transport {} uses interface {}",
                           env_interface,
                           transport,
                           interface);
        }
    }
    const char* env_vector = std::getenv("GR_SPEAD_IBV_COMP_VECTOR");
    if (interface_from_environment && env_vector && *env_vector) {
        char* end = nullptr;
        errno = 0;
        const long parsed = std::strtol(env_vector, &end, 10);
        if (*end != '\0' || errno != 0 || parsed < INT_MIN || parsed > INT_MAX)
            throw std::invalid_argument(
                std::string("GR_SPEAD_IBV_COMP_VECTOR: '") + env_vector +
                "' is not an integer; set a completion vector (0, 1, ...), a negative "
                "number for busy polling, or unset it");
        comp_vector = static_cast<int>(parsed);
        d_logger->info("GR_SPEAD_IBV_COMP_VECTOR={}: comp_vector {}{}",
                       env_vector,
                       comp_vector,
                       comp_vector < 0 ? " (busy polling)" : "");
    }
    d_ibv_config.set_comp_vector(comp_vector);

    if (wanted == "udp") {
        d_transport = transport_kind::udp;
        return;
    }
    if (wanted == "ibverbs") {
        if (interface.empty())
            throw std::invalid_argument(
                "interface: empty; transport ibverbs receives through the RDMA device "
                "that owns an interface: give its netdev name (e.g. ens1f0) or IPv4 "
                "address (or set GR_SPEAD_IBV_INTERFACE), or use transport udp");
        d_transport = transport_kind::ibverbs;
        d_ibv_interface = interface;
        return;
    }
    // auto
    if (interface.empty()) {
        d_logger->warn("transport auto: no interface given, and ibverbs needs the NIC's "
                       "interface (netdev name or IPv4 address); using udp");
        d_transport = transport_kind::udp;
        return;
    }
    const auto report = ibv::preflight(interface, buffer_size);
    if (report.usable()) {
        d_logger->info("transport auto: {}; using ibverbs", report.summary());
        d_transport = transport_kind::ibverbs;
        d_ibv_interface = interface;
    } else {
        d_logger->warn("transport auto: {}; using udp", report.summary());
        d_transport = transport_kind::udp;
    }
}

void source_impl::open_stream()
{
    auto stream = std::make_unique<recv::stream>(d_stream_config);
    std::vector<std::string> bound;
    if (d_transport == transport_kind::udp) {
        auto& reader = stream->emplace_reader<recv::udp_reader>(d_udp_config);
        std::ostringstream all;
        for (const auto& ep : reader.get_bound_endpoints()) {
            std::ostringstream one;
            one << ep;
            bound.push_back(one.str());
            all << (all.tellp() > 0 ? ", " : "") << one.str();
        }
        d_logger->info("listening on {} (socket buffer {} bytes)",
                       all.str(),
                       reader.get_granted_buffer_size());
    } else if (d_transport == transport_kind::ibverbs) {
        auto& reader = stream->emplace_reader<recv::udp_ibv_reader>(d_ibv_config);
        std::ostringstream all;
        for (const auto& ep : d_ibv_config.get_endpoints()) {
            std::ostringstream one;
            one << ep;
            bound.push_back(one.str());
            all << (all.tellp() > 0 ? ", " : "") << one.str();
        }
        const int vector = reader.get_comp_vector();
        d_logger->info("receiving {} over ibverbs on {} (ring {} bytes, {})",
                       all.str(),
                       d_ibv_interface,
                       reader.get_buffer_size(),
                       vector < 0 ? std::string("busy polling")
                                  : "comp_vector " + std::to_string(vector));
    } else {
        stream->emplace_reader<recv::pcap_reader>(d_capture_file, d_capture_port);
        if (d_capture_port != 0)
            d_logger->info("replaying {} (datagrams to port {} only)",
                           d_capture_file,
                           d_capture_port);
        else
            d_logger->info("replaying {}", d_capture_file);
    }
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_stream = std::move(stream);
    d_bound = std::move(bound);
    d_heaps_output = 0;
    d_bytes_output = 0;
    d_heaps_without_payload = 0;
    d_heaps_dropped_partial_item = 0;
    d_heaps_dropped_too_large_for_output = 0;
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
    stream.reset(); // closes the sockets
}

bool source_impl::start()
{
    d_pending = recv::heap();
    d_heaps_port_connected = !pmt::is_null(message_subscribers(d_heaps_port));
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
    if (max_output_buffer(0) >= static_cast<long>(2 * d_max_items))
        set_max_output_buffer(-1);
    if (d_stats_interval.count() > 0)
        publish_stats_if_due(true);
    std::uint64_t filtered = 0, heaps_seen = 0;
    close_stream();
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        filtered = d_last_stats[recv_stat::frames_filtered];
        heaps_seen = d_last_stats[recv_stat::heaps] + d_last_stats[recv_stat::stop_heaps];
    }
    if (d_transport == transport_kind::pcap && filtered > 0 && heaps_seen == 0)
        d_logger->warn("every datagram in {} was for another port than {}; set "
                       "endpoints empty to replay them all",
                       d_capture_file,
                       d_capture_port);
    return true;
}

source_impl::item_info& source_impl::info_for(std::uint64_t id)
{
    auto it = d_items.find(id);
    if (it != d_items.end())
        return it->second;
    item_info info;
    info.tag_key = pmt::mp(item_id_tag_name(id));
    if (d_items.size() >= max_known_items) {
        // Hostile input could name endless ids: stop remembering, keep tagging.
        if (!d_items_full_warned) {
            d_logger->warn("more than {} distinct item ids seen; later ones are not "
                           "remembered (their descriptors are not used for names)",
                           max_known_items);
            d_items_full_warned = true;
        }
        d_scratch_item = std::move(info);
        return d_scratch_item;
    }
    return d_items.emplace(id, std::move(info)).first->second;
}

void source_impl::learn_descriptors(const recv::heap& h)
{
    for (const descriptor& d : h.descriptors()) {
        item_info& info = info_for(d.id);
        if (info.has_descriptor && info.desc == d)
            continue; // a repeat: nothing new to tell
        info.has_descriptor = true;
        info.desc = d;
        info.tag_key = pmt::mp(d.name.empty() ? item_id_tag_name(d.id) : d.name);
        info.auto_swap_unit = auto_swap_unit(d, info.little_endian);
        message_port_pub(d_descriptors_port, descriptor_to_pmt(d));
    }
}

std::size_t source_impl::collect_payload(const recv::heap& h)
{
    d_pieces.clear();
    std::size_t total = 0;
    for (const recv::item& it : h.items()) {
        if (it.is_immediate || it.id == item_id::null || it.id == item_id::descriptor)
            continue;
        if (d_payload_item != 0 && it.id != d_payload_item)
            continue;
        std::size_t unit = 0;
        if (d_byte_order == byte_order_mode::swap)
            unit = d_item_type.component_size();
        else if (d_byte_order == byte_order_mode::automatic) {
            auto found = d_items.find(it.id);
            if (found != d_items.end())
                unit = found->second.auto_swap_unit;
        }
        d_pieces.push_back({ it.data, it.length, unit });
        total += it.length;
        if (d_payload_item != 0)
            break; // the first item with that id
    }
    return total;
}

bool source_impl::take_heap(const recv::heap& h)
{
    learn_descriptors(h);
    const std::size_t bytes = collect_payload(h);
    if (d_heaps_port_connected)
        publish_heap_pdu(h);
    if (bytes == 0) {
        d_heaps_without_payload++;
        return false;
    }
    if (bytes % d_itemsize != 0) {
        d_heaps_dropped_partial_item++;
        d_logger->debug("heap {}: {} payload bytes are not a whole number of {}-byte "
                        "items; dropped",
                        h.cnt(),
                        bytes,
                        d_itemsize);
        return false;
    }
    d_pending_items = bytes / d_itemsize;
    return true;
}

bool source_impl::timestamp_of(const recv::heap& h, std::uint64_t& value)
{
    const recv::item* it = h.find(d_timestamp_item);
    if (!it)
        return false;
    if (it->is_immediate) {
        value = it->immediate_value;
        return true;
    }
    if (it->length == 0 || it->length > 8)
        return false;
    const auto found = d_items.find(d_timestamp_item);
    value = 0;
    if (found != d_items.end() && found->second.little_endian) {
        for (std::size_t i = it->length; i-- > 0;)
            value = (value << 8) | it->data[i];
    } else {
        for (std::size_t i = 0; i < it->length; i++)
            value = (value << 8) | it->data[i];
    }
    return true;
}

pmt::pmt_t source_impl::rx_time_of(std::uint64_t timestamp) const
{
    std::uint64_t secs;
    double frac;
    // An integer rate splits exactly; otherwise long double keeps sub-ns precision
    // for any realistic counter.
    if (d_sample_rate == std::floor(d_sample_rate) &&
        d_sample_rate < 9007199254740992.0) {
        const auto rate = static_cast<std::uint64_t>(d_sample_rate);
        secs = timestamp / rate;
        frac = static_cast<double>(timestamp % rate) / d_sample_rate;
    } else {
        const long double t = static_cast<long double>(timestamp) / d_sample_rate;
        const long double whole = std::floor(t);
        secs = static_cast<std::uint64_t>(whole);
        frac = static_cast<double>(t - whole);
    }
    const double sync_whole = std::floor(d_sync_time);
    secs += static_cast<std::uint64_t>(sync_whole);
    frac += d_sync_time - sync_whole;
    if (frac >= 1.0) {
        frac -= 1.0;
        secs++;
    }
    return pmt::make_tuple(pmt::from_uint64(secs), pmt::from_double(frac));
}

void source_impl::write_heap(const recv::heap& h, std::uint8_t* out, std::uint64_t offset)
{
    std::uint8_t* dst = out;
    for (const payload_piece& p : d_pieces) {
        if (p.swap_unit > 1)
            copy_swapped(dst, p.data, p.length, p.swap_unit);
        else
            std::memcpy(dst, p.data, p.length);
        dst += p.length;
    }

    if (!pmt::is_null(d_len_tag_key))
        add_item_tag(
            0, offset, d_len_tag_key, pmt::from_long(static_cast<long>(d_pending_items)));
    add_item_tag(0, offset, d_heap_cnt_key, pmt::from_uint64(h.cnt()));
    for (const recv::item& it : h.items()) {
        if (!it.is_immediate || it.id <= item_id::stream_ctrl)
            continue;
        add_item_tag(
            0, offset, info_for(it.id).tag_key, pmt::from_uint64(it.immediate_value));
    }
    if (!h.is_complete())
        add_item_tag(0, offset, d_incomplete_key, pmt::from_uint64(h.received_bytes()));
    std::uint64_t timestamp;
    if (d_timestamp_item != 0 && timestamp_of(h, timestamp))
        add_item_tag(0, offset, d_rx_time_key, rx_time_of(timestamp));
}

void source_impl::publish_heap_pdu(const recv::heap& h)
{
    pmt::pmt_t meta = pmt::make_dict();
    meta = pmt::dict_add(meta, d_heap_cnt_key, pmt::from_uint64(h.cnt()));
    meta = pmt::dict_add(meta, pmt::mp("heap_size"), pmt::from_uint64(h.size()));
    if (!h.is_complete())
        meta =
            pmt::dict_add(meta, d_incomplete_key, pmt::from_uint64(h.received_bytes()));
    for (const recv::item& it : h.items()) {
        if (it.id <= item_id::stream_ctrl)
            continue;
        if (it.is_immediate)
            meta = pmt::dict_add(
                meta, info_for(it.id).tag_key, pmt::from_uint64(it.immediate_value));
        else if (d_payload_item != 0 && it.id != d_payload_item)
            meta = pmt::dict_add(
                meta, info_for(it.id).tag_key, pmt::init_u8vector(it.length, it.data));
    }
    std::uint64_t timestamp;
    if (d_timestamp_item != 0 && timestamp_of(h, timestamp))
        meta = pmt::dict_add(meta, d_rx_time_key, rx_time_of(timestamp));

    std::size_t bytes = 0;
    for (const payload_piece& p : d_pieces)
        bytes += p.length;
    pmt::pmt_t payload = pmt::make_u8vector(bytes, 0);
    if (bytes > 0) {
        std::size_t len = 0;
        std::uint8_t* dst = pmt::u8vector_writable_elements(payload, len);
        for (const payload_piece& p : d_pieces) {
            std::memcpy(dst, p.data, p.length);
            dst += p.length;
        }
    }
    message_port_pub(d_heaps_port, pmt::cons(meta, payload));
}

std::uint64_t source_impl::stat(recv_stat s) const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_stream ? d_stream->get_stats()[s] : d_last_stats[s];
}

std::map<std::string, std::uint64_t> source_impl::collect_stats_locked() const
{
    const recv_stats s = d_stream ? d_stream->get_stats() : d_last_stats;
    std::map<std::string, std::uint64_t> out;
    for (const auto& kv : s.items())
        out[kv.first] = kv.second;
    // The block's own counters (the stream's list names them too, at zero).
    out["heaps_without_payload"] = d_heaps_without_payload.load();
    out["heaps_dropped_partial_item"] = d_heaps_dropped_partial_item.load();
    out["heaps_dropped_too_large_for_output"] =
        d_heaps_dropped_too_large_for_output.load();
    out["heaps_output"] = d_heaps_output.load();
    out["bytes_output"] = d_bytes_output.load();
    return out;
}

std::map<std::string, std::uint64_t> source_impl::stats() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return collect_stats_locked();
}

std::vector<std::string> source_impl::bound_endpoints() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_bound;
}

std::string source_impl::active_transport() const { return transport_name(d_transport); }

std::uint64_t source_impl::heaps() const { return stat(recv_stat::heaps); }
std::uint64_t source_impl::packets() const { return stat(recv_stat::packets); }
std::uint64_t source_impl::incomplete_heaps_evicted() const
{
    return stat(recv_stat::incomplete_heaps_evicted);
}
std::uint64_t source_impl::heaps_dropped_queue_full() const
{
    return stat(recv_stat::heaps_dropped_queue_full);
}
std::uint64_t source_impl::packets_dropped_socket_overflow() const
{
    return stat(recv_stat::packets_dropped_socket_overflow);
}

void source_impl::publish_stats_if_due(bool force)
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

int source_impl::work(int noutput_items,
                      gr_vector_const_void_star& /*input_items*/,
                      gr_vector_void_star& output_items)
{
    if (!d_stream)
        return WORK_DONE; // start() could not open the stream (logged)
    auto* out = static_cast<std::uint8_t*>(output_items[0]);
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
                    publish_stats_if_due(true);
                    return WORK_DONE; // stop heap or end of capture, queue drained
                }
            }
            if (!take_heap(d_pending)) {
                d_pending = recv::heap();
                continue;
            }
        }
        const auto items = static_cast<int>(d_pending_items);
        if (items > noutput_items - produced) {
            if (produced == 0) {
                // Only when the scheduler caps noutput_items (max_noutput_items):
                // min_noutput_items otherwise guarantees room for the largest heap.
                d_heaps_dropped_too_large_for_output++;
                d_logger->warn(
                    "heap {}: {} items do not fit the {} the scheduler offers; "
                    "dropped (do not cap max_noutput_items below {})",
                    d_pending.cnt(),
                    items,
                    noutput_items,
                    d_max_items);
                d_pending = recv::heap();
                continue;
            }
            break; // next call: a heap is never split
        }
        write_heap(d_pending,
                   out + static_cast<std::size_t>(produced) * d_itemsize,
                   nitems_written(0) + static_cast<std::uint64_t>(produced));
        produced += items;
        d_heaps_output++;
        d_bytes_output += d_pending_items * d_itemsize;
        d_pending = recv::heap();
    }
    publish_stats_if_due(false);
    return produced;
}

} // namespace spead
} // namespace gr
