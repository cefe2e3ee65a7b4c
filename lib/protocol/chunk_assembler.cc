/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/chunk_assembler.h"
#include "protocol/endian.h"
#include "protocol/item_pointer.h"
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
/*! Bounds the window's memory (window × substreams × heap size). */
constexpr std::uint64_t max_window_bytes = std::uint64_t(16) << 30;
} // namespace

void chunk_config::validate() const
{
    timeline.validate();
    if (heap_bytes == 0)
        throw std::invalid_argument(
            "heap_bytes: 0 is not a heap size; give the HEAP_SIZE of the data heaps "
            "(items per heap × item size)");
    if (timestamp_item == 0)
        throw std::invalid_argument("timestamp_item: 0 names no item; give the id of "
                                    "the immediate item holding each heap's timestamp");
    if (substream_item == timestamp_item)
        throw std::invalid_argument(
            "substream_item: " + std::to_string(substream_item) +
            " is the timestamp item too; give another id, or 0 for no substreams");
    if (max_fragments == 0)
        throw std::invalid_argument("max_fragments: 0; use at least 1 (64 by default)");
    const std::uint64_t heaps =
        std::uint64_t(timeline.window_heaps) * timeline.substreams;
    if (heap_bytes > max_window_bytes / heaps)
        throw std::invalid_argument(
            "window_heaps: " + std::to_string(timeline.window_heaps) + " heaps × " +
            std::to_string(timeline.substreams) + " substreams × " +
            std::to_string(heap_bytes) + " bytes is more than " +
            std::to_string(max_window_bytes >> 30) +
            " GiB of window; use fewer heaps in the window or smaller heaps");
}

chunk_assembler::chunk_assembler(const chunk_config& config, release_fn release)
    : d_config((config.validate(), config)),
      d_release(std::move(release)),
      d_data(new std::uint8_t[config.timeline.window_heaps * config.timeline.substreams *
                              config.heap_bytes]),
      d_records(config.timeline.window_heaps * config.timeline.substreams),
      d_views(config.timeline.substreams, nullptr),
      d_recent(std::max<std::size_t>(64, 2 * d_records.size())),
      d_timeline(config.timeline, [this](const timeline::released& r) { on_release(r); })
{
    // At most half full: probes stay short. Each record's ranges grow to what the
    // stream needs once and keep that capacity.
    std::size_t size = 2;
    unsigned bits = 1;
    while (size < 2 * d_records.size()) {
        size *= 2;
        bits++;
    }
    d_index.assign(size, 0);
    d_index_shift = 64 - bits;
}

bool chunk_assembler::read_items(const packet_header& packet,
                                 std::uint64_t& timestamp,
                                 bool& has_substream,
                                 std::uint64_t& substream) const
{
    const item_pointer_codec codec(packet.heap_address_bits);
    bool has_timestamp = false;
    has_substream = false;
    for (std::uint32_t i = 0; i < packet.n_pointers; i++) {
        const std::uint64_t p = load_be64(packet.pointers + 8 * std::size_t(i));
        if (!item_pointer_codec::is_immediate(p))
            continue;
        const std::uint64_t id = codec.id(p);
        if (id == d_config.timestamp_item) {
            timestamp = codec.value(p);
            has_timestamp = true;
        } else if (id == d_config.substream_item && d_config.substream_item != 0) {
            substream = codec.value(p);
            has_substream = true;
        }
    }
    return has_timestamp;
}

chunk_assembler::result chunk_assembler::add_packet(const packet_header& packet)
{
    // Nearly every packet belongs to the heap the one before it went to.
    if (d_last && d_last->live && d_last->cnt == packet.heap_cnt)
        return copy(*d_last, packet);
    if (record* r = find_live(packet.heap_cnt)) {
        d_last = r;
        return copy(*r, packet);
    }

    std::uint64_t timestamp = 0, substream = 0;
    bool has_substream = false;
    if (!read_items(packet, timestamp, has_substream, substream))
        return result::other;
    if (!packet.has_heap_size || packet.heap_size != d_config.heap_bytes) {
        d_stats.packets_wrong_size++;
        return result::refused;
    }
    if (d_config.substream_item != 0 && !has_substream) {
        d_stats.packets_no_substream++;
        return result::refused;
    }
    if (const recent* gone = find_recent(packet.heap_cnt, timestamp)) {
        if (gone->what == recent::how::released)
            d_stats.packets_late++;
        else
            d_stats.packets_rejected++;
        return result::refused;
    }
    const std::size_t sub = substream < d_config.timeline.substreams
                                ? std::size_t(substream)
                                : d_config.timeline.substreams; // refused by place()
    const timeline::placement where = d_timeline.place(timestamp, sub);
    if (where.what != timeline::placement::verdict::placed) {
        remember(packet.heap_cnt, timestamp, recent::how::refused);
        d_stats.packets_rejected++;
        return result::refused;
    }
    const std::size_t index = where.slot * d_config.timeline.substreams + sub;
    record& r = d_records[index];
    r.live = true;
    r.substream = sub;
    r.cnt = packet.heap_cnt;
    r.bytes = 0;
    r.where = where;
    r.received.clear();
    index_insert(std::uint32_t(index));
    d_last = &r;
    return copy(r, packet);
}

