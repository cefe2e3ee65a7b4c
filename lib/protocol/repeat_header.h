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
 * PAYLOAD_LENGTH change. learn() takes that layout from a decoded packet; match() then
 * recognises a datagram with it from its first 40 bytes. A datagram matches only if
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
        d_address_mask = codec.address_mask();
        d_heap_size = packet.heap_size;
        d_known = true;
        return true;
    }

    void forget() { d_known = false; }

    /*!
     * Whether \p data is a packet of the learnt heap, in the learnt layout, with a
     * payload, that decode_packet() would accept; if so, its payload range
     * [begin, begin + length) (the payload follows the header_bytes of header).
     */
    [[gnu::always_inline]] bool match(const std::uint8_t* data,
                                      std::size_t size,
                                      std::uint64_t& begin,
                                      std::uint64_t& length) const
    {
        if (!d_known || size <= header_bytes) // none, or no payload
            return false;
        std::uint64_t raw[3];
        std::memcpy(raw, data, sizeof(raw));
        const std::uint64_t offset_pointer = load_be64(data + 24);
        const std::uint64_t length_pointer = load_be64(data + 32);
        if (((raw[0] ^ d_raw[0]) | (raw[1] ^ d_raw[1]) | (raw[2] ^ d_raw[2]) |
             ((offset_pointer & ~d_address_mask) ^ d_offset_id) |
             ((length_pointer & ~d_address_mask) ^ d_length_id)) != 0)
            return false;
        begin = offset_pointer & d_address_mask;
        length = length_pointer & d_address_mask;
        // The decoder's size checks: the datagram is header + payload exactly, and the
        // payload lies inside the heap. Both values are below 2^56: no overflow.
        return size - header_bytes == length && begin + length <= d_heap_size;
    }

private:
    bool d_known = false;
    std::uint64_t d_raw[3] = {};   //!< the first 24 bytes, as loaded natively
    std::uint64_t d_offset_id = 0; //!< HEAP_OFFSET pointer above its address
    std::uint64_t d_length_id = 0; //!< PAYLOAD_LENGTH pointer above its address
    std::uint64_t d_address_mask = 0;
    std::uint64_t d_heap_size = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_REPEAT_HEADER_H */
