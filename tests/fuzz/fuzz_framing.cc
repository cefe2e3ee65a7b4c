/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// libFuzzer target over the SPEAD-over-TCP framing decoder (next_frame): the input is a
// connection's byte stream. Invariants: a frame never exceeds max_packet_size nor the
// bytes given, every prefix of a packet asks for more, and a frame the packet decoder
// accepts has exactly the decoder's length.

#include "protocol/frame_decoder.h"
#include "protocol/packet_decoder.h"
#include <cstdlib>

using namespace gr::spead;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    constexpr std::size_t max_packet_size = 4096;
    std::size_t pos = 0;
    while (pos < size) {
        const frame f = next_frame(data + pos, size - pos, max_packet_size);
        if (f.status != frame_status::packet)
            break;
        if (f.size < 8 || f.size > max_packet_size || f.size > size - pos)
            std::abort();
        // Every shorter prefix of a packet is incomplete, never another verdict.
        const std::size_t cut = f.size / 2;
        if (next_frame(data + pos, cut, max_packet_size).status !=
            frame_status::need_more)
            std::abort();
        packet_header h;
        if (decode_packet(data + pos, f.size, h) == decode_result::ok &&
            8 + 8 * std::size_t(h.n_pointers) + h.payload_length != f.size)
            std::abort();
        pos += f.size;
    }
    return 0;
}
