/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_PACKET_DECODER_H
#define INCLUDED_SPEAD_PROTOCOL_PACKET_DECODER_H

#include "endian.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/stats.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {

/*! A SPEAD packet's header fields, pointing into the datagram (nothing is copied). */
struct SPEAD_API packet_header {
    const std::uint8_t* pointers = nullptr; //!< n_pointers big-endian item pointers
    const std::uint8_t* payload = nullptr;
    std::uint64_t heap_cnt = 0;
    std::uint64_t heap_size = 0; //!< valid when has_heap_size
    std::uint64_t payload_offset = 0;
    std::uint64_t payload_length = 0;
    std::uint32_t n_pointers = 0;      //!< all item pointers, specials included
    std::uint32_t n_item_pointers = 0; //!< pointers other than the four specials
    /*! No special among the pointers from here on: 4 when the four specials come
     * first (as most senders put them), else 0. */
    std::uint32_t first_item_pointer = 0;
    std::uint8_t heap_address_bits = 0;
    bool has_heap_size = false;
};

/*! Outcome of decoding; each rejection has its own counter. */
enum class decode_result : std::uint8_t {
    ok,
    truncated,     //!< shorter than header, item pointers or payload
    size_mismatch, //!< longer than 8 + 8n + payload length
    bad_header,    //!< magic, version or widths
    bad_specials,  //!< heap cnt / offset / length missing, repeated or addressed
    bad_offset,    //!< offset + length beyond heap size
};

/*! Counter that a rejection increments. */
SPEAD_API recv_stat stat_for(decode_result r);

/*!
 * \brief Validates one UDP payload as a SPEAD packet of any SPEAD-64-XX flavour.
 *
 * Checks magic 0x53, version 4, widths (id bytes + address bytes == 8, address
 * bytes 1..7), item pointers inside the datagram, the required specials (HEAP_CNT,
 * HEAP_OFFSET, PAYLOAD_LENGTH as immediates; HEAP_SIZE optional), that
 * 8 + 8n + payload_length equals the datagram length, and that
 * offset + length <= heap size when the heap size is known.
 */

/*!
 * decode_packet() after the header's magic, version and widths were checked. With
 * FixedAddressBytes non-zero the flavour is a compile-time constant, so every shift and
 * mask below is one too; 0 reads the address width from the header.
 */
