/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/heap_to_stream.h"
#include "mapping/type_check.h"
#include <gnuradio/spead/item_ids.h>
#include <cmath>
#include <cstring>

namespace gr {
namespace spead {

namespace {

/*! Item ids remembered (names, byte order); bounds memory under hostile input. */
constexpr std::size_t max_known_items = 4096;

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

heap_to_stream::heap_to_stream(const heap_to_stream_config& config, gr::logger_ptr logger)
    : d_config(config),
      d_item_size(config.type.size() * config.vlen),
      d_logger(std::move(logger)),
      d_len_tag_key(config.len_tag_key.empty() ? pmt::PMT_NIL
                                               : pmt::mp(config.len_tag_key)),
      d_heap_cnt_key(pmt::mp("heap_cnt")),
      d_incomplete_key(pmt::mp("heap_incomplete")),
      d_rx_time_key(pmt::mp("rx_time")),
      d_heap_size_key(pmt::mp("heap_size"))
{
}

void heap_to_stream::reset()
{
    d_pending = recv::heap();
    d_without_payload = 0;
    d_partial_item = 0;
    d_too_large_for_output = 0;
    d_heaps_output = 0;
    d_bytes_output = 0;
    d_type_mismatches = 0;
}

void heap_to_stream::add_counters(std::map<std::string, std::uint64_t>& stats) const
{
    stats["heaps_without_payload"] = d_without_payload.load();
    stats["heaps_dropped_partial_item"] = d_partial_item.load();
    stats["heaps_dropped_too_large_for_output"] = d_too_large_for_output.load();
    stats["heaps_output"] = d_heaps_output.load();
    stats["bytes_output"] = d_bytes_output.load();
    stats["descriptors_type_mismatch"] = d_type_mismatches.load();
}

source_mapping::result
heap_to_stream::fill(recv::stream& stream, const output_room& room, source_output& out)
{
    auto* dst = static_cast<std::uint8_t*>((*room.outputs)[0]);
    const std::size_t max_items = room.max_items;
    std::size_t produced = 0;
    for (;;) {
        if (!d_pending) {
            // Once items are written, the rest of this call takes what is there.
            const auto popped = next(stream,
                                     d_pending,
                                     produced == 0,
                                     room.wait,
                                     &recv::stream::pop,
                                     &recv::stream::try_pop);
            if (popped != recv::stream::pop_result::heap) {
                if (produced > 0)
                    break;
                // stopped: a stop heap, the end of a capture or a reader failure
                // (logged and counted by the stream), with every queued heap output.
                return { popped == recv::stream::pop_result::timeout ? status::timeout
                                                                     : status::stopped,
                         0 };
            }
            if (take(d_pending, out) != verdict::output) {
                d_pending = recv::heap();
                continue;
            }
        }
        if (d_items > max_items - produced) {
            if (produced > 0)
                break; // next call: a heap is never split
            // Only when the scheduler caps noutput_items (max_noutput_items):
            // min_noutput_items otherwise guarantees room for the largest heap.
            d_too_large_for_output++;
            if (d_logger)
                d_logger->warn("heap {}: {} items do not fit the {} the scheduler "
                               "offers; dropped (do not cap max_noutput_items below {})",
                               d_pending.cnt(),
                               d_items,
                               max_items,
                               d_config.max_items);
            d_pending = recv::heap();
            continue;
        }
        d_tags.clear();
        write(
            d_pending, dst + produced * d_item_size, room.first_item + produced, d_tags);
        for (gr::tag_t& t : d_tags)
            out.tags.push_back({ 0, std::move(t) });
        produced += d_items;
        d_heaps_output++;
        d_bytes_output += d_items * d_item_size;
        d_pending = recv::heap();
    }
    return { status::filled, produced };
}

heap_to_stream::item_info& heap_to_stream::info_for(std::uint64_t id)
{
    auto it = d_known.find(id);
    if (it != d_known.end())
        return it->second;
    item_info info;
    info.tag_key = pmt::mp(item_id_tag_name(id));
    if (d_known.size() >= max_known_items) {
        // Hostile input could name endless ids: stop remembering, keep tagging.
        if (!d_known_full_warned && d_logger)
            d_logger->warn("more than {} distinct item ids seen; later ones are not "
                           "remembered (their descriptors are not used for names)",
                           max_known_items);
        d_known_full_warned = true;
        d_scratch_item = std::move(info);
        return d_scratch_item;
    }
    return d_known.emplace(id, std::move(info)).first->second;
}

std::size_t heap_to_stream::collect_payload(const recv::heap& h)
{
    d_pieces.clear();
    std::size_t total = 0;
    for (const recv::item& it : h.items()) {
        if (it.is_immediate || it.id == item_id::null || it.id == item_id::descriptor)
            continue;
        if (d_config.payload_item != 0 && it.id != d_config.payload_item)
            continue;
        std::size_t unit = 0;
        if (d_config.byte_order == byte_order_mode::swap)
            unit = d_config.type.component_size();
        else if (d_config.byte_order == byte_order_mode::automatic) {
            const auto found = d_known.find(it.id);
            if (found != d_known.end())
                unit = found->second.auto_swap_unit;
        }
        d_pieces.push_back({ it.data, it.length, unit });
        total += it.length;
        if (d_config.payload_item != 0)
            break; // the first item with that id
    }
    return total;
}

heap_to_stream::verdict heap_to_stream::take(const recv::heap& h, source_output& out)
{
    const verdict v = take(h, out.descriptors);
    if (out.want_heaps)
        out.heaps.push_back(pdu(h));
    return v;
}

heap_to_stream::verdict heap_to_stream::take(const recv::heap& h,
                                             std::vector<pmt::pmt_t>& new_descriptors)
{
    for (const descriptor& d : h.descriptors()) {
        item_info& info = info_for(d.id);
        if (info.has_descriptor && info.desc == d)
            continue; // a repeat: nothing new to tell
        info.has_descriptor = true;
        info.desc = d;
        info.tag_key = pmt::mp(d.name.empty() ? item_id_tag_name(d.id) : d.name);
        info.auto_swap_unit = auto_swap_unit(d, info.little_endian);
        new_descriptors.push_back(descriptor_to_pmt(d));
        check_type(d);
    }
    const std::size_t bytes = collect_payload(h);
    d_items = 0;
    if (bytes == 0) {
        d_without_payload++;
        return verdict::no_payload;
    }
    if (bytes % d_item_size != 0) {
        d_partial_item++;
        if (d_logger)
            d_logger->debug("heap {}: {} payload bytes are not a whole number of {}-byte "
                            "items; dropped",
                            h.cnt(),
                            bytes,
                            d_item_size);
        return verdict::partial_item;
    }
    d_items = bytes / d_item_size;
    return verdict::output;
}

void heap_to_stream::check_type(const descriptor& d)
{
    if ((d_config.payload_item != 0 && d.id != d_config.payload_item) ||
        d.id == d_config.timestamp_item)
        return; // not the stream payload
    const std::string why = type_contradiction(d_config.type, d);
    if (why.empty())
        return;
    if (d_type_mismatches++ == 0 && d_logger)
        d_logger->warn("{} (counted in descriptors_type_mismatch; said once)", why);
}

bool heap_to_stream::timestamp_of(const recv::heap& h, std::uint64_t& value) const
{
    const recv::item* it = h.find(d_config.timestamp_item);
    if (!it)
        return false;
    if (it->is_immediate) {
        value = it->immediate_value;
        return true;
    }
    if (it->length == 0 || it->length > 8)
        return false;
    const auto found = d_known.find(d_config.timestamp_item);
    value = 0;
    if (found != d_known.end() && found->second.little_endian) {
        for (std::size_t i = it->length; i-- > 0;)
            value = (value << 8) | it->data[i];
    } else {
        for (std::size_t i = 0; i < it->length; i++)
            value = (value << 8) | it->data[i];
    }
    return true;
}

pmt::pmt_t rx_time_of(std::uint64_t timestamp, double rate, double sync_time)
{
    std::uint64_t secs;
    double frac;
    // An integer rate splits exactly; otherwise long double keeps sub-ns precision
    // for any realistic counter.
    if (rate == std::floor(rate) && rate < 9007199254740992.0) {
        const auto whole_rate = static_cast<std::uint64_t>(rate);
        secs = timestamp / whole_rate;
        frac = static_cast<double>(timestamp % whole_rate) / rate;
    } else {
        const long double t = static_cast<long double>(timestamp) / rate;
        const long double whole = std::floor(t);
        secs = static_cast<std::uint64_t>(whole);
        frac = static_cast<double>(t - whole);
    }
    const double sync_whole = std::floor(sync_time);
    secs += static_cast<std::uint64_t>(sync_whole);
    frac += sync_time - sync_whole;
    if (frac >= 1.0) {
        frac -= 1.0;
        secs++;
    }
    return pmt::make_tuple(pmt::from_uint64(secs), pmt::from_double(frac));
}

void heap_to_stream::write(const recv::heap& h,
                           std::uint8_t* out,
                           std::uint64_t first_item,
                           std::vector<gr::tag_t>& tags)
{
    std::uint8_t* dst = out;
    for (const payload_piece& p : d_pieces) {
        if (p.swap_unit > 1)
            copy_swapped(dst, p.data, p.length, p.swap_unit);
        else
            std::memcpy(dst, p.data, p.length);
        dst += p.length;
    }

    const auto tag = [&](const pmt::pmt_t& key, const pmt::pmt_t& value) {
        gr::tag_t t;
        t.offset = first_item;
        t.key = key;
        t.value = value;
        tags.push_back(std::move(t));
    };
    if (!pmt::is_null(d_len_tag_key))
        tag(d_len_tag_key, pmt::from_long(static_cast<long>(d_items)));
    tag(d_heap_cnt_key, pmt::from_uint64(h.cnt()));
    for (const recv::item& it : h.items()) {
        if (!it.is_immediate || it.id <= item_id::stream_ctrl)
            continue;
        tag(info_for(it.id).tag_key, pmt::from_uint64(it.immediate_value));
    }
    if (!h.is_complete())
        tag(d_incomplete_key, pmt::from_uint64(h.received_bytes()));
    std::uint64_t timestamp;
    if (d_config.timestamp_item != 0 && timestamp_of(h, timestamp))
        tag(d_rx_time_key, rx_time(timestamp));
}

pmt::pmt_t heap_to_stream::pdu(const recv::heap& h)
{
    pmt::pmt_t meta = pmt::make_dict();
    meta = pmt::dict_add(meta, d_heap_cnt_key, pmt::from_uint64(h.cnt()));
    meta = pmt::dict_add(meta, d_heap_size_key, pmt::from_uint64(h.size()));
    if (!h.is_complete())
        meta =
            pmt::dict_add(meta, d_incomplete_key, pmt::from_uint64(h.received_bytes()));
    for (const recv::item& it : h.items()) {
        if (it.id <= item_id::stream_ctrl)
            continue;
        if (it.is_immediate)
            meta = pmt::dict_add(
                meta, info_for(it.id).tag_key, pmt::from_uint64(it.immediate_value));
        else if (d_config.payload_item != 0 && it.id != d_config.payload_item)
            meta = pmt::dict_add(
                meta, info_for(it.id).tag_key, pmt::init_u8vector(it.length, it.data));
    }
    std::uint64_t timestamp;
    if (d_config.timestamp_item != 0 && timestamp_of(h, timestamp))
        meta = pmt::dict_add(meta, d_rx_time_key, rx_time(timestamp));

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
    return pmt::cons(meta, payload);
}

} // namespace spead
} // namespace gr
