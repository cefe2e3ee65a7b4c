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
SPEAD_API frame next_frame(const std::uint8_t* data,
                           std::size_t size,
                           std::size_t max_packet_size);

} // namespace spead
} // namespace gr

#endif
