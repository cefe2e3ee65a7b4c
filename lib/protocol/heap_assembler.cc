/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "heap_assembler.h"
#include "heap_freeze.h"
#include "item_pointer.h"
#include "payload_copy.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <utility>

namespace gr {
namespace spead {
namespace recv {

heap_assembler::heap_assembler(const assembler_config& config,
                               std::shared_ptr<detail::heap_pool> pool,
                               heap_ready ready)
    : d_config(config),
      d_fragments(fragment_limit::choose(config.max_fragments, config.max_heap_size)),
      d_pool(std::move(pool)),
      d_ready(std::move(ready)),
      d_slots(config.max_heaps * config.substreams),
      d_live(config.max_heaps * config.substreams),
      d_window_next(config.substreams),
      d_retired(config.retired_history)
{
    d_config.validate();
}

heap_assembler::~heap_assembler() = default;

std::size_t heap_assembler::live_heaps() const
{
    std::size_t n = 0;
    for (const slot& s : d_slots)
        n += (s.storage || s.too_large);
    return n;
}

void heap_assembler::note_batch(std::size_t n)
{
    d_stats[recv_stat::batches]++;
    auto& max_batch = d_stats[recv_stat::max_batch];
    max_batch = std::max<std::uint64_t>(max_batch, n);
}

bool heap_assembler::add_packet(const std::uint8_t* data, std::size_t size)
{
    if (d_stopped) {
        d_stats[recv_stat::packets_after_stop]++;
        return false;
    }
    // The first packet after a pause goes the general way, which looks at its cnt.
    if (!d_after_pause && place_repeat(data, size))
        return !d_stopped;
    packet_header packet;
    const decode_result result = decode_packet(data, size, packet);
    if (result != decode_result::ok) {
        d_after_pause = false;
        d_stats[stat_for(result)]++;
        return true;
    }
    if (!d_after_pause && place_in_order(packet))
        return !d_stopped;
    return add_decoded(packet);
}

void heap_assembler::note_pause() { d_after_pause = true; }

inline bool heap_assembler::append_in_order(slot& s,
                                            std::uint64_t begin,
                                            std::uint64_t end,
                                            const std::uint8_t* payload)
{
    detail::heap_storage& h = *s.storage;
    d_stats[recv_stat::packets]++;
    copy_payload(
        d_config.nontemporal_copies, h.buffer.get() + begin, payload, end - begin);
    h.received += end - begin;
    h.extent = end; // the last range ends furthest
    h.packets++;
    if (h.received != h.heap_size)
        return true;
    retire(s, recv_stat::heaps); // complete: the reason is never used
    return false;
}

inline bool heap_assembler::place_repeat(const std::uint8_t* data, std::size_t size)
{
    if (!d_repeat_target)
        return false;
    // Checked against, and placed as, the piece that continues the heap
    // (repeat_header::match_next()). Its learnt size is the heap's (place_in_order
    // checked it); what place_in_order would decline goes the general way, counted.
    interval_set& received = d_repeat_target->storage->received_ranges;
    const std::uint64_t begin = received.last_end();
    const std::uint64_t end = begin + (size - repeat_header::header_bytes);
    if (!d_repeat.match_next(data, size, begin) || !received.extend_last(begin, end))
        return false;
    append_in_order(*d_repeat_target, begin, end, data + repeat_header::header_bytes);
    return true;
}

void heap_assembler::take_repeat_shape(slot& s, const packet_header& packet)
{
    d_repeat_target = d_repeat.learn(packet) ? &s : nullptr;
}

inline bool heap_assembler::place_in_order(const packet_header& packet)
{
    // Fast path for nearly every packet of a large heap: the next in-order piece of the
    // heap the previous packet went to, with a known size and no item pointers. It does
    // exactly what the general path (add_decoded) would, in one function; any packet
    // that fails a check here goes to the general path untouched.
    slot& s = d_slots[d_last_hit];
    if (!s.storage || s.cnt != packet.heap_cnt || packet.n_item_pointers != 0 ||
        packet.payload_length == 0 || !packet.has_heap_size)
        return false;
    detail::heap_storage& h = *s.storage;
    const std::uint64_t begin = packet.payload_offset;
    const std::uint64_t end = begin + packet.payload_length;
    if (!h.has_heap_size || packet.heap_size != h.heap_size ||
        packet.heap_address_bits != h.heap_flavour.heap_address_bits() ||
        !h.received_ranges.extend_last(begin, end))
        return false;
    if (append_in_order(s, begin, end, packet.payload) && d_repeat_target != &s)
        take_repeat_shape(s, packet);
    return true;
}

bool heap_assembler::add_decoded(const packet_header& packet)
{
    if (d_stopped) {
        d_stats[recv_stat::packets_after_stop]++;
        return false;
    }
    if (!packet.has_heap_size && !d_config.allow_unsized_heaps) {
        d_stats[recv_stat::packets]++;
        d_stats[recv_stat::packets_unsized]++;
        return true;
    }
    // Consecutive packets nearly always belong to the heap the last one went to.
    slot& last = d_slots[d_last_hit];
    slot* s =
        last.storage && last.cnt == packet.heap_cnt ? &last : find_slot(packet.heap_cnt);
    if (std::exchange(d_after_pause, false) && !s && d_retired.find(packet.heap_cnt))
        d_retired.forget(); // traffic resumes with a cnt already retired: a restart
    if (!s) {
        if (const auto* r = d_retired.find(packet.heap_cnt)) {
            count_retired(r->fate);
            return true;
        }
        if (!d_config.allow_out_of_order && packet.payload_offset != 0) {
            // In order only: a heap starts with its first bytes.
            d_stats[recv_stat::packets]++;
            d_stats[recv_stat::packets_out_of_order]++;
            return true;
        }
        s = &claim_slot(packet.heap_cnt);
        if (d_stopped) {
            // Making room evicted a stop heap that was complete (one without HEAP_SIZE
            // is complete only when it leaves the window): this packet comes after it.
            d_stats[recv_stat::packets_after_stop]++;
            return false;
        }
        start_heap(*s, packet);
    }
    d_stats[recv_stat::packets]++;
    if (s->too_large) {
        d_stats[recv_stat::packets_heap_too_large]++;
        return true;
    }
    place(*s, packet);
    return !d_stopped;
}

void heap_assembler::set_last_hit(std::size_t index)
{
    // The shape belongs to the last-hit heap only, so that the fast path takes no
    // packet that the general path would have had to search for.
    if (d_repeat_target != &d_slots[index])
        d_repeat_target = nullptr;
    d_last_hit = index;
}

void heap_assembler::count_retired(retired_as how)
{
    d_stats[recv_stat::packets]++;
    switch (how) {
    case retired_as::complete:
        d_stats[recv_stat::packets_duplicate]++;
        break;
    case retired_as::incomplete:
        d_stats[recv_stat::packets_late]++;
        break;
    case retired_as::too_large:
        d_stats[recv_stat::packets_heap_too_large]++;
        break;
    }
}

heap_assembler::slot* heap_assembler::find_slot(std::uint64_t cnt)
{
    const std::size_t i = d_live.find(cnt, d_stats[recv_stat::search_dist]);
    if (i == cnt_index::none)
        return nullptr;
    set_last_hit(i);
    return &d_slots[i];
}

heap_assembler::slot& heap_assembler::claim_slot(std::uint64_t cnt)
{
    // The new heap takes the next age of its window (cnt modulo substreams). A live
    // heap that max_heaps newer heaps of its window have started since has had its
    // chance: it leaves, oldest first, whether or not the heaps after it completed (so
    // a lost packet cannot keep a heap live for ever). The ages of the heaps that stay
    // are then within max_heaps - 1 of the new one, so a slot is free.
    const std::uint64_t max_heaps = d_config.max_heaps;
    const std::size_t window = d_window_next.size() == 1 ? 0 : cnt % d_window_next.size();
    slot* const first = d_slots.data() + window * max_heaps;
    const std::uint64_t next_age = d_window_next[window];
    for (;;) {
        slot* oldest = nullptr;
        slot* free = nullptr;
        for (slot* s = first; s != first + max_heaps; s++) {
            if (!s->storage && !s->too_large)
                free = s;
            else if (!oldest || s->window_age < oldest->window_age)
                oldest = s;
        }
        if (!oldest || oldest->window_age + max_heaps > next_age)
            return *free;
        retire(*oldest, recv_stat::incomplete_heaps_evicted);
        if (d_stopped)
            return *oldest; // the evicted heap was a complete stop heap: all is flushed
    }
}

void heap_assembler::start_heap(slot& s, const packet_header& packet)
{
    const std::size_t index = std::size_t(&s - d_slots.data());
    s.cnt = packet.heap_cnt;
    s.age = d_next_age++;
    s.window_age = d_window_next[index / d_config.max_heaps]++;
    d_live.insert(s.cnt, index);
    set_last_hit(index);
    const std::uint64_t needed = packet.has_heap_size
                                     ? packet.heap_size
                                     : packet.payload_offset + packet.payload_length;
    if (needed > d_config.max_heap_size) {
        // Keep the slot so the rest of this heap's packets are recognised and counted
        // without being stored.
        s.too_large = true;
        d_stats[recv_stat::heaps_too_large]++;
        return;
    }
    s.storage = d_pool->acquire();
    detail::heap_storage& h = *s.storage;
    h.cnt = packet.heap_cnt;
    h.heap_flavour = flavour(packet.heap_address_bits);
    h.has_heap_size = packet.has_heap_size;
    h.heap_size = packet.heap_size;
    if (packet.has_heap_size)
        h.reserve_payload(packet.heap_size, 0);
}

void heap_assembler::place(slot& s, const packet_header& packet)
{
    detail::heap_storage& h = *s.storage;
    const std::uint64_t begin = packet.payload_offset;
    const std::uint64_t end = begin + packet.payload_length;
    if (packet.heap_address_bits != h.heap_flavour.heap_address_bits()) {
        d_stats[recv_stat::packets_flavour_mismatch]++;
        return;
    }
    if (packet.has_heap_size != h.has_heap_size || packet.heap_size != h.heap_size) {
        if (!packet.has_heap_size) {
            // The heap's size is known from another packet: check what the decoder could
            // not. The packet is already counted as valid, so this is a size mismatch,
            // not one of the decoder's rejections.
            if (end > h.heap_size) {
                d_stats[recv_stat::packets_heap_size_mismatch]++;
                return;
            }
        } else if (h.has_heap_size || packet.heap_size < h.extent) {
            d_stats[recv_stat::packets_heap_size_mismatch]++;
            return;
        } else if (packet.heap_size > d_config.max_heap_size) {
            d_stats[recv_stat::packets_heap_too_large]++;
            return;
        } else {
            // First packet of the heap that carries HEAP_SIZE: adopt it.
            h.reserve_payload(packet.heap_size, h.extent);
            h.has_heap_size = true;
            h.heap_size = packet.heap_size;
        }
    }
    if (!h.has_heap_size && end > d_config.max_heap_size) {
        d_stats[recv_stat::packets_heap_too_large]++;
        return;
    }
    if (h.raw_pointers.size() + packet.n_item_pointers > d_config.max_item_pointers) {
        d_stats[recv_stat::packets_over_heap_limits]++;
        return;
    }

    if (!d_config.allow_out_of_order && begin > h.received) {
        // In order only: the heap's bytes so far are [0, received); a gap is refused.
        d_stats[recv_stat::packets_out_of_order]++;
        return;
    }
    if (packet.payload_length == 0) {
        // Nothing to place; a second empty packet is indistinguishable from a repeat.
        if (h.had_empty_packet) {
            d_stats[recv_stat::packets_duplicate]++;
            return;
        }
        h.had_empty_packet = true;
    } else {
        if (!d_fragments.record(h.received_ranges, begin, end, d_stats))
            return; // counted
        if (!h.has_heap_size && end > h.capacity) {
            // Size unknown: grow geometrically, never past the cap.
            const std::uint64_t grown = std::max<std::uint64_t>(end, 2 * h.capacity);
            h.reserve_payload(std::min<std::uint64_t>(grown, d_config.max_heap_size),
                              h.extent);
        }
        copy_payload(d_config.nontemporal_copies,
                     h.buffer.get() + begin,
                     packet.payload,
                     packet.payload_length);
        h.received += packet.payload_length;
    }
    h.extent = std::max(h.extent, end);
    h.packets++;

    if (packet.n_item_pointers > 0) {
        const item_pointer_codec codec(packet.heap_address_bits);
        if (begin < h.last_pointer_offset)
            h.pointers_in_order = false;
        h.last_pointer_offset = begin;
        for (std::uint32_t i = packet.first_item_pointer; i < packet.n_pointers; i++) {
            const std::uint64_t pointer = load_be64(packet.pointers + 8 * i);
            if (!item_id::is_packet_special(codec.id(pointer)))
                h.raw_pointers.push_back({ pointer, begin, i });
        }
    }

    if (h.has_heap_size && h.received == h.heap_size)
        retire(s, recv_stat::heaps); // complete: the reason is never used
}

void heap_assembler::retire(slot& s, recv_stat reason_if_incomplete)
{
    if (d_repeat_target == &s)
        d_repeat_target = nullptr;
    const std::uint64_t cnt = s.cnt;
    d_live.erase(cnt, std::size_t(&s - d_slots.data()));
    if (s.too_large) {
        s.too_large = false;
        d_retired.remember(cnt, retired_as::too_large);
        return;
    }
    detail::heap_storage_ptr storage = std::move(s.storage);
    detail::heap_storage& h = *storage;
    // Without HEAP_SIZE a heap is complete when everything up to the furthest byte seen
    // arrived (as spead2 treats such heaps).
    h.complete =
        h.has_heap_size
            ? h.received == h.heap_size
            : h.packets > 0 && h.received_ranges.is_contiguous_from_zero(h.extent);
    if (h.complete && !detail::addresses_fit(h)) {
        // An item addressed past the heap's end: spead2 never completes such a heap
        // (it cannot be decoded), so it ends as an evicted incomplete heap; here at once.
        h.complete = false;
        reason_if_incomplete = recv_stat::incomplete_heaps_evicted;
    }
    d_retired.remember(cnt, h.complete ? retired_as::complete : retired_as::incomplete);

    if (!h.complete) {
        d_stats[reason_if_incomplete]++;
        if (d_config.incomplete == incomplete_heaps::drop)
            return; // storage goes back to the pool
        detail::zero_fill_gaps(h);
        detail::freeze(h, d_stats);
        d_stats[recv_stat::incomplete_heaps_delivered]++;
        d_ready(heap(std::move(storage)));
        return;
    }

    detail::freeze(h, d_stats);
    if (h.packets == 1)
        d_stats[recv_stat::single_packet_heaps]++;
    // Both stream controls in one look at the items (heap::has_stream_ctrl's test).
    bool is_stop = false, is_start = false;
    for (const item& it : h.items)
        if (it.id == item_id::stream_ctrl && it.is_immediate) {
            is_stop |= it.immediate_value == stream_ctrl::stop;
            is_start |= it.immediate_value == stream_ctrl::start;
        }
    heap delivered(std::move(storage));
    if (is_stop) {
        d_stats[recv_stat::stop_heaps]++;
        d_retired.forget(); // a restarted sender may reuse heap cnts
        if (d_config.stop_on_stop_heap) {
            // The sender has ended the stream: nothing that is still live will complete.
            flush_except(nullptr);
            d_stopped = true;
            return;
        }
        // Otherwise the stop may be one of several senders' (or destinations') and the
        // live heaps can be others' still arriving: they stay, as spead2 keeps them,
        // and the stop heap itself goes on to the consumer if it wants it.
        if (!d_config.deliver_stop_heaps)
            return;
    }
    if (is_start)
        d_retired.forget(); // a new session may reuse heap cnts
    d_stats[d_config.heaps_stat]++;
    d_ready(std::move(delivered));
}

void heap_assembler::flush_except(const slot* keep)
{
    // Oldest first, so heaps come out in the order they started.
    for (;;) {
        slot* oldest = nullptr;
        for (slot& s : d_slots)
            if (&s != keep && (s.storage || s.too_large) &&
                (!oldest || s.age < oldest->age))
                oldest = &s;
        if (!oldest)
            return;
        retire(*oldest, recv_stat::incomplete_heaps_flushed);
    }
}

void heap_assembler::flush() { flush_except(nullptr); }

void heap_assembler::stop()
{
    if (d_stopped)
        return;
    flush();
    d_stopped = true;
}

} // namespace recv
} // namespace spead
} // namespace gr
