/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_PACKET_DECODER_H
#define INCLUDED_SPEAD_PROTOCOL_PACKET_DECODER_H

#include <gnuradio/spead/stats.h>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {

/*! A SPEAD packet's header fields, pointing into the datagram (nothing is copied). */
struct packet_header {
    const std::uint8_t* pointers = nullptr; //!< n_pointers big-endian item pointers
    const std::uint8_t* payload = nullptr;
    std::uint64_t heap_cnt = 0;
    std::uint64_t heap_size = 0; //!< valid when has_heap_size
    std::uint64_t payload_offset = 0;
    std::uint64_t payload_length = 0;
    std::uint32_t n_pointers = 0;      //!< all item pointers, specials included
    std::uint32_t n_item_pointers = 0; //!< pointers other than the four specials
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
recv_stat stat_for(decode_result r);

/*!
 * \brief Validates one UDP payload as a SPEAD packet of any SPEAD-64-XX flavour.
 *
 * Checks magic 0x53, version 4, widths (id bytes + address bytes == 8, address
 * bytes 1..7), item pointers inside the datagram, the required specials (HEAP_CNT,
 * HEAP_OFFSET, PAYLOAD_LENGTH as immediates; HEAP_SIZE optional), that
 * 8 + 8n + payload_length equals the datagram length, and that
 * offset + length <= heap size when the heap size is known.
 */
decode_result
decode_packet(const std::uint8_t* data, std::size_t size, packet_header& out);

} // namespace spead
} // namespace gr

#endif
