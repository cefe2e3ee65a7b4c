/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/chunk_assembler.h"
#include "protocol/endian.h"
#include "protocol/item_pointer.h"
#include "protocol/payload_copy.h"
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

chunk_assembler::chunk_assembler(const chunk_config& config,
                                 acquire_fn acquire,
                                 ready_fn ready)
    : d_config((config.validate(), config)),
      d_taken(substream_set::choose(config.first_substream,
                                    config.substream_ids,
                                    config.timeline.substreams,
                                    config.substream_item)),
      d_chunk_positions(config.positions_per_chunk()),
      d_acquire(std::move(acquire)),
      d_ready(std::move(ready)),
      d_chunks(config.live_chunks()),
      d_records(config.timeline.window_heaps * config.timeline.substreams),
      d_live(d_records.size()),
      d_recent(std::max<std::size_t>(64, 2 * d_records.size())),
      d_fragments(fragment_limit::choose(config.max_fragments, config.heap_bytes)),
      d_timeline(config.timeline, [this](const timeline::released& r) { on_release(r); })
{
    // Each record's ranges grow to what the stream needs once and keep that capacity.
}

bool chunk_assembler::find_immediate(const packet_header& packet,
                                     std::uint64_t id,
                                     std::uint64_t& value)
{
    const item_pointer_codec codec(packet.heap_address_bits);
    for (std::uint32_t i = 0; i < packet.n_pointers; i++) {
        const std::uint64_t p = load_be64(packet.pointers + 8 * std::size_t(i));
        if (item_pointer_codec::is_immediate(p) && codec.id(p) == id) {
            value = codec.value(p);
            return true;
        }
    }
    return false;
}

chunk_assembler::result chunk_assembler::add_packet(const packet_header& packet)
{
    return place(packet, nullptr);
}

bool chunk_assembler::add_repeat(const std::uint8_t* data, std::size_t size)
{
    record* r = d_repeat_record;
    // The layout is learnt only from a packet giving HEAP_SIZE = heap_bytes, so
    // match_next() has checked what stage() checks of the sizes; a packet that is not
    // the heap's next piece, or whose chunk is lost, goes the general way to be counted
    // there. The piece is placed where the heap's received bytes end, a prediction the
    // packet is checked against (repeat_header::match_next()).
    if (!r || !r->data)
        return false;
    const std::uint64_t begin = r->received.last_end();
    const std::uint64_t length = size - repeat_header::header_bytes;
    if (!d_repeat.match_next(data, size, begin) ||
        !r->received.extend_last(begin, begin + length))
        return false;
    copy_payload(d_config.nontemporal_copies,
                 r->data + begin,
                 data + repeat_header::header_bytes,
                 std::size_t(length));
    d_last = r;
    committed(*r, length);
    return true;
}

chunk_assembler::result chunk_assembler::reserve(const packet_header& packet,
                                                 copy_ticket& ticket)
{
    return place(packet, &ticket);
}

chunk_assembler::result chunk_assembler::place(const packet_header& packet,
                                               copy_ticket* ticket)
{
    // Nearly every packet belongs to the heap the one before it went to.
    if (d_last && d_last->live && d_last->cnt == packet.heap_cnt)
        return stage(*d_last, packet, ticket);
    if (record* r = find_live(packet.heap_cnt)) {
        d_last = r;
        return stage(*r, packet, ticket);
    }

    std::uint64_t timestamp = 0, substream = 0;
    if (!find_immediate(packet, d_config.timestamp_item, timestamp))
        return result::other;
    if (const auto* gone = d_recent.find(packet.heap_cnt, timestamp)) {
        d_stats[gone->fate == left_as::released ? recv_stat::packets_late
                                                : recv_stat::packets_refused_heap]++;
        return result::refused;
    }
    if (!packet.has_heap_size || packet.heap_size != d_config.heap_bytes)
        return refuse_heap(packet, timestamp, recv_stat::heaps_wrong_size);
    if (d_config.substream_item != 0 &&
        !find_immediate(packet, d_config.substream_item, substream))
        return refuse_heap(packet, timestamp, recv_stat::heaps_bad_substream);
    // Substreams this receiver does not take are other hosts' share.
    const std::size_t sub = d_taken.index_of(substream);
    if (sub == substream_set::npos)
        return refuse_heap(packet, timestamp, recv_stat::heaps_other_substream);
    if (d_in_flight != 0 && d_timeline.forces_release(timestamp))
        return result::drain; // positions it would release may still be filling
    const timeline::placement where = d_timeline.place(timestamp, std::size_t(sub));
    if (where.what != timeline::placement::verdict::placed) {
        // Counted by the timeline (heaps_late, heaps_misaligned, ...).
        d_recent.remember(packet.heap_cnt, left_as::refused, timestamp);
        d_stats[recv_stat::packets_refused_heap]++;
        return result::refused;
    }
    live_chunk& c = chunk_for(where.output_index);
    const std::size_t index =
        where.slot * d_config.timeline.substreams + std::size_t(sub);
    record& r = d_records[index];
    r.live = true;
    r.substream = std::size_t(sub);
    r.cnt = packet.heap_cnt;
    r.bytes = 0;
    r.data = c.data ? c.data->data(std::size_t(sub)) +
                          std::size_t(where.output_index % d_chunk_positions) *
                              d_config.heap_bytes
                    : nullptr;
    r.where = where;
    r.received.clear();
    d_live.insert(r.cnt, index);
    d_last = &r;
    return stage(r, packet, ticket);
}

