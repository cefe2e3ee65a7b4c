/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "item_pointer.h"
#include "packet_decoder.h"
#include <gnuradio/spead/item_ids.h>

namespace gr {
namespace spead {

recv_stat stat_for(decode_result r)
{
    switch (r) {
    case decode_result::truncated:
        return recv_stat::packets_truncated;
    case decode_result::size_mismatch:
        return recv_stat::packets_size_mismatch;
    case decode_result::bad_header:
        return recv_stat::packets_bad_header;
    case decode_result::bad_specials:
        return recv_stat::packets_bad_specials;
    case decode_result::bad_offset:
        return recv_stat::packets_bad_offset;
    case decode_result::ok:
        break;
    }
    return recv_stat::packets;
}

decode_result
decode_packet(const std::uint8_t* data, std::size_t size, packet_header& out)
{
    constexpr std::size_t header_size = 8;
    if (size < header_size)
        return decode_result::truncated;
    const std::uint64_t header = load_be64(data);
    if ((header >> 48) != 0x5304) // magic 'S', version 4
        return decode_result::bad_header;
    const unsigned id_bytes = (header >> 40) & 0xff;
    const unsigned address_bytes = (header >> 32) & 0xff;
    if (address_bytes < 1 || address_bytes > 7 || id_bytes + address_bytes != 8)
        return decode_result::bad_header;
    const std::size_t n_pointers = header & 0xffff;
    // n_pointers <= 65535, so this cannot overflow
    const std::size_t pointers_end = header_size + 8 * n_pointers;
    if (size < pointers_end)
        return decode_result::truncated;

    const item_pointer_codec codec(int(address_bytes * 8));
    const std::uint8_t* pointers = data + header_size;
    unsigned seen = 0; // bit per special id
    for (std::size_t i = 0; i < n_pointers; i++) {
        const std::uint64_t pointer = load_be64(pointers + 8 * i);
        const std::uint64_t id = codec.id(pointer);
        if (!item_id::is_packet_special(id))
            continue;
        const unsigned bit = 1u << id;
        if ((seen & bit) || !item_pointer_codec::is_immediate(pointer))
            return decode_result::bad_specials;
        seen |= bit;
        const std::uint64_t value = codec.value(pointer);
        switch (id) {
        case item_id::heap_cnt:
            out.heap_cnt = value;
            break;
        case item_id::heap_size:
            out.heap_size = value;
            break;
        case item_id::heap_offset:
            out.payload_offset = value;
            break;
        default: // item_id::payload_length
            out.payload_length = value;
            break;
        }
    }
    constexpr unsigned required = (1u << item_id::heap_cnt) |
                                  (1u << item_id::heap_offset) |
                                  (1u << item_id::payload_length);
    if ((seen & required) != required)
        return decode_result::bad_specials;
    out.has_heap_size = seen & (1u << item_id::heap_size);
    if (!out.has_heap_size)
        out.heap_size = 0;

    const std::size_t payload_room = size - pointers_end;
    if (out.payload_length > payload_room)
        return decode_result::truncated;
    if (out.payload_length < payload_room)
        return decode_result::size_mismatch;
    // values are below 2^56, so the sum cannot overflow
    if (out.has_heap_size && out.payload_offset + out.payload_length > out.heap_size)
        return decode_result::bad_offset;

    out.pointers = pointers;
    out.payload = data + pointers_end;
    out.n_pointers = std::uint32_t(n_pointers);
    out.n_item_pointers =
        std::uint32_t(n_pointers) - std::uint32_t(__builtin_popcount(seen));
    out.heap_address_bits = std::uint8_t(address_bytes * 8);
    return decode_result::ok;
}

} // namespace spead
} // namespace gr
