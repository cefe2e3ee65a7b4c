/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "frame_decoder.h"
#include "packet_decoder.h"

namespace gr {
namespace spead {

frame next_frame(const std::uint8_t* data, std::size_t size, std::size_t max_packet_size)
{
    constexpr std::size_t header_size = 8;
    constexpr std::uint64_t payload_length_id = 4;
    if (size < header_size)
        return { frame_status::need_more, 0 };
    if (!is_spead_header(data, size))
        return { frame_status::garbage, 0 };
    const std::uint64_t header = load_be64(data);
    const unsigned address_bytes = (header >> 32) & 0xff;
    const std::size_t n_pointers = header & 0xffff;
    const std::size_t pointers_end = header_size + 8 * n_pointers;
    if (pointers_end > max_packet_size)
        return { frame_status::too_large, pointers_end }; // at least this long
    if (size < pointers_end)
        return { frame_status::need_more, 0 };

    const unsigned shift = address_bytes * 8;
    const std::uint64_t immediate_bit = std::uint64_t(1) << (63 - shift);
    const std::uint64_t address_mask = (std::uint64_t(1) << shift) - 1;
    const std::uint64_t wanted = (immediate_bit | payload_length_id) << shift;
    // The first PAYLOAD_LENGTH immediate counts, as in spead2 (a packet with two is
    // then rejected whole by the packet decoder).
    for (std::size_t i = 0; i < n_pointers; i++) {
        const std::uint64_t pointer = load_be64(data + header_size + 8 * i);
        if ((pointer & ~address_mask) == wanted) {
            const std::uint64_t payload_length = pointer & address_mask;
            // address_mask < 2^56, so this cannot overflow
            const std::uint64_t total = pointers_end + payload_length;
            if (total > max_packet_size)
                return { frame_status::too_large, std::size_t(total) };
            if (size < total)
                return { frame_status::need_more, 0 };
            return { frame_status::packet, std::size_t(total) };
        }
    }
    return { frame_status::garbage, 0 };
}

} // namespace spead
} // namespace gr