chunk_assembler::result chunk_assembler::refuse_heap(const packet_header& packet,
                                                     std::uint64_t timestamp,
                                                     recv_stat heap_stat)
{
    d_stats[heap_stat]++;
    d_stats[recv_stat::packets_refused_heap]++;
    d_recent.remember(packet.heap_cnt, left_as::refused, timestamp);
    return result::refused;
}

chunk_assembler::live_chunk& chunk_assembler::chunk_for(std::uint64_t index)
{
    const std::uint64_t number = index / d_chunk_positions;
    live_chunk& c = d_chunks[std::size_t(number % d_chunks.size())];
    if (c.number != number) {
        // The window never reaches further than live_chunks() chunks, so the one that
        // had this place was handed on.
        c.number = number;
        c.data = d_acquire();
        if (c.data)
            c.data->reset(number * d_chunk_positions);
    }
    return c;
}

chunk_assembler::result
chunk_assembler::stage(record& r, const packet_header& packet, copy_ticket* ticket)
{
    const std::uint64_t begin = packet.payload_offset;
    const std::uint64_t end = begin + packet.payload_length;
    if (end > d_config.heap_bytes) { // a later packet of the heap with another size
        d_stats[recv_stat::packets_heap_size_mismatch]++;
        return result::refused;
    }
    if (begin == end) {
        d_stats[recv_stat::packets]++;
        return result::placed;
    }
    if (!d_fragments.record(r.received, begin, end, d_stats))
        return result::refused; // counted
    if (!r.data) {
        // Its chunk is lost (the consumer fell behind): the heap still completes,
        // so its position is released as soon as it can be.
        d_stats[recv_stat::packets_dropped_queue_full]++;
        r.bytes += packet.payload_length;
        if (r.bytes == d_config.heap_bytes)
            d_timeline.complete(r.where, r.substream);
        return result::refused;
    }
    if (!ticket) { // add_packet(): copied now, with nothing in flight
        copy_payload(d_config.nontemporal_copies,
                     r.data + begin,
                     packet.payload,
                     std::size_t(packet.payload_length));
        // Learnt before committed(), which may release the heap (and forget it). Only
        // from a packet that gives the heap's own size: match() bounds by it.
        if (d_repeat_record != &r)
            d_repeat_record =
                packet.heap_size == d_config.heap_bytes && d_repeat.learn(packet)
                    ? &r
                    : nullptr;
        committed(r, packet.payload_length);
        return result::placed;
    }
    ticket->to = r.data + begin;
    ticket->from = packet.payload;
    ticket->bytes = std::size_t(packet.payload_length);
    ticket->record = std::uint32_t(&r - d_records.data());
    d_in_flight++;
    return result::copy;
}

bool chunk_assembler::extend(copy_ticket& ticket,
                             const packet_header* more,
                             std::size_t n)
{
    // What stage() would do for each packet, given that the ticket's own range is
    // the heap's last: the same heap, in bounds, and no new range (so no fragment
    // limit to check). The record stays this heap's until the ticket is committed.
    record& r = d_records[ticket.record];
    const std::uint64_t begin = std::uint64_t(ticket.to - r.data) + ticket.bytes;
    const packet_header& last = more[n - 1];
    const std::uint64_t end = last.payload_offset + last.payload_length;
    if (more[0].heap_cnt != r.cnt || more[0].payload_offset != begin ||
        end > d_config.heap_bytes || !r.received.extend_last(begin, end))
        return false;
    ticket.bytes += std::size_t(end - begin);
    ticket.packets += std::uint32_t(n);
    return true;
}

void chunk_assembler::commit(const copy_ticket& ticket)
{
    // The record is still this packet's heap: a position is released early only
    // with no copies in flight (reserve() result drain), and on completion only once
    // every byte, this one's too, has been committed.
    d_in_flight--;
    committed(d_records[ticket.record], ticket.bytes, ticket.packets);
}

