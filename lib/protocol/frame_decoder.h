/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_FRAME_DECODER_H
#define INCLUDED_SPEAD_PROTOCOL_FRAME_DECODER_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {

/*! What the bytes at the front of a connection's buffer hold. */
enum class frame_status : std::uint8_t {
    packet,    //!< a whole packet of frame::size bytes
    need_more, //!< the start of a packet: read more bytes
    garbage,   //!< not a SPEAD header, or no PAYLOAD_LENGTH: the framing is lost
    too_large, //!< a packet longer than the limit (frame::size, when known)
};

struct frame {
    frame_status status;
    std::size_t size; //!< packet: its length; too_large: its length or a lower bound
};

/*!
 * \brief Finds SPEAD packet boundaries in a byte stream, as spead2 frames SPEAD over
 * TCP: packets back to back, no length prefix; each packet's length is 8 + 8 × items +
 * its PAYLOAD_LENGTH immediate.
 *
 * Only the header and item pointers are read (packet_decoder validates the rest once
 * the packet is whole), and nothing beyond \p size. Limits: \p max_packet_size bounds
 * what a peer can make the reader buffer, checked as soon as the item count is known
 * and again once PAYLOAD_LENGTH is.
 */
/*!
 * True if \p data starts with a SPEAD header (magic, version, and item pointer and
 * address widths that add up to 8 bytes): what a peer that is a SPEAD sender at all
 * sends. Whether the packet is whole and well formed is the packet decoder's to say.
 */
inline bool is_spead_header(const std::uint8_t* data, std::size_t size)
{
    if (size < 8)
        return false;
    const unsigned id_bytes = data[2];
    const unsigned address_bytes = data[3];
    return data[0] == 0x53 && data[1] == 0x04 && address_bytes >= 1 &&
           address_bytes <= 7 && id_bytes + address_bytes == 8;
}

SPEAD_API frame next_frame(const std::uint8_t* data,
                           std::size_t size,
                           std::size_t max_packet_size);

} // namespace spead
} // namespace gr

#endif
