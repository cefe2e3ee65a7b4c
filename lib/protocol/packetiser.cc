/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "item_pointer.h"
#include "packetiser.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace send {

namespace {
/* Payload bytes that a packet full of item pointers still carries. One byte would
 * make payload offsets unique; eight keep the payload of later packets aligned. */
constexpr std::size_t min_payload_per_packet = 8;

/* Appends a piece by storing its fields in place. Pushing a packet_piece temporary
 * makes GCC store it as two 8-byte words and reload it as one 16-byte word, which
 * cannot be store-forwarded: a stall on every piece of every packet. */
inline void append_piece(std::vector<packet_piece>& pieces,
                         const std::uint8_t* data,
                         std::size_t length)
{
    packet_piece& piece = pieces.emplace_back();
    piece.data = data;
    piece.length = length;
}
} // namespace

packet_generator::packet_generator(const heap& h,
                                   std::uint64_t cnt,
                                   std::size_t max_packet_size)
    : d_heap(h),
      d_cnt(cnt),
      d_max_packet_size(max_packet_size & ~std::size_t(7)),
      d_max_immediate(std::size_t(h.get_flavour().heap_address_bytes())),
      d_max_pointers_per_packet(0)
{
    const flavour& f = h.get_flavour();
    if (d_max_packet_size < prefix_size + item_pointer_size + min_payload_per_packet)
        throw std::invalid_argument(
            "packet_generator: packet size " + std::to_string(max_packet_size) +
            " is too small for a SPEAD packet; use at least " +
            std::to_string(prefix_size + item_pointer_size + min_payload_per_packet) +
            " bytes (1472 for a 1500-byte MTU)");
    if (cnt > f.max_address())
        throw std::invalid_argument(
            "packet_generator: heap cnt " + std::to_string(cnt) + " does not fit the " +
            std::to_string(f.heap_address_bits()) + "-bit immediate field of " +
            f.name() + "; restart the cnt sequence or use a wider flavour");

    const std::vector<heap::item>& items = h.items();
    for (const heap::item& it : items)
        if (!use_immediate(it))
            d_payload_size += it.length;

    d_max_pointers_per_packet =
        (d_max_packet_size - (prefix_size + min_payload_per_packet)) / item_pointer_size;
    /* Packets needed for the item pointers, counting one more pointer for a NULL item
     * should padding be needed. Every packet carries payload (so that receivers can
     * order packets and detect loss): each packet but the last carries 8 bytes while
     * pointers fill it, the last at least one. */
    const std::size_t item_packets = items.size() / d_max_pointers_per_packet + 1;
    const std::uint64_t min_payload_size =
        std::uint64_t(item_packets - 1) * item_pointer_size + 1;
    if (d_payload_size < min_payload_size) {
        d_payload_size = min_payload_size;
        d_need_null_item = true;
    }
    if (h.get_repeat_immediates()) {
        for (const heap::item& it : items)
            if (use_immediate(it))
                d_repeated_pointers++;
        const std::size_t all_pointers = items.size() + (d_need_null_item ? 1 : 0);
        if (all_pointers > d_max_pointers_per_packet)
            throw std::invalid_argument(
                "packet_generator: the heap's " + std::to_string(all_pointers) +
                " item pointers do not fit one packet of " +
                std::to_string(d_max_packet_size) +
                " bytes, which repeated immediates need; send fewer items or use "
                "larger packets");
    }
    if (d_payload_size > f.max_address())
        throw std::invalid_argument(
            "packet_generator: heap payload of " + std::to_string(d_payload_size) +
            " bytes is more than " + f.name() +
            " can address; split the heap or use a wider flavour");
}

bool packet_generator::use_immediate(const heap::item& it) const
{
    return it.is_inline || (it.allow_immediate && it.length <= d_max_immediate);
}

