/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Freezing a heap: its raw item pointers become the items a consumer reads (each
// addressed item's length, repeats dropped, immediates right-aligned), once, as the
// heap leaves the assembler.

#include "endian.h"
#include "heap_assembler.h"
#include "item_pointer.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>

namespace gr {
namespace spead {
namespace recv {

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

bool heap_assembler::addresses_fit(const detail::heap_storage& h)
{
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    const std::uint64_t size = h.has_heap_size ? h.heap_size : h.extent;
    for (const auto& r : h.raw_pointers)
        if (!item_pointer_codec::is_immediate(r.pointer) && codec.value(r.pointer) > size)
            return false;
    return true;
}

bool heap_assembler::lengths_in_wire_order(detail::heap_storage& h, std::uint64_t size)
{
    // The usual shape (one packet, or packets in offset order, carrying the addressed
    // items in address order and no pointer twice) needs no sort: each addressed item
    // runs to the next one in wire order. Anything else is left to the sorting pass.
    auto& raw = h.raw_pointers;
    const std::size_t n = raw.size();
    if (!h.pointers_in_order || n > max_unsorted_pointers)
        return false;
    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    auto& lengths = h.item_lengths;
    lengths.resize(n);
    std::size_t previous = n; // the last addressed pointer so far
    for (std::size_t i = 0; i < n; i++) {
        const std::uint64_t pointer = raw[i].pointer;
        lengths[i] = 0;
        if (item_pointer_codec::is_immediate(pointer)) {
            // Addressed pointers in strictly increasing order cannot repeat, and an
            // immediate never equals an addressed one: only immediates need a look.
            for (std::size_t j = 0; j < i; j++)
                if (raw[j].pointer == pointer)
                    return false;
            continue;
        }
        const std::uint64_t address = codec.value(pointer);
        if (previous != n) {
            const std::uint64_t before = codec.value(raw[previous].pointer);
            if (address <= before)
                return false;
            lengths[previous] = length_to(before, address, size);
        }
        previous = i;
    }
    if (previous != n) {
        const std::uint64_t last = codec.value(raw[previous].pointer);
        lengths[previous] = length_to(last, size, size);
    }
    return true;
}

void heap_assembler::lengths_by_sorting(detail::heap_storage& h, std::uint64_t size)
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

void heap_assembler::freeze(detail::heap_storage& h)
{
    auto& raw = h.raw_pointers;
    const std::size_t n = raw.size();
    h.items.clear();
    h.immediates.clear();
    if (n == 0)
        return;
    const std::uint64_t size = h.has_heap_size ? h.heap_size : h.extent;
    if (!lengths_in_wire_order(h, size))
        lengths_by_sorting(h, size);
    const auto& lengths = h.item_lengths;

    const item_pointer_codec codec(h.heap_flavour.heap_address_bits());
    std::size_t n_immediates = 0;
    for (const auto& r : raw)
        n_immediates += item_pointer_codec::is_immediate(r.pointer);
    h.immediates.resize(n_immediates); // never resized again: item data points into it
    h.items.reserve(n);
    const int width = h.heap_flavour.heap_address_bytes();
    std::size_t next_immediate = 0;
    for (std::size_t i = 0; i < n; i++) {
        if (lengths[i] == repeat)
            continue;
        const std::uint64_t pointer = raw[i].pointer;
        const std::uint64_t id = codec.id(pointer);
        const std::uint64_t value = codec.value(pointer);
        item it;
        it.id = id;
        if (item_pointer_codec::is_immediate(pointer)) {
            auto& bytes = h.immediates[next_immediate++];
            store_be64(bytes.data(), value);
            it.is_immediate = true;
            it.data = bytes.data() + (8 - width);
            it.length = std::size_t(width);
            it.immediate_value = value;
        } else {
            if (lengths[i] == bad_address) {
                d_stats[recv_stat::items_bad_address]++;
                continue;
            }
            if (id == item_id::null)
                continue; // padding marker: only its address mattered
            it.data = h.buffer.get() + value;
            it.length = std::size_t(lengths[i]);
        }
        h.items.push_back(it);
    }
}

} // namespace recv
} // namespace spead
} // namespace gr
