/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_ITEM_IDS_H
#define INCLUDED_SPEAD_ITEM_IDS_H

#include <cstdint>

namespace gr {
namespace spead {

/*! Item ids the SPEAD specification reserves. */
namespace item_id {
constexpr std::uint64_t null = 0x00;      //!< padding; its address ends the previous item
constexpr std::uint64_t heap_cnt = 0x01;  //!< per packet: which heap
constexpr std::uint64_t heap_size = 0x02; //!< per packet: total heap payload bytes
constexpr std::uint64_t heap_offset = 0x03;    //!< per packet: where this payload goes
constexpr std::uint64_t payload_length = 0x04; //!< per packet: payload bytes in packet
constexpr std::uint64_t descriptor = 0x05;     //!< value is a complete descriptor packet
constexpr std::uint64_t stream_ctrl = 0x06;    //!< stream control (see stream_ctrl)
constexpr std::uint64_t descriptor_name = 0x10;
constexpr std::uint64_t descriptor_description = 0x11;
constexpr std::uint64_t descriptor_shape = 0x12;
constexpr std::uint64_t descriptor_format = 0x13;
constexpr std::uint64_t descriptor_id = 0x14;
constexpr std::uint64_t descriptor_dtype = 0x15;

/*! True for the four per-packet items that are not part of a heap's item list. */
constexpr bool is_packet_special(std::uint64_t id)
{
    return id >= heap_cnt && id <= payload_length;
}
} // namespace item_id

/*! Values of the STREAM_CTRL item. */
namespace stream_ctrl {
constexpr std::uint64_t start = 0;
constexpr std::uint64_t descriptor_reissue = 1;
constexpr std::uint64_t stop = 2;
constexpr std::uint64_t descriptor_update = 3;
} // namespace stream_ctrl

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_ITEM_IDS_H */