std::uint64_t packet_generator::immediate_value(const heap::item& it)
{
    // A value given as bytes is right-aligned in the immediate field.
    return it.is_inline ? it.inline_value : load_be_bytes(it.data, int(it.length));
}

void packet_generator::put_repeated_immediates(std::uint8_t*& pointer) const
{
    const item_pointer_codec codec(d_heap.get_flavour().heap_address_bits());
    for (const heap::item& it : d_heap.items()) {
        if (!use_immediate(it))
            continue;
        store_be64(pointer, codec.encode_immediate(it.id, immediate_value(it)));
        pointer += item_pointer_size;
    }
}

std::size_t packet_generator::next(std::uint8_t* header_buf,
                                   std::vector<packet_piece>& pieces)
{
    if (!has_next())
        return 0;

    const std::vector<heap::item>& items = d_heap.items();
    const std::size_t total_pointers = items.size() + (d_need_null_item ? 1 : 0);
    const std::size_t n_pointers =
        std::min(d_max_pointers_per_packet, total_pointers - d_next_pointer);
    // The first packet carries every pointer (they all fit when repeating).
    const std::size_t n_repeated = d_payload_offset > 0 ? d_repeated_pointers : 0;
    const std::size_t header_size =
        prefix_size + (n_pointers + n_repeated) * item_pointer_size;
    std::size_t payload_length = std::size_t(std::min<std::uint64_t>(
        d_payload_size - d_payload_offset, d_max_packet_size - header_size));

    const flavour& f = d_heap.get_flavour();
    const int address_bytes = f.heap_address_bytes();
    const item_pointer_codec codec(f.heap_address_bits());

    write_packet_header(header_buf, address_bytes, n_pointers + n_repeated + 4);
    std::uint8_t* pointer = header_buf + packet_header_size;
    auto put = [&pointer](std::uint64_t value) {
        store_be64(pointer, value);
        pointer += item_pointer_size;
    };
    put(codec.encode_immediate(item_id::heap_cnt, d_cnt));
    put(codec.encode_immediate(item_id::heap_size, d_payload_size));
    put(codec.encode_immediate(item_id::heap_offset, d_payload_offset));
    put(codec.encode_immediate(item_id::payload_length, payload_length));

    for (std::size_t i = 0; i < n_pointers; i++, d_next_pointer++) {
        if (d_next_pointer == items.size()) {
            // Marks where the real payload ends and the padding starts.
            put(codec.encode_address(item_id::null, d_next_address));
            continue;
        }
        const heap::item& it = items[d_next_pointer];
        if (use_immediate(it)) {
            put(codec.encode_immediate(it.id, immediate_value(it)));
        } else {
            put(codec.encode_address(it.id, d_next_address));
            d_next_address += it.length;
        }
    }
    if (n_repeated > 0)
        put_repeated_immediates(pointer);
    append_piece(pieces, header_buf, header_size);

    d_payload_offset += payload_length;
    const std::size_t packet_size = header_size + payload_length;
    while (payload_length > 0) {
        if (d_next_item == items.size()) {
            /* Padding: zeros from the header buffer, just past the pointers (the
             * buffer holds max_packet_size bytes, and padding never exceeds 8). */
            std::memset(pointer, 0, payload_length);
            append_piece(pieces, pointer, payload_length);
            break;
        }
        const heap::item& it = items[d_next_item];
        if (use_immediate(it)) {
            d_next_item++;
            d_next_item_offset = 0;
            continue;
        }
        const std::size_t send_bytes =
            std::min(it.length - d_next_item_offset, payload_length);
        // Zero-length items add no piece; they only advance to the next item.
        if (send_bytes > 0)
            append_piece(pieces, it.data + d_next_item_offset, send_bytes);
        d_next_item_offset += send_bytes;
        payload_length -= send_bytes;
        if (d_next_item_offset == it.length) {
            d_next_item++;
            d_next_item_offset = 0;
        }
    }
    return packet_size;
}

} // namespace send
} // namespace spead
} // namespace gr