void chunk_assembler::committed(record& r, std::uint64_t bytes, std::uint64_t packets)
{
    d_stats[recv_stat::packets] += packets;
    r.bytes += bytes;
    if (r.bytes == d_config.heap_bytes)
        d_timeline.complete(r.where, r.substream); // may release it, and more
}

void chunk_assembler::on_release(const timeline::released& released)
{
    using recv::position_fill;
    const std::size_t heap_bytes = d_config.heap_bytes;
    const bool deliver = d_config.incomplete == recv::incomplete_heaps::deliver;
    live_chunk& c = chunk_for(released.output_index);
    const std::size_t p = std::size_t(released.output_index % d_chunk_positions);
    d_stats[recv_stat::positions_released]++;
    for (std::size_t s = 0; s < d_config.timeline.substreams; s++) {
        record& r = at(released.slot, s);
        const position_fill fill = released.fills[s];
        if (fill == position_fill::incomplete)
            d_stats[d_flushing ? recv_stat::incomplete_heaps_flushed
                               : recv_stat::incomplete_heaps_evicted]++;
        if (!c.data) {
            // Lost: the consumer outputs zeros here. A complete heap ends in
            // heaps_dropped_queue_full; an incomplete one is counted above.
            d_stats[fill == position_fill::complete ? recv_stat::heaps_dropped_queue_full
                                                    : recv_stat::heaps_missing]++;
            d_stats[recv_stat::bytes_zero_filled] += heap_bytes;
        } else {
            std::uint8_t* data = c.data->data(s) + p * heap_bytes;
            position_fill out = fill;
            if (fill == position_fill::complete) {
                d_stats[recv_stat::heaps]++;
            } else if (fill == position_fill::incomplete && deliver) {
                d_stats[recv_stat::incomplete_heaps_delivered]++;
                std::uint64_t at_byte = 0;
                for (const interval_set::range& got : r.received.ranges()) {
                    std::memset(data + at_byte, 0, std::size_t(got.begin - at_byte));
                    d_stats[recv_stat::bytes_zero_filled] += got.begin - at_byte;
                    at_byte = got.end;
                }
                std::memset(data + at_byte, 0, std::size_t(heap_bytes - at_byte));
                d_stats[recv_stat::bytes_zero_filled] += heap_bytes - at_byte;
            } else {
                out = position_fill::missing;
                d_stats[recv_stat::heaps_missing]++;
                std::memset(data, 0, heap_bytes);
                d_stats[recv_stat::bytes_zero_filled] += heap_bytes;
            }
            c.data->set_fill(p, s, out, fill == position_fill::missing ? 0 : r.bytes);
        }
        if (d_repeat_record == &r)
            d_repeat_record = nullptr;
        if (r.live) {
            d_recent.remember(r.cnt, left_as::released, released.timestamp);
            d_live.erase(r.cnt, released.slot * d_config.timeline.substreams + s);
        }
        r.live = false;
        r.received.clear();
    }
    if (c.data)
        c.data->set_position(p, { released.timestamp, released.discontinuity });
    if (p + 1 == d_chunk_positions)
        hand_on(c, d_chunk_positions);
}

void chunk_assembler::hand_on(live_chunk& c, std::size_t positions)
{
    recv::chunk_entry entry;
    entry.first_index = c.number * d_chunk_positions;
    entry.positions = positions;
    entry.data = std::move(c.data);
    c.number = live_chunk::none;
    d_ready(std::move(entry));
}

void chunk_assembler::flush()
{
    d_flushing = true;
    d_timeline.flush();
    d_flushing = false;
    // The chunk holding the last released position, if it is not full (a full one
    // went at its last position). Chunks further on hold no released position.
    const std::uint64_t released = d_timeline.stats().positions_released;
    if (released % d_chunk_positions == 0)
        return;
    const std::uint64_t number = (released - 1) / d_chunk_positions;
    live_chunk& c = d_chunks[std::size_t(number % d_chunks.size())];
    if (c.number == number)
        hand_on(c, std::size_t(released % d_chunk_positions));
}

recv_stats chunk_assembler::stats() const
{
    recv_stats out = d_stats;
    const timeline_stats& t = d_timeline.stats();
    out[recv_stat::heaps_late] = t.heaps_late;
    out[recv_stat::heaps_misaligned] = t.heaps_misaligned;
    out[recv_stat::heaps_duplicate_position] = t.heaps_duplicate;
    out[recv_stat::heaps_bad_substream] += t.heaps_bad_substream;
    out[recv_stat::timestamp_resyncs] = t.timestamp_resyncs;
    return out;
}

} // namespace spead
} // namespace gr
