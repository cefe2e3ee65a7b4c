/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/chunk_to_stream.h"
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

chunk_to_stream::chunk_to_stream(const chunk_to_stream_config& config,
                                 std::unique_ptr<heap_to_stream> control)
    : d_config(config),
      d_rx_time_key(pmt::mp("rx_time")),
      d_missing_key(pmt::mp("heap_missing")),
      d_incomplete_key(pmt::mp("heap_incomplete")),
      d_source_id(pmt::mp("spead_source")),
      d_control(std::move(control))
{
    if (config.item_size == 0 || config.outputs == 0)
        throw std::invalid_argument("chunk_to_stream: item_size and outputs must be > 0");
}

void chunk_to_stream::reset_chunk()
{
    d_entry = recv::chunk_entry();
    d_taken = false;
    d_offset = d_total = 0;
    d_retag = true;
    d_control_heap = recv::heap();
}

void chunk_to_stream::reset()
{
    reset_chunk();
    if (d_control)
        d_control->reset();
    d_bytes_output = 0;
}

void chunk_to_stream::add_counters(std::map<std::string, std::uint64_t>& stats) const
{
    if (d_control)
        d_control->add_counters(stats);
    stats["bytes_output"] = d_bytes_output.load();
    stats["items_zero_filled"] = stats["bytes_zero_filled"] / d_config.item_size;
}

std::size_t chunk_to_stream::min_output_items() const
{
    // A heap may be split, so no size is needed for correctness; but with GNU
    // Radio's default 32 KiB buffers every work() (and the downstream block's) moves
    // a few KiB, and the scheduler's hand-offs cost more CPU than the data.
    constexpr std::size_t per_output = std::size_t(2) << 20;
    constexpr std::size_t all_outputs = std::size_t(32) << 20;
    constexpr std::size_t least = std::size_t(256) << 10;
    const std::size_t bytes =
        std::max(least, std::min(per_output, all_outputs / d_config.outputs));
    return std::max<std::size_t>(1, bytes / d_config.item_size);
}

void chunk_to_stream::take_control_heaps(recv::stream& stream, source_output& out)
{
    // Descriptors and stream control: their messages go out, they give no items.
    while (stream.try_pop(d_control_heap)) {
        if (d_control)
            d_control->take(d_control_heap, out);
        d_control_heap = recv::heap();
    }
}

source_mapping::result
chunk_to_stream::fill(recv::stream& stream, const output_room& room, source_output& out)
{
    std::size_t produced = 0;
    while (produced < room.max_items) {
        if (!d_taken) {
            take_control_heaps(stream, out);
            // Once items are written, the rest of this call takes what is there.
            recv::chunk_entry entry;
            const auto popped = next(stream,
                                     entry,
                                     produced == 0,
                                     room.wait,
                                     &recv::stream::pop_chunk,
                                     &recv::stream::try_pop_chunk);
            if (popped == recv::stream::pop_result::timeout) {
                if (produced > 0)
                    break;
                return { status::timeout, 0 };
            }
            if (popped == recv::stream::pop_result::stopped) {
                take_control_heaps(stream, out);
                return { status::stopped, 0 };
            }
            take(std::move(entry), stream.get_heap_bytes());
        }
        const std::size_t n = write(*room.outputs,
                                    produced,
                                    room.max_items - produced,
                                    room.first_item + produced,
                                    out.tags);
        produced += n;
        d_bytes_output += n * d_config.item_size * d_config.outputs;
        if (chunk_done())
            stream.return_chunk(give_back());
    }
    return { status::filled, produced };
}

void chunk_to_stream::take(recv::chunk_entry&& entry, std::size_t heap_bytes)
{
    d_entry = std::move(entry);
    d_taken = true;
    d_items_per_heap = heap_bytes / d_config.item_size;
    d_total = d_entry.positions * d_items_per_heap;
    d_offset = 0;
}

std::unique_ptr<recv::chunk> chunk_to_stream::give_back()
{
    d_taken = false;
    return std::move(d_entry.data);
}

void chunk_to_stream::add(std::vector<output_tag>& tags,
                          unsigned port,
                          std::uint64_t offset,
                          const pmt::pmt_t& key,
                          const pmt::pmt_t& value) const
{
    gr::tag_t tag;
    tag.offset = offset;
    tag.key = key;
    tag.value = value;
    tag.srcid = d_source_id;
    tags.push_back({ port, tag });
}

void chunk_to_stream::tag_position(std::size_t p,
                                   std::uint64_t at_item,
                                   std::vector<output_tag>& tags)
{
    const recv::chunk* c = d_entry.data.get();
    const unsigned outputs = unsigned(d_config.outputs);
    if (!c) {
        // Lost positions: one zero-filled run on every output; what follows them
        // starts afresh (rx_time), since what happened there is unknown.
        if (p == 0)
            for (unsigned s = 0; s < outputs; s++)
                add(tags,
                    s,
                    at_item,
                    d_missing_key,
                    pmt::from_uint64(std::uint64_t(d_total)));
        d_retag = true;
        return;
    }
    if ((d_retag || c->at(p).discontinuity) && d_config.rx_time) {
        const pmt::pmt_t when = d_config.rx_time(c->at(p).timestamp);
        for (unsigned s = 0; s < outputs; s++)
            add(tags, s, at_item, d_rx_time_key, when);
    }
    d_retag = false;
    for (unsigned s = 0; s < outputs; s++) {
        const recv::position_fill fill = c->fill(p, s);
        if (fill == recv::position_fill::missing &&
            (p == 0 || c->fill(p - 1, s) != recv::position_fill::missing)) {
            std::size_t end = p + 1;
            while (end < d_entry.positions &&
                   c->fill(end, s) == recv::position_fill::missing)
                end++;
            add(tags,
                s,
                at_item,
                d_missing_key,
                pmt::from_uint64(std::uint64_t((end - p) * d_items_per_heap)));
        } else if (fill == recv::position_fill::incomplete) {
            add(tags, s, at_item, d_incomplete_key, pmt::from_uint64(c->received(p, s)));
        }
    }
}

std::size_t chunk_to_stream::write(const gr_vector_void_star& outputs,
                                   std::size_t at,
                                   std::size_t max_items,
                                   std::uint64_t first_item,
                                   std::vector<output_tag>& tags)
{
    if (!d_taken || d_items_per_heap == 0)
        return 0;
    const std::size_t n = std::min(max_items, d_total - d_offset);
    const std::size_t item = d_config.item_size;
    const recv::chunk* c = d_entry.data.get();
    for (std::size_t s = 0; s < d_config.outputs; s++) {
        std::uint8_t* dst = static_cast<std::uint8_t*>(outputs[s]) + at * item;
        if (!c)
            std::memset(dst, 0, n * item);
        else if (d_config.swap_unit > 1)
            copy_swapped(dst, c->data(s) + d_offset * item, n * item, d_config.swap_unit);
        else
            std::memcpy(dst, c->data(s) + d_offset * item, n * item);
    }
    // Tags go on the positions that start within what was written.
    for (std::size_t p = (d_offset + d_items_per_heap - 1) / d_items_per_heap;
         p * d_items_per_heap < d_offset + n;
         p++)
        tag_position(p, first_item + (p * d_items_per_heap - d_offset), tags);
    d_offset += n;
    return n;
}

} // namespace spead
} // namespace gr
