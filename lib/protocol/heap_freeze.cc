/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "heap_freeze.h"
#include "item_pointer.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <cstring>

namespace gr {
namespace spead {
namespace recv {
namespace detail {

namespace {
// item_lengths[i]: the length of addressed item i, or one of two markers.
constexpr std::uint64_t repeat = ~std::uint64_t(0);
constexpr std::uint64_t bad_address = repeat - 1;
// The check for repeats without sorting is quadratic: beyond this, sort.
constexpr std::size_t max_unsorted_pointers = 32;

std::uint64_t length_to(std::uint64_t address, std::uint64_t next, std::uint64_t size)
{
    return address <= size ? std::min(next, size) - address : bad_address;
}

} // namespace

bool addresses_fit(const heap_storage& h)
{
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    const std::uint64_t size = h.has_heap_size ? h.heap_size : h.extent;
    for (const auto& r : h.raw_pointers)
        if (!item_pointer_codec::is_immediate(r.pointer) && codec.value(r.pointer) > size)
            return false;
    return true;
}

namespace {

/*! True if the pointers are in wire order, addresses increasing, no repeats (the
 * usual shape); then \p n_immediates is set. */
bool needs_no_sorting(const heap_storage& h, std::size_t& n_immediates)
{
    // The usual shape (one packet, or packets in offset order, carrying the addressed
    // items in address order and no pointer twice) needs no sort: each addressed item
    // runs to the next one in wire order. Anything else is left to the sorting pass.
    const auto& raw = h.raw_pointers;
    const std::size_t n = raw.size();
    if (!h.pointers_in_order || n > max_unsorted_pointers)
        return false;
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    std::size_t immediates = 0;
    bool addressed = false;
    std::uint64_t last_address = 0;
    for (std::size_t i = 0; i < n; i++) {
        const std::uint64_t pointer = raw[i].pointer;
        if (item_pointer_codec::is_immediate(pointer)) {
            // Addressed pointers in strictly increasing order cannot repeat, and an
            // immediate never equals an addressed one: only immediates need a look.
            for (std::size_t j = 0; j < i; j++)
                if (raw[j].pointer == pointer)
                    return false;
            immediates++;
            continue;
        }
        const std::uint64_t address = codec.value(pointer);
        if (addressed && address <= last_address)
            return false;
        addressed = true;
        last_address = address;
    }
    n_immediates = immediates;
    return true;
}

/*! Item lengths for any shape: wire order and repeats found by sorting. */
void lengths_by_sorting(heap_storage& h, std::uint64_t size)
{
    auto& raw = h.raw_pointers;
    const std::size_t n = raw.size();
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    // Every order below is total (ties broken by position), so std::sort gives the
    // same result as a stable sort without stable_sort's temporary buffer: freezing a
    // heap allocates nothing once the storage is warm.
    // Wire order: by the payload offset of the carrying packet, then position in it.
    if (!h.pointers_in_order)
        std::sort(raw.begin(), raw.end(), [](const auto& a, const auto& b) {
            return a.packet_offset < b.packet_offset ||
                   (a.packet_offset == b.packet_offset && a.index < b.index);
        });

    // Sort indices by pointer value: finds repeated pointers (senders may repeat them in
    // every packet) and puts addressed items in address order for their lengths.
    auto& order = h.scratch;
    order.resize(n);
    for (std::size_t i = 0; i < n; i++)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&raw](std::size_t a, std::size_t b) {
        return raw[a].pointer < raw[b].pointer ||
               (raw[a].pointer == raw[b].pointer && a < b);
    });
    auto& lengths = h.item_lengths;
    lengths.assign(n, 0);
    for (std::size_t k = 1; k < n; k++)
        if (raw[order[k]].pointer == raw[order[k - 1]].pointer)
            lengths[order[k]] = repeat;
    // An item's length runs to the next address of any item (NULL included), so sort the
    // addressed pointers by address alone.
    std::size_t n_addressed = 0;
    for (std::size_t k = 0; k < n; k++) {
        const std::size_t i = order[k];
        if (!item_pointer_codec::is_immediate(raw[i].pointer) && lengths[i] != repeat)
            order[n_addressed++] = i;
    }
    std::sort(order.begin(),
              order.begin() + n_addressed,
              [&raw, &codec](std::size_t a, std::size_t b) {
                  const std::uint64_t va = codec.value(raw[a].pointer);
                  const std::uint64_t vb = codec.value(raw[b].pointer);
                  return va < vb || (va == vb && a < b);
              });
    for (std::size_t k = 0; k < n_addressed; k++) {
        const std::uint64_t address = codec.value(raw[order[k]].pointer);
        const std::uint64_t next =
            k + 1 < n_addressed ? codec.value(raw[order[k + 1]].pointer) : size;
        lengths[order[k]] = length_to(address, next, size);
    }
}

/*! Immediate item \p slot of the heap's immediates, for \p pointer. */
item immediate_item(heap_storage& h, std::uint64_t pointer, std::size_t slot)
{
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    const int width = h.heap_flavour.heap_address_bytes();
    const std::uint64_t value = codec.value(pointer);
    auto& bytes = h.immediates[slot];
    store_be64(bytes.data(), value);
    item it;
    it.id = codec.id(pointer);
    it.is_immediate = true;
    it.data = bytes.data() + (8 - width);
    it.length = std::size_t(width);
    it.immediate_value = value;
    return it;
}

/*! The items of a heap that needs no sorting, in one pass. */
void items_in_wire_order(heap_storage& h,
                         std::uint64_t size,
                         std::size_t n_immediates,
                         recv_stats& stats)
{
    // One pass: an addressed item's length is known when the next address comes, so
    // it goes in at once and its length is set then (or at the end: the heap's size).
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    h.immediates.resize(n_immediates); // never resized again: item data points into it
    std::size_t next_immediate = 0;
    constexpr std::size_t none = ~std::size_t(0);
    std::size_t open = none; // the item that runs to the next address
    std::uint64_t open_address = 0;
    for (const auto& r : h.raw_pointers) {
        if (item_pointer_codec::is_immediate(r.pointer)) {
            h.items.push_back(immediate_item(h, r.pointer, next_immediate++));
            continue;
        }
        const std::uint64_t address = codec.value(r.pointer);
        if (open != none) {
            h.items[open].length = std::size_t(length_to(open_address, address, size));
            open = none;
        }
        if (address > size) {
            stats[recv_stat::items_bad_address]++;
            continue;
        }
        if (codec.id(r.pointer) == item_id::null)
            continue; // padding marker: only its address mattered
        item it;
        it.id = codec.id(r.pointer);
        it.data = h.buffer.get() + address;
        open = h.items.size();
        open_address = address;
        h.items.push_back(it);
    }
    if (open != none)
        h.items[open].length = std::size_t(length_to(open_address, size, size));
}

/*! The items, from the lengths lengths_by_sorting() found. */
void items_from_lengths(heap_storage& h, recv_stats& stats)
{
    const auto& raw = h.raw_pointers;
    const auto& lengths = h.item_lengths;
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    std::size_t n_immediates = 0;
    for (const auto& r : raw)
        n_immediates += item_pointer_codec::is_immediate(r.pointer);
    h.immediates.resize(n_immediates); // never resized again: item data points into it
    std::size_t next_immediate = 0;
    for (std::size_t i = 0; i < raw.size(); i++) {
        if (lengths[i] == repeat)
            continue;
        const std::uint64_t pointer = raw[i].pointer;
        if (item_pointer_codec::is_immediate(pointer)) {
            h.items.push_back(immediate_item(h, pointer, next_immediate++));
            continue;
        }
        if (lengths[i] == bad_address) {
            stats[recv_stat::items_bad_address]++;
            continue;
        }
        if (codec.id(pointer) == item_id::null)
            continue; // padding marker: only its address mattered
        item it;
        it.id = codec.id(pointer);
        it.data = h.buffer.get() + codec.value(pointer);
        it.length = std::size_t(lengths[i]);
        h.items.push_back(it);
    }
}

} // namespace

void freeze(heap_storage& h, recv_stats& stats)
{
    h.items.clear();
    h.immediates.clear();
    if (h.raw_pointers.empty())
        return;
    const std::uint64_t size = h.has_heap_size ? h.heap_size : h.extent;
    h.items.reserve(h.raw_pointers.size());
    std::size_t n_immediates = 0;
    if (needs_no_sorting(h, n_immediates)) {
        items_in_wire_order(h, size, n_immediates, stats);
    } else {
        lengths_by_sorting(h, size);
        items_from_lengths(h, stats);
    }
}


void zero_fill_gaps(heap_storage& h)
{
    const std::uint64_t size = h.has_heap_size ? h.heap_size : h.extent;
    h.reserve_payload(size, h.extent);
    std::uint64_t pos = 0;
    for (const interval_set::range& r : h.received_ranges.ranges()) {
        if (r.begin > pos)
            std::memset(h.buffer.get() + pos, 0, r.begin - pos);
        pos = r.end;
    }
    if (size > pos)
        std::memset(h.buffer.get() + pos, 0, size - pos);
}

} // namespace detail
} // namespace recv
} // namespace spead
} // namespace gr