chunk_assembler::record* chunk_assembler::find_live(std::uint64_t cnt)
{
    const std::size_t mask = d_index.size() - 1;
    for (std::size_t i = home(cnt);; i = (i + 1) & mask) {
        const std::uint32_t entry = d_index[i];
        if (entry == 0)
            return nullptr;
        if (d_records[entry - 1].live && d_records[entry - 1].cnt == cnt)
            return &d_records[entry - 1];
    }
}

void chunk_assembler::index_insert(std::uint32_t record_index)
{
    const std::size_t mask = d_index.size() - 1;
    std::size_t i = home(d_records[record_index].cnt);
    while (d_index[i] != 0)
        i = (i + 1) & mask;
    d_index[i] = record_index + 1;
}

void chunk_assembler::index_erase(std::uint32_t record_index)
{
    const std::size_t mask = d_index.size() - 1;
    std::size_t i = home(d_records[record_index].cnt);
    while (d_index[i] != record_index + 1)
        i = (i + 1) & mask;
    // Backward shift: entries after the hole move up unless they would pass their home.
    for (std::size_t j = (i + 1) & mask; d_index[j] != 0; j = (j + 1) & mask) {
        const std::size_t k = home(d_records[d_index[j] - 1].cnt);
        const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            d_index[i] = d_index[j];
            i = j;
        }
    }
    d_index[i] = 0;
}

chunk_assembler::result chunk_assembler::copy(record& r, const packet_header& packet)
{
    const std::uint64_t begin = packet.payload_offset;
    const std::uint64_t end = begin + packet.payload_length;
    if (end > d_config.heap_bytes) { // a later packet of the heap with another size
        d_stats.packets_wrong_size++;
        return result::refused;
    }
    if (begin < end) {
        switch (r.received.insert(begin, end, d_config.max_fragments)) {
        case interval_set::insert_result::added:
            break;
        case interval_set::insert_result::duplicate:
        case interval_set::insert_result::overlap:
            d_stats.packets_duplicate++;
            return result::refused;
        case interval_set::insert_result::too_many:
            d_stats.packets_rejected++;
            return result::refused;
        }
        std::memcpy(slot_data(r.where.slot, r.substream) + begin,
                    packet.payload,
                    std::size_t(packet.payload_length));
        r.bytes += packet.payload_length;
    }
    d_stats.packets_placed++;
    if (r.bytes == d_config.heap_bytes)
        d_timeline.complete(r.where, r.substream); // may release it, and more
    return result::placed;
}

void chunk_assembler::on_release(const timeline::released& released)
{
    const std::size_t heap_bytes = d_config.heap_bytes;
    for (std::size_t s = 0; s < d_config.timeline.substreams; s++) {
        record& r = at(released.slot, s);
        std::uint8_t* data = slot_data(released.slot, s);
        d_views[s] = data;
        if (released.fills[s] == timeline::fill::missing) {
            std::memset(data, 0, heap_bytes);
            d_stats.bytes_zero_filled += heap_bytes;
        } else if (released.fills[s] == timeline::fill::incomplete) {
            std::uint64_t at_byte = 0;
            for (const interval_set::range& got : r.received.ranges()) {
                std::memset(data + at_byte, 0, std::size_t(got.begin - at_byte));
                d_stats.bytes_zero_filled += got.begin - at_byte;
                at_byte = got.end;
            }
            std::memset(data + at_byte, 0, std::size_t(heap_bytes - at_byte));
            d_stats.bytes_zero_filled += heap_bytes - at_byte;
        }
    }
    d_release(released, d_views.data());
    for (std::size_t s = 0; s < d_config.timeline.substreams; s++) {
        record& r = at(released.slot, s);
        if (r.live) {
            remember(r.cnt, released.timestamp, recent::how::released);
            index_erase(std::uint32_t(released.slot * d_config.timeline.substreams + s));
        }
        r.live = false;
        r.received.clear();
    }
}

void chunk_assembler::remember(std::uint64_t cnt,
                               std::uint64_t timestamp,
                               recent::how what)
{
    d_recent[d_recent_next] = recent{ cnt, timestamp, what };
    if (++d_recent_next == d_recent.size())
        d_recent_next = 0;
}

const chunk_assembler::recent* chunk_assembler::find_recent(std::uint64_t cnt,
                                                            std::uint64_t timestamp) const
{
    for (const recent& r : d_recent)
        if (r.what != recent::how::none && r.cnt == cnt && r.timestamp == timestamp)
            return &r;
    return nullptr;
}

void chunk_assembler::flush() { d_timeline.flush(); }

} // namespace spead
} // namespace gr
