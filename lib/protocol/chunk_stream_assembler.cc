/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2-style chunk stream: placement policy per heap, payload straight to its chunk.

#include "chunk_stream_assembler.h"
#include "endian.h"
#include "fragment_limit.h"
#include "payload_copy.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

chunk_stream_assembler::chunk_stream_assembler(const recv::chunk_stream_config& config,
                                               const recv::assembler_config& limits,
                                               acquire_fn acquire,
                                               ready_fn ready,
                                               head_fn head_updated)
    : d_config(config),
      d_place(config.get_place()),
      d_acquire(std::move(acquire)),
      d_ready(std::move(ready)),
      d_head_updated(std::move(head_updated)),
      d_custom(config.get_stats()),
      d_heaps(std::max<std::size_t>(limits.max_heaps, 1)),
      d_window(config.get_max_chunks(), nullptr),
      d_in_order(!limits.allow_out_of_order),
      d_nontemporal(limits.nontemporal_copies)
{
    if (!d_place)
        throw std::invalid_argument(
            "place: not set; give a placement (a C callback such as a numba cfunc, or "
            "the declarative placement by timestamp)");
    d_too_old = d_custom.size();
    d_custom.emplace_back("too_old_heaps", recv::stat_mode::counter);
    d_rejected = d_custom.size();
    d_custom.emplace_back("rejected_heaps", recv::stat_mode::counter);
    d_batch_stats.assign(stat_index(d_custom.size()), 0);

    d_items_of_place = config.get_items();
    for (std::uint64_t id : d_place->items())
        if (std::find(d_items_of_place.begin(), d_items_of_place.end(), id) ==
            d_items_of_place.end())
            d_items_of_place.push_back(id);
    d_place->bind(d_items_of_place);
    d_item_values.assign(d_items_of_place.size(), -1);
    d_extra.assign(config.get_max_heap_extra(), 0);
    d_place_data.items = d_item_values.empty() ? nullptr : d_item_values.data();
    d_place_data.extra = d_extra.empty() ? nullptr : d_extra.data();
    d_place_data.batch_stats = d_batch_stats.data();
}

chunk_stream_assembler::live_heap* chunk_stream_assembler::find(std::uint64_t cnt)
{
    for (live_heap& h : d_heaps)
        if (h.live && h.cnt == cnt)
            return &h;
    return nullptr;
}

recv::stream_chunk* chunk_stream_assembler::chunk_for(std::int64_t chunk_id)
{
    const std::uint64_t id = std::uint64_t(chunk_id);
    const std::uint64_t max = d_window.size();
    if (id < d_head)
        return nullptr;
    if (id >= d_tail) {
        if (id - d_tail >= max) {
            // so far ahead that the whole window is stale: hand it all on
            flush_until(id - (max - 1));
        }
        while (id >= d_tail) {
            if (d_tail - d_head == max)
                flush_head();
            // Whoever hands the chunk out names it (chunk_id, stream_id): a group's
            // members share chunks, so only the group may write them, under its lock.
            d_window[d_tail % max] =
                d_acquire(std::int64_t(d_tail), d_batch_stats.data());
            d_tail++;
        }
    }
    return d_window[id % max];
}

void chunk_stream_assembler::flush_head()
{
    recv::stream_chunk*& c = d_window[d_head % d_window.size()];
    // Heaps still filling it lose it: their later packets are dropped.
    for (live_heap& h : d_heaps)
        if (h.live && h.chunk && h.chunk_id == std::int64_t(d_head))
            h.chunk = nullptr;
    if (c)
        d_ready(c, d_batch_stats.data());
    c = nullptr;
    d_head++;
    if (d_head_updated)
        d_head_updated(d_head);
}

void chunk_stream_assembler::flush_until(std::uint64_t chunk_id)
{
    while (d_head < chunk_id && d_head < d_tail)
        flush_head();
    if (d_head < chunk_id) {
        d_head = d_tail = chunk_id;
        if (d_head_updated)
            d_head_updated(d_head);
    }
}

