/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_PACKETISER_H
#define INCLUDED_SPEAD_PROTOCOL_PACKETISER_H

#include "endian.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_heap.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {
namespace send {

constexpr std::size_t packet_header_size = 8; //!< magic ... number of item pointers
constexpr std::size_t item_pointer_size = 8;

/*! Writes the 8-byte SPEAD packet header at \p out: magic 0x53, version 4, the item id
 * and heap address widths of a flavour with \p address_bytes, and the number of item
 * pointers that follow. */
inline void
write_packet_header(std::uint8_t* out, int address_bytes, std::size_t n_pointers)
{
    out[0] = 0x53; // magic
    out[1] = 0x04; // version
    out[2] = std::uint8_t(8 - address_bytes);
    out[3] = std::uint8_t(address_bytes);
    out[4] = 0;
    out[5] = 0;
    store_be16(out + 6, std::uint16_t(n_pointers));
}

/*! A contiguous piece of a packet: the header in a scratch buffer, or payload that
 * points straight into item memory (which is what allows zero-copy sends). */
struct SPEAD_API packet_piece {
    const std::uint8_t* data;
    std::size_t length;
};

/*!
 * \brief Cuts a heap into SPEAD packets, the way spead2 does, byte for byte:
 * - max_packet_size is rounded down to a multiple of 8;
 * - every packet starts with HEAP_CNT, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH
 *   (HEAP_SIZE always present);
 * - item pointers follow in item order, as many per packet as fit while leaving room
 *   for 8 payload bytes, spanning packets when there are many;
 * - items no wider than the immediate field become immediates (right-aligned);
 * - every packet carries at least one payload byte: when the heap has too little
 *   payload, a NULL item pointer marks its end and zero padding follows;
 * - with heap::set_repeat_immediates(true), every packet after the first carries the
 *   heap's immediate item pointers again (the first carries all pointers), which
 *   requires all pointers to fit one packet. Payload offsets are as without.
 */
class SPEAD_API packet_generator
{
public:
    //! header + the four specials
    static constexpr std::size_t prefix_size = packet_header_size + 4 * item_pointer_size;

    /*! \throws std::invalid_argument if max_packet_size cannot carry the prefix, one item
     * pointer and 8 payload bytes (with repeated immediates: all the item pointers),
     * or a value does not fit the flavour */
    packet_generator(const heap& h, std::uint64_t cnt, std::size_t max_packet_size);

    bool has_next() const { return d_payload_offset < d_payload_size; }

    /*!
     * Produces the next packet: writes header and item pointers into \p header_buf
     * (at least max_packet_size bytes) and appends the pieces (header first) to
     * \p pieces. \return the packet size in bytes.
     */
    std::size_t next(std::uint8_t* header_buf, std::vector<packet_piece>& pieces);

    /*! Heap payload size (HEAP_SIZE on the wire). */
    std::uint64_t payload_size() const { return d_payload_size; }
    /*! Effective packet size (rounded down to 8). */
    std::size_t max_packet_size() const { return d_max_packet_size; }

private:
    bool use_immediate(const heap::item& it) const;
    static std::uint64_t immediate_value(const heap::item& it);
    /*! Writes the repeated immediate pointers of a packet after the first. */
    void put_repeated_immediates(std::uint8_t*& pointer) const;

    const heap& d_heap;
    std::uint64_t d_cnt;
    std::size_t d_max_packet_size;
    std::size_t d_max_immediate;
    std::size_t d_max_pointers_per_packet;
    std::size_t d_repeated_pointers = 0; //!< per packet after the first
    std::uint64_t d_payload_size = 0;
    std::uint64_t d_payload_offset = 0;
    bool d_need_null_item = false;
    std::size_t d_next_pointer = 0;
    std::uint64_t d_next_address = 0;
    std::size_t d_next_item = 0;
    std::size_t d_next_item_offset = 0;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif
