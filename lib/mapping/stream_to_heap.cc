/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/stream_to_heap.h"
#include <gnuradio/spead/item_ids.h>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

stream_to_heap::stream_to_heap(const stream_to_heap_config& config, gr::logger_ptr logger)
    : d_config(config),
      d_item_size(config.type.size() * config.vlen),
      d_logger(std::move(logger)),
      d_len_tag_key(config.len_tag_key.empty() ? pmt::PMT_NIL
                                               : pmt::mp(config.len_tag_key)),
      d_heap_cnt_key(pmt::mp("heap_cnt")),
      d_next_cnt(config.cnt_start),
      d_next_control_cnt(config.flavour.max_address()),
      d_needed(config.len_tag_key.empty() ? config.heap_items : 1)
{
    if (!d_config.payload_name.empty())
        d_name_to_id[d_config.payload_name] = d_config.payload_item;
}

void stream_to_heap::reset()
{
    d_next_cnt = d_config.cnt_start;
    d_next_control_cnt = d_config.flavour.max_address();
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

std::map<std::string, std::uint64_t> stream_to_heap::counters() const
{
    return { { "data_heaps", d_data_heaps.load() },
             { "control_heaps", d_control_heaps.load() },
             { "items_dropped_untagged", d_items_dropped_untagged.load() },
             { "packets_dropped_too_large", d_packets_dropped_too_large.load() },
             { "heaps_rejected", d_heaps_rejected.load() },
             { "tags_too_wide", d_tags_too_wide.load() } };
}

void stream_to_heap::warn_once(const std::string& what, const std::string& message)
{
    if (d_warned.insert(what).second && d_logger)
        d_logger->warn("{}", message);
}

// ---- framing
// ---------------------------------------------------------------------------

stream_to_heap::action stream_to_heap::frame(const std::vector<gr::tag_t>& tags,
                                             std::size_t first_tag,
                                             std::uint64_t at,
                                             std::size_t available,
                                             std::size_t capacity)
{
    const bool tagged = !pmt::is_null(d_len_tag_key);
    d_needed = tagged ? 1 : d_config.heap_items;
    if (d_skip > 0) {
        const std::size_t n = std::min<std::uint64_t>(d_skip, available);
        d_skip -= n;
        return { action::drop, n, first_tag };
    }
    std::size_t len = d_config.heap_items;
    if (tagged) {
        // The packet's length: the (last) length tag on this item.
        long tagged_len = -1;
        std::size_t next_len_tag = tags.size();
        for (std::size_t t = first_tag; t < tags.size(); t++) {
            if (!pmt::eqv(tags[t].key, d_len_tag_key))
                continue;
            if (tags[t].offset == at) {
                tagged_len =
                    pmt::is_integer(tags[t].value)
                        ? pmt::to_long(tags[t].value)
                        : static_cast<long>(pmt_to_uint64(tags[t].value).value_or(0));
            } else {
                next_len_tag = t;
                break;
            }
        }
        if (tagged_len <= 0) {
            // Items outside any packet: dropped up to the next length tag.
            const std::size_t until =
                next_len_tag < tags.size()
                    ? static_cast<std::size_t>(tags[next_len_tag].offset - at)
                    : available;
            d_items_dropped_untagged += until;
            warn_once("untagged",
                      "items without a '" + d_config.len_tag_key +
                          "' length tag dropped (counted in items_dropped_untagged); "
                          "feed the sink a tagged stream, or set len_tag_key empty and "
                          "heap_items");
            return { action::drop, until, first_tag };
        }
        len = static_cast<std::size_t>(tagged_len);
        if (len > capacity) {
            if (d_logger)
                d_logger->error(
                    "a packet of {} items is longer than the {} items the upstream "
                    "buffer can hold; dropped (packets_dropped_too_large). Set the "
                    "upstream block's minimum output buffer to at least {} items",
                    len,
                    capacity,
                    2 * len);
            d_packets_dropped_too_large++;
            const std::size_t n = std::min(len, available);
            d_skip = len - n;
            return { action::drop, n, first_tag };
        }
    }
    if (available < len) {
        d_needed = len; // the scheduler calls again when the whole packet is there
        return { action::wait, 0, first_tag };
    }
    std::size_t end_tag = first_tag;
    while (end_tag < tags.size() && tags[end_tag].offset < at + len)
        end_tag++;
    return { action::send, len, end_tag };
}

// ---- tags
// ------------------------------------------------------------------------------

std::uint64_t
stream_to_heap::item_id_for_key(const pmt::pmt_t& key,
                                const std::function<void()>& on_unknown_name)
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
        if (it == d_name_to_id.end() && on_unknown_name) {
            on_unknown_name();
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
    if (id == d_config.payload_item)
        return 0;
    if (id <= item_id::stream_ctrl || id > d_config.flavour.max_item_id()) {
        warn_once("tag " + name,
                  "tag '" + name + "' ignored: item id " + item_id_tag_name(id) +
                      " is reserved or does not fit " + d_config.flavour.name());
        return 0;
    }
    return id;
}

void stream_to_heap::read_tags(const std::vector<gr::tag_t>& tags,
                               std::size_t first,
                               std::size_t end,
                               const std::function<void()>& on_unknown_name)
{
    d_has_cnt = false;
    d_immediates.clear();
    for (std::size_t t = first; t < end; t++) {
        const gr::tag_t& tag = tags[t];
        if (pmt::eqv(tag.key, d_len_tag_key))
            continue;
        if (pmt::eqv(tag.key, d_heap_cnt_key)) {
            if (auto v = pmt_to_uint64(tag.value)) {
                d_cnt = *v;
                d_has_cnt = true;
            } else {
                warn_once("heap_cnt value",
                          "heap_cnt tag with a value that is not a non-negative integer "
                          "ignored");
            }
            continue;
        }
        const std::uint64_t id = item_id_for_key(tag.key, on_unknown_name);
        if (id == 0)
            continue;
        const std::string name = pmt::symbol_to_string(tag.key);
        const auto value = pmt_to_uint64(tag.value);
        if (!value) {
            warn_once("value " + name,
                      "tag '" + name +
                          "' ignored: its value is not a non-negative "
                          "integer");
            continue;
        }
        if (*value > d_config.flavour.max_address()) {
            // An addressed item instead would become payload at a receiver that takes
            // every addressed item: drop the tag, count it, say how to avoid it.
            d_tags_too_wide++;
            warn_once("wide " + name,
                      "tag '" + name + "' value " + std::to_string(*value) +
                          " does not fit a " + d_config.flavour.name() +
                          " immediate; not sent (counted in tags_too_wide). Use flavour "
                          "64-48 for values below 2^48");
            continue;
        }
        d_immediates.emplace_back(id, *value);
    }
}

// ---- descriptors
// -----------------------------------------------------------------------

void stream_to_heap::learn_descriptor(const descriptor& d)
{
    if (d.id == d_config.payload_item)
        return; // the sink describes its own payload
    if (d.id <= item_id::stream_ctrl || d.id > d_config.flavour.max_item_id()) {
        warn_once("descriptor " + item_id_tag_name(d.id),
                  "descriptor for " + item_id_tag_name(d.id) + " (" + d.name +
                      ") ignored: the id is reserved or does not fit " +
                      d_config.flavour.name());
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
    if (!d.name.empty() && d.name != d_config.payload_name)
        d_name_to_id[d.name] = d.id;
    d_descriptors_dirty = true;
}

bool stream_to_heap::descriptors_due(std::size_t items)
{
    if (!d_config.payload_name.empty() && items != d_described_items) {
        d_described_items = items;
        d_descriptors_dirty = true;
    }
    return !d_run_started || d_descriptors_dirty ||
           (d_config.descriptor_interval > 0 &&
            d_heaps_since_descriptors >= d_config.descriptor_interval);
}

void stream_to_heap::build_control_heap(send::heap& h, bool descriptors, bool stop)
{
    if (descriptors && !d_run_started)
        h.add_start();
    if (descriptors) {
        if (!d_config.payload_name.empty()) {
            descriptor d;
            d.id = d_config.payload_item;
            d.name = d_config.payload_name;
            d.description = d_config.payload_description;
            const bool big =
                (d_config.byte_order == byte_order_mode::swap) != host_is_big_endian();
            d.numpy_header = make_numpy_header(
                d_config.type.numpy_descr(big),
                d_config.type.numpy_shape(d_described_items, d_config.vlen));
            h.add_descriptor(d);
        }
        for (const auto& kv : d_descriptors)
            h.add_descriptor(kv.second);
        d_run_started = true;
        d_descriptors_dirty = false;
        d_heaps_since_descriptors = 0;
    }
    if (stop)
        h.add_end();
}

// ---- data heaps
// ------------------------------------------------------------------------

void stream_to_heap::copy_payload(std::uint8_t* dst,
                                  const std::uint8_t* src,
                                  std::size_t items) const
{
    const std::size_t bytes = items * d_item_size;
    if (d_config.byte_order == byte_order_mode::swap)
        copy_swapped(dst, src, bytes, d_config.type.component_size());
    else
        std::memcpy(dst, src, bytes);
}

void stream_to_heap::heap_rejected(const std::string& why)
{
    d_heaps_rejected++;
    warn_once("rejected " + why,
              "heap not sent: " + why + " (counted in heaps_rejected)");
}

bool stream_to_heap::build_data_heap(send::heap& h,
                                     const std::uint8_t* payload,
                                     std::size_t items,
                                     std::uint64_t& cnt)
{
    try {
        for (const auto& [id, value] : d_immediates)
            h.add_immediate(id, value);
        // Never an immediate, even when tiny: a receiver takes immediates as metadata.
        h.add_item(d_config.payload_item, payload, items * d_item_size, false);
    } catch (const std::invalid_argument& e) {
        // The ids and values were checked by read_tags(); a last line of defence.
        heap_rejected(e.what());
        return false;
    }
    if (d_has_cnt) {
        cnt = d_cnt;
    } else {
        cnt = d_next_cnt;
        d_next_cnt += d_config.cnt_step;
    }
    if (cnt > d_config.flavour.max_address()) {
        d_heaps_rejected++;
        warn_once("cnt range",
                  "heap cnt " + std::to_string(cnt) + " does not fit " +
                      d_config.flavour.name() +
                      "; such heaps are not sent (counted in heaps_rejected)");
        return false;
    }
    return true;
}

} // namespace spead
} // namespace gr