void chunk_stream_assembler::retire(live_heap& h, recv_stat incomplete_stat)
{
    d_stats[incomplete_stat]++;
    h.live = false;
}

bool chunk_stream_assembler::ask_placement(const std::uint8_t* data,
                                           const packet_header& p)
{
    recv::chunk_place_data& d = d_place_data;
    d.packet = data;
    d.packet_size = std::size_t(p.payload + p.payload_length - data);
    d.chunk_id = -1;
    d.heap_index = 0;
    d.heap_offset = 0;
    d.extra_offset = 0;
    d.extra_size = 0;
    d_place->place(&d, sizeof(d));
    if (d.chunk_id >= 0)
        return true;
    d_batch_stats[stat_index(d_rejected)]++;
    return false;
}

chunk_stream_assembler::live_heap&
chunk_stream_assembler::start_heap(const std::uint8_t* data, const packet_header& p)
{
    live_heap& h = d_heaps[d_next_evict];
    d_next_evict = (d_next_evict + 1) % d_heaps.size();
    if (h.live)
        retire(h, recv_stat::incomplete_heaps_evicted);
    h.live = true;
    h.cnt = p.heap_cnt;
    h.heap_size = p.heap_size;
    h.received = 0;
    h.ranges.clear();
    h.max_ranges = fragment_limit::choose(0, p.heap_size);
    h.chunk = nullptr;
    h.chunk_id = -1;

    if (!ask_placement(data, p))
        return h;
    const recv::chunk_place_data& d = d_place_data;
    recv::stream_chunk* c = chunk_for(d.chunk_id);
    if (!c) {
        if (std::uint64_t(d.chunk_id) < d_head)
            d_batch_stats[stat_index(d_too_old)]++;
        return h; // behind the window, or no chunk was given for it
    }
    const std::size_t presence = d_config.get_packet_presence_payload_size();
    const std::size_t flags =
        presence ? std::size_t((p.heap_size + presence - 1) / presence) : 1;
    const bool fits =
        d.heap_offset <= c->data_size && p.heap_size <= c->data_size - d.heap_offset &&
        d.heap_index < c->present_size && flags <= c->present_size - d.heap_index &&
        d.extra_size <= d_extra.size() &&
        (d.extra_size == 0 || (d.extra_offset <= c->extra_size &&
                               d.extra_size <= c->extra_size - d.extra_offset));
    if (!fits) {
        // the placement put it outside its chunk: never written out of bounds
        d_batch_stats[stat_index(d_rejected)]++;
        return h;
    }
    if (d.extra_size > 0)
        std::memcpy(c->extra + d.extra_offset, d_extra.data(), d.extra_size);
    h.chunk = c;
    h.chunk_id = d.chunk_id;
    h.heap_index = d.heap_index;
    h.heap_offset = d.heap_offset;
    return h;
}

namespace {
/*! Fills \p values (-1: absent) with the immediate items \p ids of \p p;
 * \return whether it says STREAM_CTRL stop. */
bool read_items(const packet_header& p,
                const std::vector<std::uint64_t>& ids,
                std::vector<std::int64_t>& values)
{
    std::fill(values.begin(), values.end(), -1);
    const unsigned shift = p.heap_address_bits;
    const std::uint64_t mask = (std::uint64_t(1) << shift) - 1;
    const std::uint64_t id_mask = (std::uint64_t(1) << (63 - shift)) - 1;
    bool stop = false;
    for (std::uint32_t i = 0; i < p.n_pointers; i++) {
        const std::uint64_t pointer = load_be64(p.pointers + 8 * i);
        if (!(pointer >> 63))
            continue; // addressed
        const std::uint64_t id = (pointer >> shift) & id_mask;
        const std::uint64_t value = pointer & mask;
        if (id == item_id::stream_ctrl && value == stream_ctrl::stop)
            stop = true;
        for (std::size_t j = 0; j < ids.size(); j++)
            if (ids[j] == id)
                values[j] = std::int64_t(value);
    }
    return stop;
}
} // namespace

