/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_REPEAT_HEADER_H
#define INCLUDED_SPEAD_PROTOCOL_REPEAT_HEADER_H

#include "endian.h"
#include "item_pointer.h"
#include "packet_decoder.h"
#include <gnuradio/spead/item_ids.h>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gr {
namespace spead {

/*!
 * \brief The header a heap's packets repeat, for recognising them without decoding.
 *
 * Every packet of a large heap but the first, from spead2 and most senders, carries
 * only the four specials, in id order, as immediates: its first 24 bytes (SPEAD header,
 * HEAP_CNT, HEAP_SIZE) are those of the packet before it, and only HEAP_OFFSET and
 * PAYLOAD_LENGTH change. learn() takes that layout from a decoded packet; match_next()
 * then recognises a datagram with it from its first 40 bytes. A datagram matches only if
 * decode_packet() would accept it with the same fields (the header bytes compared were
 * checked when learnt; the sizes are checked here), so an assembler may place a match
 * as it would the decoded packet, and leaves everything else to the decoder.
 */
class repeat_header
{
public:
    static constexpr std::size_t header_bytes = 8 + 4 * 8;

    /*! Takes \p packet's header as the one to recognise if it has the layout above
     * and a heap size; otherwise forgets. \return whether it learnt. */
    bool learn(const packet_header& packet)
    {
        d_known = false;
        if (packet.n_pointers != 4 || !packet.has_heap_size)
            return false;
        const item_pointer_codec codec(packet.heap_address_bits);
        const std::uint8_t* p = packet.pointers;
        if (load_be64(p) != codec.encode_immediate(item_id::heap_cnt, packet.heap_cnt) ||
            load_be64(p + 8) !=
                codec.encode_immediate(item_id::heap_size, packet.heap_size) ||
            load_be64(p + 16) !=
                codec.encode_immediate(item_id::heap_offset, packet.payload_offset) ||
            load_be64(p + 24) !=
                codec.encode_immediate(item_id::payload_length, packet.payload_length))
            return false;
        std::memcpy(d_raw, p - 8, sizeof(d_raw));
        d_offset_id = codec.encode_immediate(item_id::heap_offset, 0);
        d_length_id = codec.encode_immediate(item_id::payload_length, 0);
        d_heap_size = packet.heap_size;
        d_known = true;
        return true;
    }

    void forget() { d_known = false; }

    /*!
     * Whether \p data is the learnt heap's piece that begins at \p next_offset, in the
     * learnt layout, with a payload, and that decode_packet() would accept: its payload
     * is then the size - header_bytes bytes after header_bytes of header, for
     * [next_offset, next_offset + size - header_bytes) of the heap.
     *
     * The caller predicts the offset (where the heap's received bytes end) instead of
     * reading it from the packet, so where the payload goes and how long it is come
     * from values it already holds: the copy does not wait for the header to arrive
     * from memory, and the processor starts it while this check is in flight (a miss
     * on each header costs about a sixth of the rate at 1472 B, docs/performance.md).
     */
    [[gnu::always_inline]] bool match_next(const std::uint8_t* data,
                                           std::size_t size,
                                           std::uint64_t next_offset) const
    {
        if (!d_known || size <= header_bytes) // none, or no payload
            return false;
        const std::uint64_t length = size - header_bytes;
        // Word by word: one 24-byte copy went through the stack, and its 8-byte reads
        // of a 16-byte store stalled store forwarding.
        const auto word = [data](std::size_t i) {
            std::uint64_t w;
            std::memcpy(&w, data + 8 * i, sizeof(w));
            return w;
        };
        // The decoder's size checks: the datagram is header + payload exactly, and the
        // payload lies inside the heap. Both values are below 2^56 once the pointers
        // match (a datagram is shorter): no overflow.
        return ((word(0) ^ d_raw[0]) | (word(1) ^ d_raw[1]) | (word(2) ^ d_raw[2]) |
                (load_be64(data + 24) ^ (d_offset_id | next_offset)) |
                (load_be64(data + 32) ^ (d_length_id | length))) == 0 &&
               next_offset + length <= d_heap_size;
    }

private:
    bool d_known = false;
    std::uint64_t d_raw[3] = {};   //!< the first 24 bytes, as loaded natively
    std::uint64_t d_offset_id = 0; //!< HEAP_OFFSET pointer, address 0
    std::uint64_t d_length_id = 0; //!< PAYLOAD_LENGTH pointer, address 0
    std::uint64_t d_heap_size = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_REPEAT_HEADER_H */