template <unsigned FixedAddressBytes>
[[gnu::always_inline]] inline decode_result decode_checked_header(
    const std::uint8_t* data, std::size_t size, std::uint64_t header, packet_header& out)
{
    constexpr std::size_t header_size = 8;
    const unsigned address_bytes =
        FixedAddressBytes != 0 ? FixedAddressBytes : unsigned(header >> 32) & 0xff;
    const std::size_t n_pointers = header & 0xffff;
    // n_pointers <= 65535, so this cannot overflow
    const std::size_t pointers_end = header_size + 8 * n_pointers;
    if (size < pointers_end)
        return decode_result::truncated;

    // Per pointer, the bits above the address are the immediate flag and the id.
    const unsigned shift = address_bytes * 8;
    const std::uint64_t immediate_bit = std::uint64_t(1) << (63 - shift);
    const std::uint64_t address_mask = (std::uint64_t(1) << shift) - 1;
    const std::uint8_t* pointers = data + header_size;
    // Checks the packet's sizes and fills \p out, from the specials found.
    const auto finish = [&](bool has_heap_size,
                            std::uint64_t heap_cnt,
                            std::uint64_t heap_size,
                            std::uint64_t payload_offset,
                            std::uint64_t payload_length,
                            unsigned n_specials,
                            std::uint32_t first_item_pointer) {
        const std::size_t payload_room = size - pointers_end;
        if (payload_length > payload_room)
            return decode_result::truncated;
        if (payload_length < payload_room)
            return decode_result::size_mismatch;
        // values are below 2^56, so the sum cannot overflow
        if (has_heap_size && payload_offset + payload_length > heap_size)
            return decode_result::bad_offset;
        out.heap_cnt = heap_cnt;
        out.heap_size = heap_size;
        out.has_heap_size = has_heap_size;
        out.payload_offset = payload_offset;
        out.payload_length = payload_length;
        out.pointers = pointers;
        out.payload = data + pointers_end;
        out.n_pointers = std::uint32_t(n_pointers);
        out.n_item_pointers = std::uint32_t(n_pointers - n_specials);
        out.first_item_pointer = first_item_pointer;
        out.heap_address_bits = std::uint8_t(shift);
        return decode_result::ok;
    };

    // HEAP_CNT, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH; bit k of seen: id k + 1 found
    std::uint64_t special[4] = { 0, 0, 0, 0 };
    unsigned seen = 0;
    std::size_t first_unchecked = 0;

    // Fast path: spead2 and most senders put the four specials first, in id order, as
    // immediates; one test of the bits above the addresses checks all four.
    if (n_pointers >= 4) {
        std::uint64_t value[4];
        std::uint64_t wrong = 0;
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; k++) {
            const std::uint64_t pointer = load_be64(pointers + 8 * k);
            value[k] = pointer & address_mask;
            wrong |= (pointer & ~address_mask) ^ ((immediate_bit | (k + 1)) << shift);
        }
        if (wrong == 0) {
            if (n_pointers == 4) // every packet of a heap but its first, usually
                return finish(true, value[0], value[1], value[2], value[3], 4, 4);
            seen = 0b1111;
            first_unchecked = 4;
            std::copy(value, value + 4, special);
        }
    }
    // The rest (or all, off the fast path): find specials, reject repeats and addressed
    // ones. The specials' index is id - 1, found with one subtraction and one compare.
    for (std::size_t i = first_unchecked; i < n_pointers; i++) {
        const std::uint64_t pointer = load_be64(pointers + 8 * i);
        const std::uint64_t top = pointer >> shift;
        const std::uint64_t index = (top & (immediate_bit - 1)) - item_id::heap_cnt;
        if (index >= 4)
            continue; // not a per-packet special
        const unsigned bit = 1u << index;
        if ((seen & bit) || !(top & immediate_bit))
            return decode_result::bad_specials;
        seen |= bit;
        special[index] = pointer & address_mask;
    }
    constexpr unsigned required = 0b1101; // HEAP_CNT, HEAP_OFFSET, PAYLOAD_LENGTH
    if ((seen & required) != required)
        return decode_result::bad_specials;
    constexpr std::uint8_t bit_count[16] = { 0, 1, 1, 2, 1, 2, 2, 3,
                                             1, 2, 2, 3, 2, 3, 3, 4 };
    // without HEAP_SIZE, special[1] stays 0
    return finish(seen & 0b0010,
                  special[0],
                  special[1],
                  special[2],
                  special[3],
                  bit_count[seen],
                  std::uint32_t(first_unchecked));
}

/*!
 * True if \p data starts with a SPEAD header (magic, version, and item pointer and
 * address widths that add up to 8 bytes): what a peer that is a SPEAD sender at all
 * sends. Whether the packet is whole and well formed is decode_packet()'s to say.
 * is_spead_header_word() checks a header already read (big-endian, as load_be64()).
 */
constexpr bool is_spead_header_word(std::uint64_t header)
{
    const unsigned id_bytes = unsigned(header >> 40) & 0xff;
    const unsigned address_bytes = unsigned(header >> 32) & 0xff;
    return (header >> 48) == 0x5304 && address_bytes >= 1 && address_bytes <= 7 &&
           id_bytes + address_bytes == 8;
}

inline bool is_spead_header(const std::uint8_t* data, std::size_t size)
{
    return size >= 8 && is_spead_header_word(load_be64(data));
}

// Defined in the header and always inlined: it runs for every packet, and inlined into
// the assembler its result never goes through memory.
[[gnu::always_inline]] inline decode_result
decode_packet(const std::uint8_t* data, std::size_t size, packet_header& out)
{
    constexpr std::size_t header_size = 8;
    if (size < header_size)
        return decode_result::truncated;
    const std::uint64_t header = load_be64(data);
    // The flavours nearly every sender uses (magic, version 4, id and address widths in
    // one compare) get a copy with constant shifts and masks.
    switch (header >> 32) {
    case 0x53040305: // SPEAD-64-40
        return decode_checked_header<5>(data, size, header, out);
    case 0x53040206: // SPEAD-64-48
        return decode_checked_header<6>(data, size, header, out);
    default:
        break;
    }
    // The word already read is checked, not the memory again: a remote writer (an
    // rdma peer's ring) could change the widths in between.
    if (!is_spead_header_word(header))
        return decode_result::bad_header;
    return decode_checked_header<0>(data, size, header, out);
}

} // namespace spead
} // namespace gr

#endif