bool chunk_stream_assembler::add_packet(const std::uint8_t* data, std::size_t size)
{
    if (d_stop_seen) {
        d_stats[recv_stat::packets_after_stop]++;
        return false;
    }
    packet_header p;
    const decode_result r = decode_packet(data, size, p);
    if (r != decode_result::ok) {
        d_stats[stat_for(r)]++;
        return true;
    }
    d_stats[recv_stat::packets]++;
    live_heap* h = find(p.heap_cnt);
    if (!h) {
        if (d_in_order && p.payload_offset != 0) {
            // In order only (as spead2 without allow_out_of_order): a heap starts with
            // its first bytes.
            d_stats[recv_stat::packets_out_of_order]++;
            return true;
        }
        if (read_items(p, d_items_of_place, d_item_values)) {
            // As spead2, the placement sees the stop heap's first packet as any
            // other's (and rejects it: rejected_heaps); the stop ends the stream.
            ask_placement(data, p);
            d_stats[recv_stat::stop_heaps]++;
            d_stop_seen = true;
            return false;
        }
        if (!p.has_heap_size) {
            // spead2's chunk streams need HEAP_SIZE too: where would it end?
            d_stats[recv_stat::packets_refused_heap]++;
            return true;
        }
        h = &start_heap(data, p);
        if (p.payload_length == p.heap_size)
            d_stats[recv_stat::single_packet_heaps]++;
    } else if (!p.has_heap_size || p.heap_size != h->heap_size) {
        d_stats[recv_stat::packets_heap_size_mismatch]++;
        return true;
    } else if (d_in_order && p.payload_offset > h->received) {
        d_stats[recv_stat::packets_out_of_order]++; // a gap: refused in order only
        return true;
    }
    if (p.payload_length == 0) {
        if (p.heap_size != 0) // a zero-size heap completes below
            return true;
    } else {
        using ir = interval_set::insert_result;
        const ir inserted = h->ranges.insert(
            p.payload_offset, p.payload_offset + p.payload_length, h->max_ranges);
        if (inserted != ir::added) {
            d_stats[inserted == ir::duplicate ? recv_stat::packets_duplicate
                    : inserted == ir::overlap ? recv_stat::packets_overlap
                                              : recv_stat::packets_over_heap_limits]++;
            return true;
        }
    }
    if (!h->chunk) {
        d_stats[recv_stat::packets_refused_heap]++;
    } else {
        copy_payload(d_nontemporal,
                     h->chunk->data + h->heap_offset + p.payload_offset,
                     p.payload,
                     p.payload_length);
        if (const std::size_t presence = d_config.get_packet_presence_payload_size())
            h->chunk->present[h->heap_index + p.payload_offset / presence] = 1;
    }
    h->received += p.payload_length;
    if (h->received == h->heap_size) {
        h->live = false;
        d_stats[recv_stat::heaps]++;
        if (h->chunk && !d_config.get_packet_presence_payload_size())
            h->chunk->present[h->heap_index] = 1;
        else if (!h->chunk && h->chunk_id >= 0)
            d_batch_stats[stat_index(d_too_old)]++; // its chunk left the window
    }
    return true;
}

void chunk_stream_assembler::flush()
{
    for (live_heap& h : d_heaps)
        if (h.live)
            retire(h, recv_stat::incomplete_heaps_flushed);
    while (d_head < d_tail)
        flush_head();
}

void chunk_stream_assembler::merge_batch_stats(std::vector<std::uint64_t>& totals)
{
    totals.resize(d_custom.size(), 0);
    for (std::size_t i = 0; i < d_custom.size(); i++) {
        std::uint64_t& staged = d_batch_stats[stat_index(i)];
        if (d_custom[i].second == recv::stat_mode::maximum)
            totals[i] = std::max(totals[i], staged);
        else
            totals[i] += staged;
        staged = 0;
    }
}

} // namespace spead
} // namespace gr
