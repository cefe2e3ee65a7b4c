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
    : sink_mapping(config, std::move(logger)),
      d_config(config),
      d_len_tag_key(config.len_tag_key.empty() ? pmt::PMT_NIL
                                               : pmt::mp(config.len_tag_key)),
      d_heap_cnt_key(pmt::mp("heap_cnt")),
      d_next_cnt(config.cnt_start),
      d_needed(config.len_tag_key.empty() ? config.heap_items : 1)
{
}

void stream_to_heap::reset()
{
    sink_mapping::reset();
    d_next_cnt = d_config.cnt_start;
    d_skip = 0;
    d_gather_left = 0; // a packet cut short by the end of a run is not sent
    d_gather.reset();
    d_items_dropped_untagged = 0;
    d_packets_dropped_too_large = 0;
    d_tags_too_wide = 0;
}

std::map<std::string, std::uint64_t> stream_to_heap::counters() const
{
    auto out = sink_mapping::counters();
    out["items_dropped_untagged"] = d_items_dropped_untagged.load();
    out["packets_dropped_too_large"] = d_packets_dropped_too_large.load();
    out["tags_too_wide"] = d_tags_too_wide.load();
    return out;
}

std::size_t stream_to_heap::fixed_heap_items() const
{
    return pmt::is_null(d_len_tag_key) ? d_config.heap_items : 0;
}

std::size_t stream_to_heap::send(const sink_input& in, send_slots& out)
{
    const auto* data = static_cast<const std::uint8_t*>((*in.items)[0]);
    const auto available = static_cast<std::size_t>((*in.available)[0]);
    std::size_t done = handed(in); // still sent from the input: go on after them
    d_tags.clear();
    in.tags(0, in.first + done, in.first + available, pmt::PMT_NIL, d_tags);
    std::size_t tag = 0; // first tag at or after the next item
    while (done < available) {
        const std::uint64_t at = in.first + done;
        while (tag < d_tags.size() && d_tags[tag].offset < at)
            tag++;
        const auto next = frame(d_tags, tag, at, available - done, in.capacity);
        if (next.what == action::wait)
            break;
        const std::uint8_t* part = data + done * item_size();
        if (next.what == action::send) {
            read_tags(d_tags, tag, next.end_tag, in.read_descriptors);
            send_data_heap(out,
                           { part, next.items, at },
                           in,
                           data_heaps() % out.substreams(),
                           [this, &next](send::heap& h,
                                         const std::uint8_t* payload,
                                         std::uint64_t& cnt) {
                               return build_data_heap(h, payload, next.items, cnt);
                           });
            tag = next.end_tag;
        } else if (next.what == action::begin || next.what == action::more) {
            gather(out, part, next, tag, in.read_descriptors);
            tag = next.end_tag;
        }
        done += next.items;
    }
    return settle(in, done, out);
}

void stream_to_heap::gather(send_slots& out,
                            const std::uint8_t* part,
                            const action& next,
                            std::size_t first_tag,
                            const std::function<void()>& on_unknown_name)
{
    read_tags(
        d_tags, first_tag, next.end_tag, on_unknown_name, next.what == action::more);
    if (next.what == action::begin)
        d_gather.emplace(begin_data_heap(out, d_gather_items));
    copy_payload(d_gather->payload + d_gather_done * item_size(), part, next.items);
    d_gather_done += next.items;
    if (gathering())
        return;
    const std::size_t items = d_gather_items;
    finish_data_heap(
        out,
        *d_gather,
        d_gather->payload,
        data_heaps() % out.substreams(),
        [this, items](send::heap& h, const std::uint8_t* payload, std::uint64_t& cnt) {
            return build_data_heap(h, payload, items, cnt);
        });
    d_gather.reset();
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
    if (d_gather_left > 0) {
        const std::size_t n = std::min<std::uint64_t>(d_gather_left, available);
        d_gather_left -= n;
        return { action::more, n, tags_before(tags, first_tag, at + n) };
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
        if (std::uint64_t(len) * d_item_size > d_config.flavour.max_address()) {
            d_packets_dropped_too_large++;
            if (d_logger && d_packets_dropped_too_large == 1)
                d_logger->error(
                    "a packet of {} items ({} bytes) is larger than a {} heap can "
                    "address; dropped, and so is every such packet after it (all "
                    "counted in packets_dropped_too_large). Check the '{}' tags "
                    "upstream, or use flavour 64-48",
                    len,
                    std::uint64_t(len) * d_item_size,
                    d_config.flavour.name(),
                    d_config.len_tag_key);
            const std::size_t n = std::min(len, available);
            d_skip = len - n;
            return { action::drop, n, first_tag };
        }
        if (len > capacity) {
            // The scheduler can never hand over the whole packet: take it in parts
            // (the payload is copied into its heap's buffer either way).
            const std::size_t n = std::min(len, available);
            d_gather_items = len;
            d_gather_done = 0;
            d_gather_left = len - n;
            return { action::begin, n, tags_before(tags, first_tag, at + n) };
        }
    }
    if (available < len) {
        d_needed = len; // the scheduler calls again when the whole packet is there
        return { action::wait, 0, first_tag };
    }
    return { action::send, len, tags_before(tags, first_tag, at + len) };
}

std::size_t stream_to_heap::tags_before(const std::vector<gr::tag_t>& tags,
                                        std::size_t first,
                                        std::uint64_t end)
{
    while (first < tags.size() && tags[first].offset < end)
        first++;
    return first;
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
        id = id_of_name(name);
        if (id == 0 && on_unknown_name) {
            on_unknown_name();
            id = id_of_name(name);
        }
        if (id == 0) {
            warn_once("tag " + name,
                      "tag '" + name +
                          "' ignored: no descriptor names it (connect a spead.source's "
                          "descriptors port, or use an 0x... key)");
            return 0;
        }
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
                               const std::function<void()>& on_unknown_name,
                               bool more)
{
    if (!more) {
        d_has_cnt = false;
        d_immediates.clear();
    }
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

// ---- data heaps
// ------------------------------------------------------------------------

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
